"""``spec diff`` output formats: text, markdown, json, github, junit; acknowledgements; gate.

Every format shows every value in full: a value that does not fit on its line is folded onto
lines of its own (YAML flow style for text, a fenced block for markdown), never cut. The
JSON schema is documented in docs/spec-review.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from flarespec.spec.diff import CLASSES, LOOSENING, NEUTRAL, REVIEW, TIGHTENING, Change, \
    DiffResult
from flarespec.spec.errors import SpecInvalid, SpecIssue

FORMATS = ("text", "markdown", "json", "github", "junit")
FAIL_ON = (TIGHTENING, LOOSENING, REVIEW, "any")
GATE_FAILED = 1  # exit code when --fail-on finds an unacknowledged change of its class
INLINE = 60      # a value longer than this (as JSON text) goes onto lines of its own
SCHEMA_VERSION = 1


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


def render_text(results: list[DiffResult]) -> str:
    return "\n".join(_text_one(result) for result in results) or f"spec diff: {NOTHING_CHANGED}"


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

def render_markdown(results: list[DiffResult]) -> str:
    return "\n\n".join(_markdown_one(result) for result in results) or \
        f"### spec diff\n\n{NOTHING_CHANGED.capitalize()}."


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


def render_github(results: list[DiffResult]) -> str:
    """One GitHub Actions workflow command per change, at the line of the new spec."""
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
            level = "notice" if change.acknowledged else _GITHUB_LEVEL[change.cls]
            lines.append(f"::{level} {','.join(where)}::{_github_escape(body)}")
    return "\n".join(lines)


def render_junit(results: list[DiffResult], fail_on: str | None) -> str:
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
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n' + "\n".join(suites) + \
        "\n</testsuites>"


def render(results: list[DiffResult], fmt: str, fail_on: str | None = None) -> str:
    if fmt == "markdown":
        return render_markdown(results)
    if fmt == "json":
        return render_json(results, {"fail_on": fail_on,
                                     "gate_failed": gate_failed(results, fail_on)})
    if fmt == "github":
        return render_github(results)
    if fmt == "junit":
        return render_junit(results, fail_on)
    return render_text(results)


# --------------------------------------------------------------------------- gate and acks

def gate_hit(change: Change, fail_on: str | None) -> bool:
    if fail_on is None or change.acknowledged:
        return False
    return change.cls == fail_on or (fail_on == "any" and change.cls != NEUTRAL)


def gate_failed(results: list[DiffResult], fail_on: str | None) -> bool:
    return any(gate_hit(c, fail_on) for result in results for c in result.changes)


def read_acks(path: str | Path) -> dict[str, str]:
    """fingerprint -> reason from a YAML (or JSON) list of {fingerprint, reason}."""
    from flarespec.spec.load import read_spec_bytes
    from flarespec.spec.yamlmarks import SpecYamlError, load_marked, plain

    text = read_spec_bytes(Path(path)).decode("utf-8", "replace")
    try:
        entries = plain(load_marked(text, str(path)))
    except SpecYamlError as error:
        raise SpecInvalid([SpecIssue(error.reason, error.mark, error.code)]) from None
    problem = _ack_problem(entries)
    if problem:
        raise SpecInvalid([SpecIssue(f"{path}: {problem}", None, "diff.ack")])
    return {entry["fingerprint"]: entry["reason"] for entry in entries}


def _ack_problem(entries) -> str | None:
    if not isinstance(entries, list):
        return "wants a list of {fingerprint, reason}"
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"fingerprint", "reason"} or \
                not all(isinstance(entry[k], str) and entry[k].strip() for k in entry):
            return f"entry {index} wants exactly a fingerprint and a non-empty reason"
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
