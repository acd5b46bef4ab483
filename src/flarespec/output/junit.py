"""The junit format: JUnit XML, as CI systems read test reports (docs/output.md, "junit").

One ``testsuite`` per section (named by its heading, else the command), one ``testcase``
per finding, passes included, named by its title and place (a file relative to ``root``,
as every file of the format): a finding that fails (level error, kind fail) is a
``failure``, one that does not apply is ``skipped``, any other is a passing case whose
``system-out`` says what was found; a case's text holds the finding's details and facts
in full (a failed spec case: its receipt in short). Built with ElementTree: every text is
escaped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

from flarespec.output.model import NOT_APPLICABLE, PASS, Finding, Report, relative_uri
from flarespec.output.text import where
from flarespec.output.visible import visible_report


def _body(finding: Finding) -> str:
    """The message, details and facts in full (a CI test report is read when it fails)."""
    facts = [f"{name}:\n{value}" if "\n" in value else f"{name}: {value}"
             for name, value in finding.facts]
    return "\n".join([finding.message, *finding.details, *facts,
                      f"rule {finding.rule}; fingerprint {finding.fingerprint}"])


def _name(finding: Finding, root: Path | None) -> str:
    """The test case's name: its title (else its rule) and where, the file relative to
    ``root`` as in the ``file`` attribute (never absolute), the location left out when the
    title already says it (``case x``)."""
    name = finding.title or finding.rule
    location = finding.location
    if location and location.split(" ", 1)[-1] in name:
        location = None
    shown = where(replace(finding, shown_file=finding.place_under(root), location=location))
    return f"{name} at {shown}" if shown and shown not in name else name


def _case(suite: ET.Element, classname: str, finding: Finding, root: Path | None) -> None:
    attributes = {"classname": classname, "name": _name(finding, root)}
    if finding.file:
        attributes["file"] = relative_uri(finding.file, root)
        if finding.line:
            attributes["line"] = str(finding.line)
    case = ET.SubElement(suite, "testcase", attributes)
    if finding.fails:
        ET.SubElement(case, "failure", message=finding.message,  # one line, cut: visible.py
                      type=finding.rule).text = _body(finding)
    elif finding.kind == NOT_APPLICABLE:
        ET.SubElement(case, "skipped", message=finding.message)
    elif finding.kind != PASS:
        ET.SubElement(case, "system-out").text = _body(finding)


def render(report: Report, *, root: Path | None = None) -> str:
    report = visible_report(report)
    suites = ET.Element("testsuites", name=f"flarespec {report.command}")
    for section in report.sections or []:
        name = section.heading or f"flarespec {report.command}"
        suite = ET.SubElement(suites, "testsuite", name=name,
                              tests=str(len(section.findings)),
                              failures=str(sum(f.fails for f in section.findings)),
                              skipped=str(sum(f.kind == NOT_APPLICABLE for f in section.findings)))
        for finding in section.findings:
            _case(suite, name, finding, root)
        notes = [*section.notes, *(report.footer if section is report.sections[-1] else [])]
        if notes:
            ET.SubElement(suite, "system-out").text = "\n".join(notes)
    if not report.sections:
        ET.SubElement(suites, "testsuite", name=f"flarespec {report.command}", tests="0",
                      failures="0", skipped="0")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)
