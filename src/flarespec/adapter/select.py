"""Choosing the spec for a packet: by the specs' ``applies_to`` condition, or an explicit file."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from flarespec.engine.evaluate import Evaluation, Unavailable
from flarespec.engine.report import Violation
from flarespec.spec.compile import CompiledSpec, compile_spec
from flarespec.spec.load import SpecLibrary
from flarespec.spec.resolve import resolve

UNSUPPORTED = "spec.unsupported"
SPEC_INVALID = "spec.invalid"


@dataclass
class Selection:
    spec: CompiledSpec | None
    violations: list[Violation] = field(default_factory=list)


_compiled: dict[tuple, CompiledSpec] = {}


def compile_file(path: str | Path) -> CompiledSpec:
    """Compile a spec file (its parents found beside it and among the bundled specs)."""
    # realpath, unlike resolve(), leaves a symlink loop as it is: read_spec_file reports it
    path = Path(os.path.realpath(path))
    key = ("file", str(path), path.stat().st_mtime_ns if path.exists() else 0)
    if key not in _compiled:
        library, spec_file = SpecLibrary.for_file(path)
        _compiled[key] = compile_spec(resolve(spec_file, library))
    return _compiled[key]


_bundled_library: SpecLibrary | None = None


def bundled_specs(library: SpecLibrary | None = None) -> list[CompiledSpec]:
    """Every bundled spec, compiled. The installed specs do not change while a process runs,
    so they are read and compiled once per process (a pair validates two packets)."""
    global _bundled_library
    if library is None:
        _bundled_library = _bundled_library or SpecLibrary()
        library = _bundled_library
    compiled = []
    for spec_file in library.all():
        key = ("bundled", spec_file.id, spec_file.digest)
        if key not in _compiled:
            _compiled[key] = compile_spec(resolve(spec_file, library))
        compiled.append(_compiled[key])
    return compiled


def describe_condition(spec: CompiledSpec) -> str:
    condition = spec.applies_to
    if condition is None:
        return f"{spec.id} (applies to any input)"
    (kind, arg), = ((k, v) for k, v in condition.source.items() if k != "given")
    return f"{spec.id} ({condition.given} {kind} {arg!r})"


def select_spec(entry: str | Path, specs: list[CompiledSpec]) -> Selection:
    """The one spec whose ``applies_to`` holds for this entry document."""
    if not specs:
        return Selection(None, [Violation(UNSUPPORTED, "error", "no specs are installed")])
    applicable = []
    entry_failure: list[Violation] = []
    for spec in specs:
        if spec.applies_to is None:
            continue
        evaluation = Evaluation(spec, entry)
        try:
            if evaluation.holds(spec.applies_to, {}):
                applicable.append(spec)
        except Unavailable:
            entry_failure = entry_failure or evaluation.report.violations
    if len(applicable) == 1:
        return Selection(applicable[0])
    if entry_failure:
        return Selection(None, list(entry_failure))
    supported = "; ".join(describe_condition(s) for s in specs)
    if not applicable:
        message = f"no bundled spec applies to {Path(entry).name}; supported: {supported}"
    else:
        message = (f"several specs apply to {Path(entry).name}: "
                   f"{', '.join(s.id for s in applicable)}; name one with --spec")
    return Selection(None, [Violation(UNSUPPORTED, "error", message, Path(entry).name, None)])
