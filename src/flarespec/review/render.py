"""``spec diff`` as the one result model (every format is a renderer of output/);
acknowledgements; the gate.

Every change is shown with its values in full: a value that does not fit on its line is
folded onto lines of its own, never cut. The JSON members are documented in
docs/spec-review.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from flarespec.engine.directions import LOOSENING, NEUTRAL, REVIEW, TIGHTENING
from flarespec.review.changes import Change, DiffResult
from flarespec.output.model import ERROR, NOTE, WARNING, Finding, Report, Rule, Section
from flarespec.compiler.errors import SpecInvalid, SpecIssue

FAIL_ON = (TIGHTENING, LOOSENING, REVIEW, "any")
GATE_FAILED = 1  # exit code when --fail-on finds an unacknowledged change of its class
INLINE = 60      # a value longer than this (as JSON text) goes onto lines of its own
SCHEMA_VERSION = 1
ACK_CODE = "diff.ack"


def shown(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _folded(value, indent: str) -> list[str]:
    """A long value, whole, one member or item per line."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2)
    return [indent + line for line in text.splitlines()]


def label(change: Change) -> str:
    """``rule a.b assert.range.min`` / ``constant idle_metrics[6].name``."""
    if change.subject.startswith("constant "):
        return f"constant {change.path}"
    return f"{change.subject} {change.path}".rstrip()


def _values(change: Change) -> tuple[str | None, str | None]:
    old = None if change.op == "added" else shown(change.old)
    new = None if change.op == "removed" else shown(change.new)
    return old, new


# --------------------------------------------------------------------------- report

NOTHING_CHANGED = "no spec changed"
_LEVEL = {TIGHTENING: NOTE, LOOSENING: WARNING, REVIEW: WARNING, NEUTRAL: NOTE}
RULES = {
    f"diff.{TIGHTENING}": Rule(f"diff.{TIGHTENING}", "A change that accepts fewer inputs",
                               "The new spec rejects inputs the old one accepted "
                               "(docs/spec-review.md, classes)."),
    f"diff.{LOOSENING}": Rule(f"diff.{LOOSENING}", "A change that accepts more inputs",
                              "The new spec accepts inputs the old one rejected: a "
                              "reviewer approves it, or it goes (docs/spec-review.md)."),
    f"diff.{REVIEW}": Rule(f"diff.{REVIEW}", "A change whose effect cannot be decided",
                           "The reason is given; a reviewer decides (docs/spec-review.md)."),
    f"diff.{NEUTRAL}": Rule(f"diff.{NEUTRAL}", "A change of wording only",
                            "Descriptions, messages, titles: the accepted inputs are the "
                            "same (docs/spec-review.md)."),
}


def _summary(result: DiffResult) -> str:
    counts = result.summary(counted=lambda c: not c.acknowledged)
    acked = sum(1 for c in result.changes if c.acknowledged)
    line = ", ".join(f"{n} {cls}" for cls, n in counts.items())
    return line + (f" ({acked} acknowledged)" if acked else "")


def _message(change: Change) -> tuple[str, list[str]]:
    """``label: what: old → new`` when the values fit on the line, else the values
    folded onto lines of their own (never cut)."""
    old, new = _values(change)
    inline = [v for v in (old, new) if v is not None]
    message = f"{label(change)}: {change.what}"
    if all(len(v) <= INLINE for v in inline):
        if old is not None and new is not None:
            return f"{message}: {old} → {new}", []
        return (f"{message}: {inline[0]}" if inline else message), []
    folded = []
    for sign, value, raw in (("-", old, change.old), ("+", new, change.new)):
        if value is not None:
            folded += [sign, *_folded(raw, "  ")]
    return message, ["\n".join(folded)]


def _finding(change: Change, failing: bool, root: Path | None) -> Finding:
    message, details = _message(change)
    if change.where_made():  # where it lands, when that is not where it was made
        details.append(change.where_made())
    why = [change.reason] if change.reason else []
    if change.rules:
        why.append(f"read by {', '.join(change.rules)}")
    if change.acknowledged:
        why.append(f"acknowledged: {change.acknowledged}")
    details.append(f"({'; '.join(why)})  [{change.fingerprint}]" if why
                   else f"[{change.fingerprint}]")
    level = ERROR if failing else NOTE if change.acknowledged else _LEVEL[change.cls]
    file = change.file
    if file is not None and root is not None and not Path(file).is_absolute():
        file = str(root / file)  # openable from anywhere; shown as the diff names it
    return Finding(f"diff.{change.cls}", message, level, file=file, shown_file=change.file,
                   line=change.line, location=label(change), tag=change.cls,
                   details=tuple(details),
                   title=f"spec {change.cls}: {label(change)}", key=change.fingerprint)


def diff_report(results: list[DiffResult], fail_on: str | None = None,
                ack_file: str | None = None, linted=None) -> Report:
    """One section per compared pair, one finding per change (a change the gate fails on
    is an error; loosening and review changes are warnings, the others notes); with
    ``fail_on`` the footer says what the gate decided, on which changes; with ``linted``
    (review/sides.py) the title says that both sides lint."""
    gate = Gate.of(results, fail_on, ack_file)
    failing = {id(change) for change in gate.hits}
    sections = [Section(f"spec diff {r.old} -> {r.new}: {_summary(r)}",
                        [_finding(c, id(c) in failing, r.root) for c in r.changes],
                        notes=[] if r.changes else ["no changes"]) for r in results]
    changed = sum(1 for r in results if r.changes)
    title = f"spec diff: {NOTHING_CHANGED}" if not results else \
        f"spec diff: {len(results)} spec{'s' * (len(results) != 1)} compared, {changed} changed"
    if linted is not None:
        title += f"; {linted.sentence()}"
    footer = []
    if fail_on is not None:
        footer = [gate.sentence()] + [f"  {c.cls:<10}  {label(c)}: {c.what}  [{c.fingerprint}]"
                                      for c in gate.hits]
    data = {"schema": SCHEMA_VERSION, "specs": [r.as_dict() for r in results],
            "fail_on": fail_on, "gate_failed": gate.failed, "gate": gate.as_dict(),
            "lint": linted.as_dict() if linted is not None else None}
    return Report("spec diff", title, not gate.failed, sections, footer, dict(RULES), data,
                  anchor=next((f.file for s in sections for f in s.findings if f.file), None))


