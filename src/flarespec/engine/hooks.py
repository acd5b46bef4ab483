"""The hook registry: Python checks and metrics that a spec names but cannot spell in YAML.

A spec names a hook by its registered name, never by a module path. Hook modules are found
through the ``flarespec.hooks`` entry-point group (as pytest finds plugins), imported once,
and register themselves with the decorators below; the engine never imports one by name.

Each hook declares its arguments, as each assertion kind does: ``args`` maps an argument
name to its type (``"string"``, ``"integer"``, ``"number"``, ``"boolean"``, ``"list"``,
``"mapping"``, ``"any"``; a trailing ``?`` makes it optional) and ``one_of`` lists groups of
optional arguments of which exactly one group must be given whole. The spec compiler checks
a rule's ``args`` against this, so a misspelt argument is an error at the spec's
file:line:column, not an internal error while a packet is validated.
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
    args: dict | None = None  # argument name -> type name, "?" suffix for optional
    one_of: tuple = ()        # groups of optional arguments: exactly one given whole
    # argument naming keys (a string or a list of them) -> the argument whose value holds
    # them: `spec lint` checks that the spec requires each named key there
    names_in: dict | None = None

    def holds(self, ctx, args) -> bool:
        """A check's verdict: its function yields no first failure (what a pass asks; the
        reporting path lists the failures)."""
        for _ in self.function(ctx, args):
            return False
        return True


# What a declared type accepts; a value read per packet (a reference, a template) is only
# known at run time and is accepted here.
ARG_TYPES = {"any": (object,), "string": (str,), "integer": (int,), "number": (int, float),
             "boolean": (bool,), "list": (list,), "mapping": (dict,)}


HOOKS: dict[str, Hook] = {}
_discovered = False


def _register(role: str, name: str, args: dict | None, one_of: tuple,
              names_in: dict | None = None):
    for type_name in (args or {}).values():
        if type_name.rstrip("?") not in ARG_TYPES:
            raise ValueError(f"hook {name}: unknown argument type {type_name!r}")
    for naming, holder in (names_in or {}).items():
        if naming not in (args or {}) or holder not in (args or {}):
            raise ValueError(f"hook {name}: names_in {naming!r} -> {holder!r} names an "
                             f"undeclared argument")

    def register(function):
        HOOKS[name] = Hook(name, function, role, function.__module__,
                           (function.__doc__ or "").strip(), args, tuple(one_of),
                           dict(names_in) if names_in else None)
        return function
    return register


def check_hook(name: str, args: dict | None = None, one_of: tuple = (),
               names_in: dict | None = None):
    """Register a check: ``fn(ctx, args) -> Iterator[Failure]``, with its argument schema.
    ``names_in`` maps an argument that names keys (``counter``) to the argument whose value
    holds them (``after``): the hook fails when a named key is not there, and ``spec lint``
    reports a name that no rule or shape of the spec requires at that place."""
    return _register("check", name, args, one_of, names_in)


def metric_hook(name: str, args: dict | None = None, one_of: tuple = ()):
    """Register a metric: ``fn(ctx, samples, args) -> MetricResult``, with its argument
    schema."""
    return _register("metric", name, args, one_of)


def argument_problems(hook: Hook, args, is_runtime_value) -> list[tuple[str | None, str]]:
    """(argument name or None, problem) for every way ``args`` misses the hook's schema;
    ``is_runtime_value(v)`` says a value is only known per packet (its type is not checked).
    A hook without a schema accepts anything."""
    if hook.args is None:
        return []
    if not isinstance(args, dict):
        return [(None, f"{hook.name} wants a mapping of arguments")]
    problems: list[tuple[str | None, str]] = []
    declared = {name: type_name.rstrip("?") for name, type_name in hook.args.items()}
    for name in args:
        if name not in declared:
            import difflib  # only for a wrong argument, found while compiling a spec

            close = difflib.get_close_matches(name, list(declared), n=1)
            problems.append((name, f"{hook.name} has no argument {name!r}"
                                   f"{f' (did you mean {close[0]!r}?)' if close else ''}; "
                                   f"arguments: "
                                   f"{', '.join(declared)}"))
        elif not is_runtime_value(args[name]) and not _is_type(args[name], declared[name]):
            problems.append((name, f"{hook.name} argument {name!r} wants a "
                                   f"{declared[name]}, got {type(args[name]).__name__}"))
    missing = [n for n, t in hook.args.items() if not t.endswith("?") and n not in args]
    if missing:
        problems.append((None, f"{hook.name} needs argument {', '.join(missing)}"))
    if hook.one_of:
        whole = [group for group in hook.one_of if all(name in args for name in group)]
        if len(whole) != 1:
            groups = " or ".join("{" + ", ".join(group) + "}" for group in hook.one_of)
            problems.append((None, f"{hook.name} wants exactly one of {groups}"))
    return problems


def _is_type(value, type_name: str) -> bool:
    if type_name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, ARG_TYPES[type_name])


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
