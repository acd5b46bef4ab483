"""Every format says what the --fail-on gate decided and with what (issue 14 item 7): the
class, how many unacknowledged changes of it and which (subject and fingerprint), the
acknowledgements file and how many it acknowledged; an unreadable acknowledgements file is
named as such (item 10's message)."""

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
    code, out = gate("markdown", acks)
    assert code == 1
    assert "### spec gate: failed" in out
    assert f"`--fail-on review`: **2 unacknowledged review changes**; acknowledgements " \
        f"{acks}: 1 acknowledged" in out
    for change in review_changes()[1:]:
        assert f"| review |" in out and f"`{change['fingerprint']}`" in out.split(
            "### spec gate")[1]


def test_github_raises_an_error_per_failing_change_and_one_for_the_gate(acks):
    code, out = gate("github", acks)
    assert code == 1
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert len(errors) == 3
    assert errors[-1].startswith("::error title=spec gate failed::spec gate --fail-on review: "
                                 "FAILED, 2 unacknowledged review changes")
    for change in review_changes()[1:]:
        assert any(f"fingerprint {change['fingerprint']}" in line and "file=" in line
                   for line in errors[:-1])
    # the acknowledged review change stays a notice
    first = review_changes()[0]["fingerprint"]
    assert any(line.startswith("::notice") and first in line for line in out.splitlines())


def test_junit_has_a_gate_suite(acks):
    code, out = gate("junit", acks)
    assert code == 1
    suite = [s for s in ElementTree.fromstring(out) if s.get("name") == "spec gate"][0]
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties == {"fail_on": "review", "ack_file": str(acks), "acknowledged": "1",
                          "unacknowledged": "2"}
    failure = suite.find("testcase").find("failure")
    assert failure.get("message") == "2 unacknowledged review changes"
    for change in review_changes()[1:]:
        assert change["fingerprint"] in failure.text


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


@pytest.mark.parametrize("fmt, expected", [
    ("text", "spec gate --fail-on loosening: passed, no unacknowledged loosening change "
             "(no acknowledgements file)"),
    ("markdown", "### spec gate: passed"),
    ("github", "::notice title=spec gate passed::"),
    ("junit", '<testsuite name="spec gate" tests="1" failures="0">'),
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
    from flarespec.spec.errors import SpecInvalid

    path = tmp_path / "acks.yaml"
    path.write_text(text)
    if message is None:
        assert read_acks(path) == {}
        return
    with pytest.raises(SpecInvalid) as raised:
        read_acks(path)
    assert raised.value.issues[0].message.startswith(message.format(path=path))
