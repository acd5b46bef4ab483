"""The sarif format: SARIF 2.1.0 for GitHub code scanning, GitLab and CI dashboards.

One run: ``tool.driver`` (name, version, every rule a result names, each
with ``shortDescription`` and ``help``), ``automationDetails.id`` (the command: uploads of
several commands stay apart), one result per finding that is not a pass or not applicable:
``ruleId``/``ruleIndex``, ``level`` (SARIF requires ``none`` for any kind but ``fail``),
``message.text`` (message and details), one location whose ``artifactLocation.uri`` is
relative to ``root`` (``uriBaseId`` ``%SRCROOT%``; never absolute, never empty), a region
with ``startLine`` ≥ 1 when the finding has a line (else the location is the whole file),
the location inside the file as a logical location, and ``partialFingerprints`` stable
across identical runs. A finding without a file is placed at the report's ``anchor`` (the
packet's entry file, the spec file); docs/output.md says which for each command.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from flarespec.output.model import ABSENT, FAIL, FINGERPRINT, NONE, NOT_APPLICABLE, PASS, \
    Finding, Report, relative_uri
from flarespec.output.visible import json_visible

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL = "flarespec"
ROOT_ID = "%SRCROOT%"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(TOOL)
    except PackageNotFoundError:
        return "0+unknown"


def _location(finding: Finding, anchor: str | None, root: Path | None) -> list[dict]:
    file = finding.file or anchor
    if not file:
        return []
    physical: dict = {"artifactLocation": {"uri": relative_uri(file, root), "uriBaseId": ROOT_ID}}
    if finding.file and finding.line:
        physical["region"] = {"startLine": finding.line}
        if finding.column:
            physical["region"]["startColumn"] = finding.column
    location: dict = {"physicalLocation": physical}
    if finding.location:
        location["logicalLocations"] = [{"fullyQualifiedName": finding.location}]
    return [location]


def _result(finding: Finding, index: int, anchor: str | None, root: Path | None) -> dict:
    result = {"ruleId": finding.rule, "ruleIndex": index,
              "level": finding.level if finding.kind == FAIL else NONE,
              "message": {"text": "\n".join([finding.message, *finding.details])},
              "locations": _location(finding, anchor, root),
              "partialFingerprints": {FINGERPRINT: finding.fingerprint}}
    if finding.kind != FAIL:
        result["kind"] = finding.kind
    properties = {name: value for name, value in (("expected", finding.expected),
                                                  ("actual", finding.actual))
                  if value is not ABSENT}
    properties.update(dict(finding.facts))
    if finding.location:
        properties["location"] = finding.location
    if properties:
        result["properties"] = properties
    return result


def _rule(report: Report, rule_id: str) -> dict:
    described = report.rule(rule_id)
    first = next(f for f in report.findings if f.rule == rule_id)
    return {"id": rule_id, "shortDescription": {"text": described.short},
            "help": {"text": described.help},
            "defaultConfiguration": {"level": first.level if first.kind == FAIL else NONE}}


def render(report: Report, *, root: Path | None = None) -> str:
    findings = [f for f in report.findings if f.kind not in (PASS, NOT_APPLICABLE)]
    rule_ids = list(dict.fromkeys(f.rule for f in findings))
    index = {rule_id: number for number, rule_id in enumerate(rule_ids)}
    base = Path(os.path.abspath(root or os.curdir)).as_uri().rstrip("/") + "/"
    run = {"tool": {"driver": {"name": TOOL, "version": _version(),  # no project URL yet:
                               "rules": [_rule(report, rule_id) for rule_id in rule_ids]}},
           "automationDetails": {"id": f"{TOOL}/{report.command.replace(' ', '-')}/"},
           "originalUriBaseIds": {ROOT_ID: {"uri": base}},
           "results": [_result(f, index[f.rule], report.anchor, root) for f in findings],
           "columnKind": "unicodeCodePoints"}
    return json_visible(json.dumps({"$schema": SARIF_SCHEMA, "version": SARIF_VERSION,
                                    "runs": [run]}, indent=2, ensure_ascii=False))
