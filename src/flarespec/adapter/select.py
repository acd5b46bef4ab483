"""Choosing the spec for a packet by the specs' ``applies_to`` condition (``--spec`` opens
one through flarespec.spec.open instead)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flarespec.engine.evaluate import Evaluation, Unavailable
from flarespec.engine.report import Violation
from flarespec.spec.compile import CompiledSpec
from flarespec.spec.load import SpecLibrary
from flarespec.spec.open import bundled_compiled, bundled_loadable

UNSUPPORTED = "spec.unsupported"
SPEC_INVALID = "spec.invalid"


@dataclass
class Selection:
    spec: CompiledSpec | None
    violations: list[Violation] = field(default_factory=list)


def bundled_specs(library: SpecLibrary | None = None) -> list[CompiledSpec]:
    """Every bundled spec, compiled once per process (a pair validates two packets)."""
    return bundled_compiled(library)


def is_draft(spec: CompiledSpec) -> bool:
    return spec.resolved.data.get("draft") is True


def selectable_specs() -> tuple[list[CompiledSpec], list]:
    """The bundled specs a packet may be matched against: those that compile and are not
    drafts; and the problems of the bundled files that do not compile (each naming its
    file), which never change the verdict on a packet another spec applies to."""
    specs, problems = bundled_loadable()
    return [spec for spec in specs if not is_draft(spec)], problems


def describe_condition(spec: CompiledSpec) -> str:
    condition = spec.applies_to
    if condition is None:
        # never chosen by select_spec: a spec without applies_to is only used when named
        return f"{spec.id} (selected only with --spec: no applies_to)"
    (kind, arg), = ((k, v) for k, v in condition.source.items() if k != "given")
    return f"{spec.id} ({condition.given} {kind} {arg!r})"


def select_spec(entry: str | Path, specs: list[CompiledSpec], broken=()) -> Selection:
    """The one spec whose ``applies_to`` holds for this entry document (drafts are never
    chosen). ``broken``: issues of bundled files that did not compile, named in the message
    only when no spec applies (one of them may have been meant to)."""
    specs = [spec for spec in specs if not is_draft(spec)]
    if not specs:
        return Selection(None, [Violation(UNSUPPORTED, "error", "no specs are installed")])
    applicable = []
    entry_failure: list[Violation] = []
    for spec in specs:
        if spec.applies_to is None:
            continue
        evaluation = Evaluation(spec, entry, shapes=False)  # a shape is the chosen spec's
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
        if broken:
            files = sorted({str(issue.mark.file) if issue.mark else "?" for issue in broken})
            message += (f"; {len(files)} bundled spec file(s) do not load and were not "
                        f"considered: {', '.join(files)} (flarespec spec lint names why)")
    else:
        message = (f"several specs apply to {Path(entry).name}: "
                   f"{'; '.join(describe_condition(s) for s in applicable)}; their "
                   f"applies_to conditions overlap: make them exclusive (`flarespec spec "
                   f"lint` names overlapping specs), or name one with --spec")
    return Selection(None, [Violation(UNSUPPORTED, "error", message, Path(entry).name, None)])
