"""The json format: the report as one JSON object (docs/output.md, "json").

``report`` (the schema, ``flarespec-report-v1``), ``command``, ``ok``, ``title``,
``findings`` (every finding, passes included, each with its fingerprint; files relative to
``root``), then the command's own members (``Report.data``: e.g. ``spec diff``'s
``specs`` and ``gate``), which keep the shape each command documents.
"""

from __future__ import annotations

import json
from pathlib import Path

from flarespec.output.model import REPORT_SCHEMA, Report
from flarespec.output.visible import json_visible


def render(report: Report, *, root: Path | None = None) -> str:
    document = {"report": REPORT_SCHEMA, "command": report.command, "ok": report.ok,
                "title": report.title,
                "findings": [finding.as_dict(root) for finding in report.findings]}
    clash = set(document) & set(report.data)
    if clash:
        raise ValueError(f"the command's members {sorted(clash)} clash with the report's")
    return json_visible(json.dumps({**document, **report.data}, indent=2, ensure_ascii=False))
