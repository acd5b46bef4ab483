"""``spec diff`` output formats: text, markdown, json, github, junit; acknowledgements; gate.

Every format shows every value in full: a value that does not fit on its line is folded onto
lines of its own (YAML flow style for text, a fenced block for markdown), never cut. The
JSON schema is documented in docs/spec-review.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from flarespec.review.diff import CLASSES, LOOSENING, NEUTRAL, REVIEW, TIGHTENING, Change, \
    DiffResult
from flarespec.spec.errors import SpecInvalid, SpecIssue

FORMATS = ("text", "markdown", "json", "github", "junit")
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


# --------------------------------------------------------------------------- text

NOTHING_CHANGED = "no spec changed"


def render_text(results: list[DiffResult], gate: "Gate | None" = None) -> str:
    text = "\n".join(_text_one(result) for result in results) or f"spec diff: {NOTHING_CHANGED}"
    if gate is None or gate.fail_on is None:
        return text
    lines = [text, gate.sentence()]
    lines += [f"  {c.cls:<10}  {label(c)}: {c.what}  [{c.fingerprint}]" for c in gate.hits]
    return "\n".join(lines)


def _summary(result: DiffResult) -> str:
    counts = result.summary(counted=lambda c: not c.acknowledged)
    acked = sum(1 for c in result.changes if c.acknowledged)
    line = ", ".join(f"{n} {cls}" for cls, n in counts.items())
    return line + (f" ({acked} acknowledged)" if acked else "")


def _text_one(result: DiffResult) -> str:
    lines = [f"spec diff {result.old} -> {result.new}: {_summary(result)}"]
    for change in result.changes:
        lines.extend(_text_change(change))
    if not result.changes:
        lines.append("  no changes")
    return "\n".join(lines)


def _text_change(change: Change) -> list[str]:
    head = f"  {change.cls:<10}  {label(change)}: {change.what}"
    old, new = _values(change)
    shown_inline = [v for v in (old, new) if v is not None]
    lines = []
    if all(len(v) <= INLINE for v in shown_inline):
        if old is not None and new is not None:
            head += f": {old} → {new}"
        elif shown_inline:
            head += f": {shown_inline[0]}"
        lines.append(head)
    else:
        lines.append(head)
        for sign, value, raw in (("-", old, change.old), ("+", new, change.new)):
            if value is not None:
                lines.append(f"      {sign}")
                lines.extend(_folded(raw, "        "))
    details = [change.reason] if change.reason else []
    if change.rules:
        details.append(f"read by {', '.join(change.rules)}")
    if change.acknowledged:
        details.append(f"acknowledged: {change.acknowledged}")
    if details:
        lines.append(f"      ({'; '.join(details)})  [{change.fingerprint}]")
    else:
        lines.append(f"      [{change.fingerprint}]")
    return lines


# --------------------------------------------------------------------------- markdown

def render_markdown(results: list[DiffResult], gate: "Gate | None" = None) -> str:
    text = "\n\n".join(_markdown_one(result) for result in results) or \
        f"### spec diff\n\n{NOTHING_CHANGED.capitalize()}."
    if gate is None or gate.fail_on is None:
        return text
    lines = [text, "", f"### spec gate: {'failed' if gate.failed else 'passed'}", "",
             f"`--fail-on {gate.fail_on}`: **{gate.counted()}**; {gate.with_what()}"]
    if gate.hits:
        lines += ["", "| change | class | what | fingerprint |", "|---|---|---|---|"]
        lines += [f"| {_code(label(c))} | {c.cls} | {_cell(c.what)} | `{c.fingerprint}` |"
                  for c in gate.hits]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def _code(value: str | None) -> str:
    if value is None:
        return ""
    if "`" in value:  # a double fence, padded, keeps a value holding a backtick whole
        return _cell(f"`` {value} ``")
    return _cell(f"`{value}`")


def _markdown_one(result: DiffResult) -> str:
    lines = [f"### spec diff `{result.old}` → `{result.new}`", "",
             f"**{_summary(result)}**"]
    for cls in CLASSES:
        mine = [c for c in result.changes if c.cls == cls]
        if not mine:
            continue
        lines += ["", f"#### {cls} ({len(mine)})", "",
                  "| change | what | old | new | why | fingerprint |",
                  "|---|---|---|---|---|---|"]
        for change in mine:
            old, new = _values(change)
            why = change.reason
            if change.rules:
                why += ("; " if why else "") + "read by " + ", ".join(change.rules)
            if change.acknowledged:
                why += ("; " if why else "") + f"acknowledged: {change.acknowledged}"
            lines.append(f"| {_code(label(change))} | {_cell(change.what)} | {_code(old)} | "
                         f"{_code(new)} | {_cell(why)} | `{change.fingerprint}` |")
    if not result.changes:
        lines += ["", "No changes."]
    return "\n".join(lines)


# --------------------------------------------------------------------------- json / github / junit

def render_json(results: list[DiffResult], extra: dict | None = None) -> str:
    document = {"schema": SCHEMA_VERSION, "specs": [r.as_dict() for r in results]}
    return json.dumps({**document, **(extra or {})}, indent=2, ensure_ascii=False)


_GITHUB_LEVEL = {TIGHTENING: "notice", LOOSENING: "warning", REVIEW: "warning",
                 NEUTRAL: "notice"}


def _github_escape(text: str, *, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def render_github(results: list[DiffResult], gate: "Gate | None" = None) -> str:
    """One GitHub Actions workflow command per change, at the line of the new spec; a
    change the gate fails on is an ``::error``; with --fail-on, one last command says what
    the gate decided (``::error`` when it failed, else ``::notice``)."""
    failing = {id(change) for change in gate.hits} if gate else set()
    lines = []
    for result in results:
        for change in result.changes:
            where = [f"file={_github_escape(change.file, property_value=True)}"] \
                if change.file else []
            if change.line:
                where.append(f"line={change.line}")
            title = f"spec {change.cls}: {label(change)}"
            where.append(f"title={_github_escape(title, property_value=True)}")
            old, new = _values(change)
            body = f"{label(change)}: {change.what}"
            body += "".join(f"\n{sign} {value}" for sign, value in (("old", old), ("new", new))
                            if value is not None)
            if change.reason:
                body += f"\n({change.reason})"
            if change.rules:
                body += f"\nread by {', '.join(change.rules)}"
            if change.acknowledged:
                body += f"\nacknowledged: {change.acknowledged}"
            body += f"\nfingerprint {change.fingerprint}"
            level = "error" if id(change) in failing else \
                "notice" if change.acknowledged else _GITHUB_LEVEL[change.cls]
            lines.append(f"::{level} {','.join(where)}::{_github_escape(body)}")
    if gate is not None and gate.fail_on is not None:
        title = _github_escape(f"spec gate {'failed' if gate.failed else 'passed'}",
                               property_value=True)
        body = gate.sentence() + "".join(f"\n{c.cls} {label(c)} [{c.fingerprint}]"
                                         for c in gate.hits)
        lines.append(f"::{'error' if gate.failed else 'notice'} title={title}::"
                     f"{_github_escape(body)}")
    return "\n".join(lines)


def render_junit(results: list[DiffResult], fail_on: str | None,
                 gate: "Gate | None" = None) -> str:
    """One test case per change; a change the gate fails on is a failure."""
    suites = []
    for result in results:
        cases = []
        failures = 0
        for change in result.changes:
            name = quoteattr(f"{change.cls}: {label(change)}: {change.what}")
            old, new = _values(change)
            text = "\n".join(p for p in (f"old: {old}" if old is not None else "",
                                         f"new: {new}" if new is not None else "",
                                         change.reason, f"fingerprint {change.fingerprint}")
                             if p)
            where = f"{change.file}:{change.line}" if change.file else ""
            body = f"<system-out>{escape(text)}</system-out>"
            if gate_hit(change, fail_on):
                failures += 1
                body = f"<failure message={quoteattr(change.cls)}>{escape(text)}</failure>"
            cases.append(f'    <testcase classname={quoteattr(str(result.new))} name={name} '
                         f'file={quoteattr(where)}>{body}</testcase>')
        suites.append(f'  <testsuite name={quoteattr(f"spec diff {result.old} -> {result.new}")}'
                      f' tests="{len(cases)}" failures="{failures}">\n' + "\n".join(cases) +
                      "\n  </testsuite>")
    if gate is not None and gate.fail_on is not None:
        suites.append(_junit_gate(gate))
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n' + "\n".join(suites) + \
        "\n</testsuites>"


def _junit_gate(gate: "Gate") -> str:
    """The gate's decision as a suite of its own: one case, a failure when it failed."""
    properties = "".join(f'<property name={quoteattr(name)} value={quoteattr(str(value))}/>'
                         for name, value in (("fail_on", gate.fail_on),
                                             ("ack_file", gate.ack_file or ""),
                                             ("acknowledged", gate.acknowledged),
                                             ("unacknowledged", len(gate.hits))))
    text = "\n".join([gate.sentence()] + [f"{c.cls} {label(c)} [{c.fingerprint}]"
                                           for c in gate.hits])
    body = f"<failure message={quoteattr(gate.counted())}>{escape(text)}</failure>" \
        if gate.failed else f"<system-out>{escape(text)}</system-out>"
    return (f'  <testsuite name="spec gate" tests="1" failures="{int(gate.failed)}">\n'
            f'    <properties>{properties}</properties>\n'
            f'    <testcase classname="spec gate" name={quoteattr(f"--fail-on {gate.fail_on}")}'
            f'>{body}</testcase>\n  </testsuite>')


