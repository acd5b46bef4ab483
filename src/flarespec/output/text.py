"""The text format: for people at a terminal, and the runner commands' stderr summary.

The title line; per section its heading (indented two spaces), then one line per finding
(six; a section without a heading lists them from the line's start, compiler-style, as
editors' problem matchers read ``file:line:column: message``): its place (``file:line location``), its message and, unless the message quotes
them, expected and actual cut to 80 characters, their length said (a value a producer
shortened before, a receipt's, says the size the producer said of the whole value; two
mappings show only the members that differ); then its details (ten). Passes are counted by the title, not listed. The short
form shows ``limit`` findings of a section and counts the rest; ``verbose`` shows every
finding, expected and actual in full, and its facts. A finding with a ``tag`` (a
listing's class word: ``spec diff``'s classes, ``spec test``'s FAIL) is written
``TAG  message``, the tags of a section padded to one column, its place shown by the
verbose form. Every string is made visible and inert first, and cut to 500 characters
(output/visible.py), values as their JSON text.
"""

from __future__ import annotations

import json
import re

from flarespec.output.model import ABSENT, ERROR, NOT_APPLICABLE, Finding, Report, Section, \
    Table
from flarespec.output.visible import visible, visible_report

SHORT_VALUE = 80  # characters of an expected or actual value shown without verbose
FINDING, DETAIL = " " * 6, " " * 4  # a finding's indent; its details' further indent


def render(report: Report, *, verbose: bool = False) -> str:
    report = visible_report(report)
    lines = [report.title]
    for section in report.sections:
        lines.extend(_section(section, verbose))
    lines.extend(report.footer)
    return "\n".join(lines)


def _section(section: Section, verbose: bool) -> list[str]:
    lines = [f"  {section.heading}"] if section.heading else []
    indent = FINDING if section.heading else ""
    listed = [finding for finding in section.findings if finding.listed]
    shown = listed if verbose or section.limit is None else listed[:section.limit]
    width = max((len(f.tag) for f in shown if f.tag), default=0)
    for finding in shown:
        lines.extend(finding_lines(finding, verbose, rule=section.rule is None, indent=indent,
                                   width=width))
    hidden = len(listed) - len(shown)
    if hidden:
        lines.append(f"{indent}{not_shown(hidden, bool(shown))}{section.more}")
    lines.extend(f"{indent}{note}" for note in section.notes)
    if section.table:
        lines.extend(table_lines(section.table))
    return lines


def not_shown(count: int, some_shown: bool) -> str:
    """``… and N more`` after the findings shown, ``N not shown`` when none is."""
    return f"… and {count} more" if some_shown else f"{count} not shown"


def where(finding: Finding) -> str:
    """``file:line:column location`` as far as known; the location is left out when it
    only repeats the line."""
    file, line, location = finding.place, finding.line, finding.location
    place = (f"{file}:{line}" if file else f"line {line}") if line is not None else file
    if line is not None and finding.column is not None:
        place += f":{finding.column}"
    if location == f"line {line}":
        location = None
    return " ".join(str(part) for part in (place, location) if part)


def finding_lines(finding: Finding, verbose: bool = False, *, rule: bool = True,
                  indent: str = FINDING, width: int = 0) -> list[str]:
    place = where(finding)
    more = indent + DETAIL
    if finding.tag:  # a listing: TAG  message; its place on a line of its own
        head = f"{indent}{finding.tag:<{width}}  {finding.message}"
        lines = [head + ("" if verbose else _values(finding))]
        lines += [f"{more}at {place}"] if place and verbose else []
    else:
        label = "" if finding.level == ERROR else \
            "n/a: " if finding.kind == NOT_APPLICABLE else f"{finding.level}: "
        head = f"{indent}{place + ': ' if place else ''}{label}{finding.message}"
        head += "" if verbose else _values(finding)
        lines = [head + (f" [{finding.rule}]" if rule else "")]
    if verbose:
        lines.extend(f"{more}{name}: {_value(value)}" for name, value in
                     (("expected", finding.expected), ("actual", finding.actual))
                     if value is not ABSENT)
        lines.extend(f"{more}{name}: {value}" for name, value in finding.facts)
    lines.extend(f"{more}{line}" for detail in finding.details for line in detail.splitlines())
    return lines


