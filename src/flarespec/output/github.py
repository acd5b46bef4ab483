"""The github format: GitHub Actions workflow commands, one annotation per finding.

``::error``/``::warning``/``::notice`` with ``file`` (relative to ``root``), ``line``,
``col`` and ``title`` (the rule id, or the finding's title); the message and its details
as the body. Data is escaped as the Actions runner reads it (``%``, CR, LF), property
values also ``:`` and ``,``. Passes are not annotated; the last line says what the
command concluded (``::error`` when the report is not ok, else ``::notice``).
"""

from __future__ import annotations

from pathlib import Path

from flarespec.output.model import ERROR, WARNING, Finding, Report, relative_uri
from flarespec.output.visible import visible_report

_COMMAND = {ERROR: "error", WARNING: "warning"}  # note, none: notice


def data(text: str) -> str:
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def prop(text: str) -> str:
    return data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, root: Path | None = None) -> str:
    where = []
    if finding.file:
        where.append(f"file={prop(relative_uri(finding.file, root))}")
        if finding.line:
            where.append(f"line={finding.line}")
            if finding.column:
                where.append(f"col={finding.column}")
    where.append(f"title={prop(finding.title or finding.rule)}")
    said = finding.message if finding.title in (None, finding.rule) else \
        f"{finding.message} [{finding.rule}]"
    body = "\n".join([said, *finding.details])
    return f"::{_COMMAND.get(finding.level, 'notice')} {','.join(where)}::{data(body)}"


def render(report: Report, *, root: Path | None = None) -> str:
    report = visible_report(report)
    lines = [annotation(finding, root) for finding in report.findings if finding.listed]
    body = "\n".join([report.title, *report.footer])
    lines.append(f"::{'notice' if report.ok else 'error'} title={prop('flarespec ' + report.command)}"
                 f"::{data(body)}")
    return "\n".join(lines)