def render(results: list[DiffResult], fmt: str, fail_on: str | None = None,
           ack_file: str | None = None) -> str:
    """The report in ``fmt``; with ``fail_on``, every format also says what the gate
    decided, on which changes, and with which acknowledgements (``ack_file``)."""
    gate = Gate.of(results, fail_on, ack_file)
    if fmt == "markdown":
        return render_markdown(results, gate)
    if fmt == "json":
        return render_json(results, {"fail_on": fail_on, "gate_failed": gate.failed,
                                     "gate": gate.as_dict()})
    if fmt == "github":
        return render_github(results, gate)
    if fmt == "junit":
        return render_junit(results, fail_on, gate)
    return render_text(results, gate)


# --------------------------------------------------------------------------- gate and acks

def gate_hit(change: Change, fail_on: str | None) -> bool:
    if fail_on is None or change.acknowledged:
        return False
    return change.cls == fail_on or (fail_on == "any" and change.cls != NEUTRAL)


def gate_failed(results: list[DiffResult], fail_on: str | None) -> bool:
    return any(gate_hit(c, fail_on) for result in results for c in result.changes)


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
                             "line": c.line} for c in self.hits],
                "ack_file": self.ack_file, "acknowledged": self.acknowledged}


def read_acks(path: str | Path) -> dict[str, str]:
    """fingerprint -> reason from a YAML (or JSON) list of {fingerprint, reason}."""
    from flarespec.spec.load import read_spec_bytes
    from flarespec.spec.yamlmarks import SpecYamlError, load_marked, plain

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