# --------------------------------------------------------------------------- gate and acks

def gate_hit(change: Change, fail_on: str | None) -> bool:
    if fail_on is None or change.acknowledged:
        return False
    return change.cls == fail_on or (fail_on == "any" and change.cls != NEUTRAL)


@dataclass
class Gate:
    """What ``--fail-on`` decided: the changes it fails on (unacknowledged, of its class)
    and what it was given (the acknowledgements file, how many changes it acknowledged)."""
    fail_on: str | None
    hits: list[Change]
    ack_file: str | None
    acknowledged: int

    @classmethod
    def of(cls, results: list[DiffResult], fail_on: str | None,
           ack_file: str | None = None) -> "Gate":
        changes = [c for result in results for c in result.changes]
        return cls(fail_on, [c for c in changes if gate_hit(c, fail_on)],
                   str(ack_file) if ack_file else None,
                   sum(1 for c in changes if c.acknowledged))

    @property
    def failed(self) -> bool:
        return bool(self.hits)

    def _noun(self) -> str:
        return "non-neutral" if self.fail_on == "any" else str(self.fail_on)

    def counted(self) -> str:
        """``4 unacknowledged loosening changes`` / ``no unacknowledged loosening change``."""
        if not self.hits:
            return f"no unacknowledged {self._noun()} change"
        plural = "s" if len(self.hits) != 1 else ""
        return f"{len(self.hits)} unacknowledged {self._noun()} change{plural}"

    def with_what(self) -> str:
        if self.ack_file is None:
            return "no acknowledgements file"
        return f"acknowledgements {self.ack_file}: {self.acknowledged} acknowledged"

    def sentence(self) -> str:
        """``spec gate --fail-on loosening: FAILED, 4 unacknowledged loosening changes
        (acknowledgements .github/spec-acks.yaml: 0 acknowledged)``."""
        verdict = "FAILED" if self.failed else "passed"
        return f"spec gate --fail-on {self.fail_on}: {verdict}, {self.counted()} " \
            f"({self.with_what()})"

    def as_dict(self) -> dict:
        return {"fail_on": self.fail_on, "failed": self.failed,
                "unacknowledged": len(self.hits),
                "changes": [{"class": c.cls, "subject": c.subject, "path": c.path,
                             "change": c.what, "fingerprint": c.fingerprint, "file": c.file,
                             "line": c.line, "made_by": c.made_by or None,
                             "context": c.context.as_dict() if c.context else None}
                            for c in self.hits],
                "ack_file": self.ack_file, "acknowledged": self.acknowledged}


def read_acks(path: str | Path) -> dict[str, str]:
    """fingerprint -> reason from a YAML (or JSON) list of {fingerprint, reason}."""
    from flarespec.compiler.load import read_spec_bytes
    from flarespec.compiler.yamlmarks import SpecYamlError, load_marked, plain

    try:
        text = read_spec_bytes(Path(path)).decode("utf-8", "replace")
    except SpecInvalid as problem:  # worded for a spec: say which file this is
        reason = problem.issues[0].message.removeprefix("cannot read spec: ")
        reason = "it is " + reason[len("spec is "):] if reason.startswith("spec is ") \
            else reason
        reason = reason.replace(", the limit for a spec file", ", the limit")
        raise SpecInvalid([SpecIssue(f"cannot read the acknowledgements file {path}: "
                                     f"{reason}", None, ACK_CODE)]) from None
    try:
        entries = plain(load_marked(text, str(path)))
    except SpecYamlError as error:
        raise SpecInvalid([SpecIssue(error.reason, error.mark, error.code)]) from None
    if entries is None:  # an empty file: nothing acknowledged yet
        return {}
    problem = _ack_problem(entries)
    if problem:
        raise SpecInvalid([SpecIssue(f"the acknowledgements file {path}: {problem}", None,
                                     ACK_CODE)])
    return {entry["fingerprint"]: entry["reason"] for entry in entries}


def _ack_problem(entries) -> str | None:
    if not isinstance(entries, list):
        return "wants a list of {fingerprint, reason} (an empty list is [])"
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or set(entry) != {"fingerprint", "reason"}:
            return f"entry {number} wants exactly the keys fingerprint and reason"
        for key in ("fingerprint", "reason"):
            if not isinstance(entry[key], str) or not entry[key].strip():
                kind = type(entry[key]).__name__
                hint = " (quote it: YAML reads an all-digit fingerprint as a number)" \
                    if key == "fingerprint" and kind in ("int", "float") else ""
                return f"entry {number}: {key} must be non-empty text, got {kind}{hint}"
    return None


def acknowledge(results: list[DiffResult], acks: dict[str, str]) -> list[str]:
    """Mark acknowledged changes; return the fingerprints that matched nothing (stale)."""
    used = set()
    for result in results:
        for change in result.changes:
            if change.fingerprint in acks:
                change.acknowledged = acks[change.fingerprint]
                used.add(change.fingerprint)
    return sorted(set(acks) - used)
