"""The markdown format: a pull-request comment or a job summary (``$GITHUB_STEP_SUMMARY``).

``### title``; per section ``#### heading``, a table of its findings (level, rule, where,
message and details; a listing's class word in place of level and rule; files relative to
``root`` when absolute), its notes as a list and its own table; then the footer. Table
cells escape ``|`` and keep each cell on one line; the short form shows ``limit`` findings.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from flarespec.output.model import ABSENT, FAIL, Finding, Report, Section, Table, relative_uri
from flarespec.output.text import short, where


def cell(text) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace(
        "\n", "<br>")


def code(text) -> str:
    text = str(text)
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if text else ""


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
    place = finding.place
    if place and os.path.isabs(place):
        place = relative_uri(place, root)
    location = finding.location
    if location and finding.message.startswith(location):
        location = None
    return where(replace(finding, shown_file=place, location=location))


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
        if len(listed) > len(shown):
            lines.append(f"\n… and {len(listed) - len(shown)} more{section.more}")
        lines.append("")
    if section.notes:
        lines += [f"- {note}" for note in section.notes] + [""]
    if section.table:
        lines += _table(section.table) + [""]
    return lines


def render(report: Report, *, verbose: bool = False, root: Path | None = None) -> str:
    lines = [f"### {report.title}", ""]
    for section in report.sections:
        lines.extend(_section(section, verbose, root))
    lines.extend(line for footer in report.footer for line in (footer, ""))
    return "\n".join(lines).rstrip() + "\n"
