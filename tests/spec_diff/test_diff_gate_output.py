"""Every format says what the --fail-on gate decided and with what (issue 14 item 7): the
class, how many unacknowledged changes of it and which (subject and fingerprint), the
acknowledgements file and how many it acknowledged; an unreadable acknowledgements file is
named as such (item 10's message).

Since issue 16 the gate is the footer of every format (the gate sentence, then one line per
gate hit: class, subject, what, fingerprint): markdown has no "spec gate" section and
github no separate "spec gate" annotation (the run's one summary annotation carries the
footer), JUnit no "spec gate" suite (the footer is the last suite's system-out)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main

DATA = Path(__file__).parent / "data"
BASE, BOUNDS = DATA / "base.yaml", DATA / "bounds.yaml"  # bounds: 1 loosening, 3 review
GATE_FAILED = "spec gate --fail-on review: FAILED, 2 unacknowledged review changes"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def review_changes() -> list[dict]:
    document = json.loads(invoke("spec", "diff", BASE, BOUNDS, "--format", "json").stdout)
    return [c for c in document["specs"][0]["changes"] if c["class"] == "review"]


@pytest.fixture
def acks(tmp_path) -> Path:
    """Acknowledges the first review change."""
    path = tmp_path / "acks.yaml"
    path.write_text(f"- fingerprint: {review_changes()[0]['fingerprint']}\n  reason: known\n")
    return path


def gate(fmt: str, acks: Path) -> tuple[int, str]:
    result = invoke("spec", "diff", BASE, BOUNDS, "--fail-on", "review", "--ack", acks,
                    "--format", fmt)
    return result.exit_code, result.stdout


def test_text_says_the_gate_failed_on_which_changes_and_with_which_acks(acks):
    code, out = gate("text", acks)
    assert code == 1
    lines = out.splitlines()
    head = lines.index(f"spec gate --fail-on review: FAILED, 2 unacknowledged review changes "
                       f"(acknowledgements {acks}: 1 acknowledged)")
    listed = lines[head + 1:]
    assert len(listed) == 2
    for change in review_changes()[1:]:
        assert any(change["subject"] in line and f"[{change['fingerprint']}]" in line
                   for line in listed)


def test_markdown_has_a_gate_section(acks):
    """The gate is the markdown's footer: its sentence a paragraph, then one paragraph per
    gate hit (class, subject, fingerprint); the hits also are error rows of the table."""
    code, out = gate("markdown", acks)
    assert code == 1
    paragraphs = out.split("\n\n")
    sentence = f"{GATE_FAILED} (acknowledgements {acks}: 1 acknowledged)"
    assert sentence in paragraphs
    footer = paragraphs[paragraphs.index(sentence) + 1:]
    assert len(footer) == 2
    for change, line in zip(review_changes()[1:], footer):
        assert line.strip().startswith("review ") and change["subject"] in line
        assert f"[{change['fingerprint']}]" in line
        assert any(row.startswith("| review |") and change["fingerprint"] in row
                   for row in out.splitlines())


def test_github_raises_an_error_per_failing_change_and_one_for_the_gate(acks):
    """The last ``::error`` is the run's summary (title ``flarespec spec diff``): the
    report's title, then the gate sentence and its hits as the body."""
    code, out = gate("github", acks)
    assert code == 1
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert len(errors) == 3
    assert errors[-1] == out.splitlines()[-1]
    assert errors[-1].startswith("::error title=flarespec spec diff::spec diff: 1 spec "
                                 "compared, 1 changed; both sides lint clean"
                                 f"%0A{GATE_FAILED} (acknowledgements ")
    for change in review_changes()[1:]:
        assert any(f"[{change['fingerprint']}]" in line and "file=" in line
                   for line in errors[:-1])
        assert f"[{change['fingerprint']}]" in errors[-1]
    # the acknowledged review change stays a notice
    first = review_changes()[0]["fingerprint"]
    assert any(line.startswith("::notice") and first in line for line in out.splitlines())


