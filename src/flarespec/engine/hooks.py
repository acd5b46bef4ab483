"""The hook registry: Python checks and metrics that a spec names but cannot spell in YAML.

A spec names a hook by its registered name, never by a module path. Hook modules are found
through the ``flarespec.hooks`` entry-point group (as pytest finds plugins), imported once,
and register themselves with the decorators below; the engine never imports one by name.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from typing import Callable

from flarespec.engine.kinds import Failure  # noqa: F401  (re-exported for hook modules)


@dataclass(frozen=True)
class Hook:
    name: str
    function: Callable
    role: str  # "check" yields Failures; "metric" returns a MetricResult
    module: str
    doc: str


HOOKS: dict[str, Hook] = {}
_discovered = False


def _register(role: str, name: str):
    def register(function):
        HOOKS[name] = Hook(name, function, role, function.__module__,
                           (function.__doc__ or "").strip())
        return function
    return register


def check_hook(name: str):
    """Register a check: ``fn(ctx, args) -> Iterator[Failure]``."""
    return _register("check", name)


def metric_hook(name: str):
    """Register a metric: ``fn(ctx, samples, args) -> MetricResult``."""
    return _register("metric", name)


@dataclass(frozen=True)
class MetricResult:
    value: float | int
    samples: list  # what the value was computed from, for the receipt
    details: dict


def discover() -> dict[str, Hook]:
    """Import every hook module registered under the ``flarespec.hooks`` entry-point group."""
    global _discovered
    if not _discovered:
        from importlib.metadata import entry_points

        for entry in entry_points(group="flarespec.hooks"):
            entry.load()
        _discovered = True
    return HOOKS


def module_digest(module_name: str) -> str:
    """SHA-256 of a hook module's source file: the receipt binds the code that ran."""
    module = sys.modules[module_name]
    with open(module.__file__, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()
