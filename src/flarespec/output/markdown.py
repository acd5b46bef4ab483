"""The markdown format: a pull-request comment or a job summary (``$GITHUB_STEP_SUMMARY``).

``### title``; per section ``#### heading``, a table of its findings (level, rule, where,
message and details; a listing's class word in place of level and rule; files relative to
``root`` when absolute), its notes as a list and its own table; then the footer. Every
text escapes ``\\``, ``|`` and ``<`` (no table broken, no HTML from a finding) and keeps
one line (a finding's own line breaks are ``<br>``; its strings are made visible first:
output/visible.py); the short form shows ``limit`` findings and counts the rest.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from flarespec.output.model import ABSENT, FAIL, Finding, Report, Section, Table
from flarespec.output.text import not_shown, short, where
from flarespec.output.visible import visible_report


def cell(text) -> str:
    """A table cell: ``\\``, ``|`` and ``<`` escaped (no HTML from a finding's text), a
    line break of the renderer's own as ``<br>``."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(
        "\r", "").replace("\n", "<br>")


def code(text) -> str:
    """A code span in a table cell: fenced by more backticks than the text holds in a row
    (padded when it begins or ends with one), ``|`` escaped as GFM tables require."""
    text = str(text).replace("|", "\\|")
    if not text:
        return ""
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _message(finding: Finding) -> str:
    parts = [finding.message]
    parts += [f"{name} {short(value)}" for name, value in
              (("expected", finding.expected), ("actual", finding.actual))
              if value is not ABSENT and short(value) not in finding.message]
    return cell("; ".join(parts) + "".join(f"\n{detail}" for detail in finding.details))


def _table(table: Table) -> list[str]:
    return ["| " + " | ".join(cell(h) for h in table.header) + " |",
            "|" + "---|" * len(table.header),
            *["| " + " | ".join(cell(c) for c in row) + " |" for row in table.rows]]


def _where(finding: Finding, root: Path | None) -> str:
    """``file:line location``: an absolute file relative to ``root``, the location left
    out when the message begins with it."""
    location = finding.location
    if location and finding.message.startswith(location):
        location = None
    return where(replace(finding, shown_file=finding.place_under(root), location=location))


def _section(section: Section, verbose: bool, root: Path | None) -> list[str]:
    lines = [f"#### {cell(section.heading)}", ""] if section.heading else []
    listed = [finding for finding in section.findings if finding.listed]
    shown = listed if verbose or section.limit is None else listed[:section.limit]
    if shown:
        tagged = all(f.tag for f in shown)  # a listing: its class word says the rule
        head = ["class" if tagged else "level"] + ([] if tagged else ["rule"]) + ["where",
                                                                              "message"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for f in shown:
            cells = [f.tag or (f.level if f.kind == FAIL else f.kind)]
            cells += [] if tagged else [code(f.rule)]
            lines.append("| " + " | ".join(cells + [code(_where(f, root)), _message(f)]) + " |")
    hidden = len(listed) - len(shown)
    if hidden:
        lines.append(f"{chr(10) if shown else ''}{not_shown(hidden, bool(shown))}{section.more}")
    if listed:
        lines.append("")
    if section.notes:
        lines += [f"- {cell(note)}" for note in section.notes] + [""]
    if section.table:
        lines += _table(section.table) + [""]
    return lines


def render(report: Report, *, verbose: bool = False, root: Path | None = None) -> str:
    report = visible_report(report)
    lines = [f"### {cell(report.title)}", ""]
    for section in report.sections:
        lines.extend(_section(section, verbose, root))
    lines.extend(line for footer in report.footer for line in (cell(footer), ""))
    return "\n".join(lines).rstrip() + "\n"
