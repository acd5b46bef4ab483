"""Choosing the spec for an entry file by the specs' ``applies_to`` condition (``--spec``
opens one through flarespec.compiler.open instead).

A spec is tried only for an entry file whose name its entry document's ``file_name``
matches (compiler/entry_name.py; a spec without one is tried for any name), and only when it
has an ``applies_to`` and is not a draft. The one spec whose condition holds is chosen;
none or several is ``spec.unsupported``, whose message names the specs tried with their
conditions, those not tried and why, the drafts that would apply, the spec directories
searched, and the spec files that do not load.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from flarespec.engine.evaluate import Evaluation, Unavailable
from flarespec.engine.outcome import Violation
from flarespec.compiler.compile import CompiledSpec
from flarespec.compiler.entry_name import entry_file_name, name_matches
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.open import bundled_compiled, bundled_loadable

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
    """The bundled specs a packet may be matched against: those that compile (drafts too:
    :func:`select_spec` never chooses one, it names one that would apply); and the
    problems of the bundled files that do not compile (each naming its file), which never
    change the verdict on a packet another spec applies to."""
    return bundled_loadable()


def describe_condition(spec: CompiledSpec) -> str:
    condition = spec.applies_to
    if condition is None:
        # never chosen by select_spec: a spec without applies_to is only used when named
        return f"{spec.id} (selected only with --spec: no applies_to)"
    (kind, arg), = ((k, v) for k, v in condition.source.items() if k != "given")
    return f"{spec.id} ({condition.given} {kind} {arg!r})"


def _tried_for(spec: CompiledSpec, name: str) -> bool:
    return spec.applies_to is not None and \
        name_matches(entry_file_name(spec.resolved.data), name)


def _holding(entry: str | Path, specs: list[CompiledSpec]
             ) -> tuple[list[CompiledSpec], list[Violation]]:
    """The specs whose applies_to holds for the entry, and the entry's own violations
    when it cannot be read (it is then no spec's)."""
    applicable, entry_failure = [], []
    for spec in specs:
        evaluation = Evaluation(spec, entry, shapes=False)  # a shape is the chosen spec's
        try:
            if evaluation.holds(spec.applies_to, {}):
                applicable.append(spec)
        except Unavailable:
            entry_failure = entry_failure or evaluation.outcome.violations
    return applicable, entry_failure


def select_spec(entry: str | Path, specs: list[CompiledSpec], broken=(),
                searched=()) -> Selection:
    """The one spec whose ``applies_to`` holds for this entry file, among the specs tried
    for its name (drafts are never chosen). ``broken``: issues of spec files that did not
    compile, and ``searched``: the spec directories beside the bundled specs, both named in
    the message only when no spec applies (one of them may have been meant to)."""
    name = Path(entry).name
    live = [spec for spec in specs if not is_draft(spec)]
    if not specs:
        return Selection(None, [Violation(UNSUPPORTED, "error", "no specs are installed")])
    tried = [spec for spec in live if _tried_for(spec, name)]
    applicable, entry_failure = _holding(entry, tried)
    if len(applicable) == 1:
        return Selection(applicable[0])
    if entry_failure:
        return Selection(None, list(entry_failure))
    if applicable:
        message = (f"several specs apply to {name}: "
                   f"{'; '.join(describe_condition(s) for s in applicable)}; their "
                   f"applies_to conditions overlap: make them exclusive (`flarespec spec "
                   f"lint` names overlapping specs), or name one with --spec")
    else:
        drafts = [spec for spec in specs if is_draft(spec) and _tried_for(spec, name)]
        message = none_applies(name, live, tried, _holding(entry, drafts)[0], broken,
                               searched)
        if not tried:  # no spec's entry rule read it: say what the file is, if no file
            message += _not_a_file(entry)
    return Selection(None, [Violation(UNSUPPORTED, "error", message, name, None)])


def _not_a_file(entry: str | Path) -> str:
    """``; the entry ...`` when the entry is no regular file (what a spec's entry rule would
    have said, had a spec been tried for its name), else nothing."""
    import stat

    try:
        mode = os.stat(entry).st_mode
    except FileNotFoundError:
        return f"; the entry {entry} does not exist"
    except OSError as problem:
        return f"; the entry {entry} cannot be read ({problem.strerror or problem})"
    if stat.S_ISREG(mode):
        return ""
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISDIR: "a directory", stat.S_ISCHR: "a device",
             stat.S_ISBLK: "a device", stat.S_ISSOCK: "a socket"}
    kind = next((words for test, words in kinds.items() if test(mode)), "not a file")
    return f"; the entry {entry} is not a regular file ({kind})"


def none_applies(name: str, live: list[CompiledSpec], tried: list[CompiledSpec],
                 drafts: list[CompiledSpec], broken, searched) -> str:
    """Why no spec applies to an entry file called ``name``: each spec tried and its
    condition, the others and why they were not tried, drafts that would apply, where
    specs were searched and which files do not load."""
    parts = [f"no spec applies to {name}",
             "tried: " + ("; ".join(describe_condition(s) for s in tried) or
                          f"none (no spec is tried for an entry file named {name})")]
    other_names = [f"{spec.id} ({entry_file_name(spec.resolved.data)})" for spec in live
                   if spec.applies_to is not None and spec not in tried]
    if other_names:
        parts.append("not tried, as they check an entry file of another name: "
                     + "; ".join(other_names))
    unconditional = [spec.id for spec in live if spec.applies_to is None]
    if unconditional:
        parts.append(f"selected only with --spec (no applies_to): {', '.join(unconditional)}")
    parts += [f"spec {spec.id} would apply but is a draft: name it with --spec {spec.id}"
              for spec in drafts]
    parts.append("specs searched: the bundled specs" +
                 "".join(f", {directory}" for directory in searched))
    if broken:
        files = sorted({str(issue.mark.file) if issue.mark else "?" for issue in broken})
        parts.append(f"{len(files)} spec file(s) do not load and were not considered: "
                     f"{', '.join(files)} (flarespec spec lint names why)")
    return "; ".join(parts)
