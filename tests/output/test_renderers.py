"""The renderers over hand-made reports: escaping, levels, passes, limits; and the one-way
rule that each format is built in its own file only."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from flarespec.output import github, junit, markdown, sarif, text
from flarespec.output.formats import FORMATS, render
from flarespec.output.model import NOT_APPLICABLE, NOTE, PASS, WARNING, Finding, \
    Report, Section, relative_uri

SOURCE = Path(__file__).resolve().parents[2] / "src" / "flarespec"
NASTY = "100% broken\r\nsecond line: a, b"


def report(*findings, ok=False) -> Report:
    return Report("spec lint", "title", ok, [Section("heading", list(findings))])


def test_github_escapes_percent_cr_lf_in_data_and_colon_comma_in_properties(tmp_path):
    """A message is one line: its own CR LF shown escaped (issue 23); the lines of the
    details are the renderer's, joined by %0A."""
    finding = Finding("r.one", NASTY, file=str(tmp_path / "a, b:c.yaml"), line=3, column=2,
                      title="t: x, y", details=("d1\rx", "d2"))
    line = github.render(report(finding), root=tmp_path).splitlines()[0]
    assert line == ("::error file=a%2C b%3Ac.yaml,line=3,col=2,title=t%3A x%2C y::"
                    "100%25 broken\\r\\nsecond line: a, b [r.one]%0Ad1\\rx%0Ad2")


def test_github_levels_and_passes():
    lines = github.render(report(Finding("a", "e"), Finding("b", "w", WARNING),
                                 Finding("c", "n", NOTE), Finding("d", "p", NOTE, PASS),
                                 ok=True)).splitlines()
    assert [line.split(" ")[0] for line in lines] == ["::error", "::warning", "::notice",
                                                      "::notice"]
    assert "p" not in [line.rsplit("::", 1)[1] for line in lines]  # a pass is not annotated
    assert lines[-1].startswith("::notice title=flarespec spec lint::")


def test_junit_escapes_and_classes_failures_skips_and_passes():
    xml = junit.render(report(Finding("a", "<&>\"'"), Finding("b", "skip", NOTE, NOT_APPLICABLE),
                              Finding("c", "ok", NOTE, PASS), Finding("d", "w", WARNING)))
    suite = ElementTree.fromstring(xml).find("testsuite")
    assert suite.get("tests") == "4" and suite.get("failures") == "1" and suite.get("skipped") == "1"
    cases = suite.findall("testcase")
    assert cases[0].find("failure").get("message") == "<&>\"'"
    assert cases[1].find("skipped") is not None and list(cases[2]) == []
    assert cases[3].find("failure") is None and cases[3].find("system-out") is not None


def test_markdown_cells_escape_pipes_and_newlines():
    """A detail is a line of its own (``<br>``); a message's line break is shown escaped."""
    out = markdown.render(report(Finding("a", "x | y\nz", details=("w",))))
    row = next(line for line in out.splitlines() if line.startswith("| error"))
    assert "x \\| y\\\\nz<br>w" in row


def test_text_shows_limit_and_counts_the_rest_and_verbose_shows_all():
    section = Section("rule r (7)", [Finding("r", f"m{i}", expected=1, actual=2)
                                     for i in range(7)], rule="r", limit=5, more=" (see it)")
    short = text.render(Report("measure", "t", False, [section]))
    assert "m4 (expected 1, actual 2)" in short and "m5" not in short
    assert "… and 2 more (see it)" in short
    full = text.render(Report("measure", "t", False, [section]), verbose=True)
    assert "m6" in full and "expected: 1" in full and "…" not in full


def test_sarif_level_is_none_for_a_kind_other_than_fail(tmp_path):
    log = json.loads(sarif.render(report(Finding("a", "x", WARNING, "informational",
                                                 file=str(tmp_path / "f")), ok=True),
                                  root=tmp_path))
    (result,) = log["runs"][0]["results"]
    assert result["level"] == "none" and result["kind"] == "informational"


def test_relative_uri_is_never_absolute_or_empty(tmp_path):
    assert relative_uri(str(tmp_path / "a" / "b.json"), tmp_path) == "a/b.json"
    assert relative_uri(str(tmp_path), tmp_path) == tmp_path.name
    assert relative_uri("/elsewhere/c.yaml", tmp_path).startswith("../")


def test_a_finding_refuses_a_line_below_one_and_an_unknown_level():
    with pytest.raises(ValueError):
        Finding("r", "m", line=0)
    with pytest.raises(ValueError):
        Finding("r", "m", level="fatal")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_an_empty_report(fmt):
    assert render(Report("spec lint", "nothing", True), fmt)


# one builder per format: nothing outside output/ writes workflow commands or JUnit
BUILT_ONLY_IN = {r"::(?:error|warning|notice)\b": "github.py", r"testsuite": "junit.py",
                 r"sarif-2\.1\.0|\"2\.1\.0\"": "sarif.py"}


@pytest.mark.parametrize("pattern", BUILT_ONLY_IN)
def test_each_format_is_built_in_its_own_file(pattern):
    found = sorted(str(path.relative_to(SOURCE)) for path in SOURCE.rglob("*.py")
                   if re.search(pattern, path.read_text()))
    assert found == [f"output/{BUILT_ONLY_IN[pattern]}"], found