def table_lines(table: Table) -> list[str]:
    widths = [max(len(str(row[i])) for row in [table.header, *table.rows])
              for i in range(len(table.header))]
    return ["  " + "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
            for row in [table.header, *table.rows]]


# --------------------------------------------------------------------------- values

def _value(value) -> str:
    return visible(json.dumps(value, ensure_ascii=False), limit=None)


# a value a producer already shortened (e.g. a receipt): its JSON text, cut, length said
_SHORTENED = re.compile(r"… \((?:\d+ (?:chars|members|items)|[A-Za-z_]\w*)\)\Z")


def _text(value) -> str:
    return visible(value, limit=None) if isinstance(value, str) and _SHORTENED.search(value) \
        else _value(value)


def _measured(value) -> tuple[str, str, bool]:
    """A value's text, the size to say when it is cut, and whether a producer cut it
    already: a value shortened before (a receipt's ``"abc… (214 chars)"``) says its whole
    value's size, not the length of what is left of it."""
    text = _text(value)
    found = _SHORTENED.search(text) if isinstance(value, str) else None
    if found is not None:
        return text[:found.start()], found.group(0)[2:], True
    return text, f"({len(text)} characters)", False


def short(value, limit: int = SHORT_VALUE) -> str:
    """A value as JSON text, cut to ``limit`` characters (its length said) when longer."""
    text, size, cut = _measured(value)
    return text if len(text) <= limit and not cut else f"{text[:limit]}… {size}"


def short_pair(expected, actual, limit: int = SHORT_VALUE) -> tuple[str, str]:
    """Both values cut to ``limit`` characters; long ones that begin alike are shown from
    a little before where they first differ, so the cut keeps the difference."""
    (one, one_size, one_cut), (two, two_size, two_cut) = _measured(expected), _measured(actual)
    if max(len(one), len(two)) <= limit and not (one_cut or two_cut):
        return one, two
    same = next((i for i, (a, b) in enumerate(zip(one, two)) if a != b), min(len(one), len(two)))
    start = same - 20 if same > 40 else 0

    def shown(text: str, size: str, cut: bool) -> str:
        part = ("…" if start else "") + text[start:start + limit]
        return part + (f"… {size}" if start + limit < len(text) or cut else "")
    return shown(one, one_size, one_cut), shown(two, two_size, two_cut)


def _shown(value) -> str:
    return "absent" if value is ABSENT else short(value)


def _values(finding: Finding) -> str:
    """`` (expected E, actual A)`` unless the message already quotes them; two mappings
    show only the members that differ (``pages_total: expected 7000, actual 8000``)."""
    expected, actual = finding.expected, finding.actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        members = [(key, expected.get(key, ABSENT), actual.get(key, ABSENT))
                   for key in sorted(set(expected) | set(actual), key=str)]
        shown = [(f"{key}: ", [("expected", _shown(e)), ("actual", _shown(a))])
                 for key, e, a in members if _value(e) != _value(a) or type(e) is not type(a)]
    elif expected is not ABSENT and actual is not ABSENT:
        shown = [("", list(zip(("expected", "actual"), short_pair(expected, actual))))]
    else:
        shown = [("", [(name, short(value)) for name, value in
                       (("expected", expected), ("actual", actual)) if value is not ABSENT])]
    texts = [text for _, pairs in shown for _, text in pairs]
    if not texts or all(text in finding.message for text in texts):
        return ""
    return " (" + "; ".join(prefix + ", ".join(f"{name} {text}" for name, text in pairs)
                            for prefix, pairs in shown if pairs) + ")"
