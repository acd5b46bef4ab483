"""Packet text made visible and inert before it reaches a terminal or a CI log.

A finding's strings come from the evidence (a manifest key, a path, a value quoted in a
message): they must never move the cursor, retitle the terminal, split a line, or start
a line a CI runner reads as a command (GitHub Actions' workflow commands begin a line,
after its leading whitespace, with a colon pair; the runners' legacy commands, Azure's
and TeamCity's, begin with a double ``#`` and a bracket anywhere in a line). So:

* :func:`visible` (the human formats: text, markdown, github, junit, and the stderr
  summary) writes every control character (C0, DEL, C1), line or paragraph separator,
  bidirectional control, lone surrogate and XML-forbidden noncharacter as a visible
  escape (``\\n``, ``\\x1b``, ``\\u2028``, ``\\ud800``), the first ``#`` of a double ``#``
  before a bracket as ``\\x23``, and a colon that would begin the string's text as
  ``\\x3a``; a string longer than ``SHOWN_LIMIT`` is cut, its length said. A backslash is
  left as it is (the receipt, json and sarif hold the exact text).
* :func:`visible_report` applies it to every string of a report, the one call each human
  renderer makes first: the details and fact values, several lines by design, line by
  line. Fingerprints are those of the original strings.
* :func:`json_visible` makes JSON text (``json.dumps(..., ensure_ascii=False)``) as inert
  with JSON's own escapes (``\\u2028``, ``\\ud800``, ``\\u0023``): the same strings decoded,
  every character encodable.
"""

from __future__ import annotations

import re
from dataclasses import replace

from flarespec.output.model import Finding, Report, Section, Table

SHOWN_LIMIT = 500  # characters of a string (a line of a multi-line one) in people's formats

# what json.dumps leaves raw and a terminal or a log still reads: DEL and C1, the line and
# paragraph separators, bidirectional controls, lone surrogates, U+FFFE/U+FFFF (not XML);
# and the first "#" of "##[" / "##vso[" / "##teamcity["
_INERT_IN_JSON = ("\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
                  "\ufffe\uffff")
_COMMAND_MARK = r"|#(?=#[A-Za-z]*\[)"
_UNSAFE = re.compile(f"[\x00-\x1f{_INERT_IN_JSON}]{_COMMAND_MARK}")
_UNSAFE_IN_JSON = re.compile(f"[{_INERT_IN_JSON}]{_COMMAND_MARK}")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text, limit: int | None = SHOWN_LIMIT) -> str:
    """``text`` on one line, inert and visible (the module's doc), cut to ``limit``."""
    text = str(text)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}… ({len(text)} characters)"
    if _UNSAFE.search(text):
        text = _UNSAFE.sub(_escape, text)
    start = len(text) - len(text.lstrip())
    if text.startswith(":", start):
        text = f"{text[:start]}\\x3a{text[start + 1:]}"
    return text


def visible_lines(text, limit: int | None = SHOWN_LIMIT) -> str:
    """Several lines (split at ``\\n`` only), each made :func:`visible`."""
    return "\n".join(visible(line, limit) for line in str(text).split("\n"))


def json_visible(text: str) -> str:
    """JSON text with what a log or terminal would read (above) in JSON's ``\\uXXXX``
    escapes: valid JSON of the same value, and encodable (no lone surrogate left)."""
    if not _UNSAFE_IN_JSON.search(text):
        return text
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _optional(text: str | None) -> str | None:
    return None if text is None else visible(text)


def _finding(finding: Finding) -> Finding:
    return replace(
        finding, rule=visible(finding.rule), message=visible(finding.message),
        file=_optional(finding.file), location=_optional(finding.location),
        shown_file=_optional(finding.shown_file), title=_optional(finding.title),
        tag=_optional(finding.tag), cause=_optional(finding.cause),
        details=tuple(visible_lines(detail) for detail in finding.details),
        facts=tuple((visible(name), visible_lines(value)) for name, value in finding.facts),
        key=finding.key or finding.fingerprint)  # a key is hashed as given, not the fields


def _section(section: Section) -> Section:
    table = section.table
    if table is not None:
        table = Table(tuple(visible(cell) for cell in table.header),
                      [tuple(visible(cell) for cell in row) for row in table.rows])
    return replace(section, heading=_optional(section.heading),
                   findings=[_finding(finding) for finding in section.findings],
                   notes=[visible(note) for note in section.notes], table=table,
                   more=visible(section.more))


def visible_report(report: Report) -> Report:
    """The report with every string people's formats show made :func:`visible`."""
    return replace(report, command=visible(report.command), title=visible(report.title),
                   sections=[_section(section) for section in report.sections],
                   footer=[visible(line) for line in report.footer])