def test_junit_has_a_gate_suite(acks):
    """There is no "spec gate" suite (and so no gate properties) any more: the gate hits
    are the failures of the diff's suite, and the gate sentence (class, unacknowledged
    count, acknowledgements file and count) with its hits is the last suite's
    system-out."""
    code, out = gate("junit", acks)
    assert code == 1
    suites = list(ElementTree.fromstring(out))
    assert [s.get("name") for s in suites if s.get("name") == "spec gate"] == []
    suite = suites[-1]
    assert suite.get("failures") == "2"
    said = suite.find("system-out").text.splitlines()
    assert said[0] == f"{GATE_FAILED} (acknowledgements {acks}: 1 acknowledged)"
    failed = [case.find("failure") for case in suite.iter("testcase")
              if case.find("failure") is not None]
    for change, line, failure in zip(review_changes()[1:], said[1:], failed, strict=True):
        assert change["fingerprint"] in line and change["fingerprint"] in failure.text


def test_json_has_the_gate(acks):
    code, out = gate("json", acks)
    assert code == 1
    document = json.loads(out)
    assert document["gate_failed"] is True
    found = document["gate"]
    assert (found["fail_on"], found["failed"], found["unacknowledged"], found["ack_file"],
            found["acknowledged"]) == ("review", True, 2, str(acks), 1)
    assert [(c["subject"], c["fingerprint"]) for c in found["changes"]] == [
        (c["subject"], c["fingerprint"]) for c in review_changes()[1:]]


PASSED = ("spec gate --fail-on loosening: passed, no unacknowledged loosening change "
          "(no acknowledgements file)")


@pytest.mark.parametrize("fmt, expected", [
    ("text", f"\n{PASSED}"),
    ("markdown", f"\n\n{PASSED}\n"),  # the footer paragraph (issue 16)
    ("github", "::notice title=flarespec spec diff::spec diff: 1 spec compared, 1 changed; both sides lint clean"
               f"%0A{PASSED}"),
    ("junit", f"<system-out>{PASSED}</system-out>\n  </testsuite>\n</testsuites>"),
    ("json", '"failed": false'),
])
def test_a_passed_gate_says_so_in_every_format(fmt, expected):
    result = invoke("spec", "diff", BASE, DATA / "header.yaml", "--fail-on", "loosening",
                    "--format", fmt)
    assert result.exit_code == 0 and expected in result.stdout


def test_without_fail_on_there_is_no_gate_report():
    out = invoke("spec", "diff", BASE, BOUNDS).stdout
    assert "spec gate" not in out


def test_a_missing_acknowledgements_file_is_named_as_such(tmp_path):
    missing = tmp_path / "acks.yaml"
    result = invoke("spec", "diff", BASE, BOUNDS, "--fail-on", "loosening", "--ack", missing)
    assert result.exit_code == 2
    assert f"cannot read the acknowledgements file {missing}: No such file or directory " \
        "[diff.ack]" in result.output
    assert "cannot read spec" not in result.output and "Traceback" not in result.output
    assert result.stdout == ""  # no report


def test_a_fifo_as_acknowledgements_file_is_named_as_such(tmp_path):
    fifo = tmp_path / "acks.yaml"
    os.mkfifo(fifo)
    result = invoke("spec", "diff", BASE, BOUNDS, "--ack", fifo)
    assert result.exit_code == 2
    assert f"cannot read the acknowledgements file {fifo}: it is a FIFO (named pipe), not a " \
        "regular file [diff.ack]" in result.output


@pytest.mark.parametrize("text, message", [
    ("", None),  # an empty file acknowledges nothing (not an error)
    ("{a: 1}\n", "the acknowledgements file {path}: wants a list of {{fingerprint, reason}}"),
    ("- {fingerprint: 1234567890123456, reason: r}\n",
     "the acknowledgements file {path}: entry 1: fingerprint must be non-empty text, got int "
     "(quote it: YAML reads an all-digit fingerprint as a number)"),
])
def test_acknowledgement_file_problems_are_worded_for_it(tmp_path, text, message):
    from flarespec.review.render import read_acks
    from flarespec.compiler.errors import SpecInvalid

    path = tmp_path / "acks.yaml"
    path.write_text(text)
    if message is None:
        assert read_acks(path) == {}
        return
    with pytest.raises(SpecInvalid) as raised:
        read_acks(path)
    assert raised.value.issues[0].message.startswith(message.format(path=path))
