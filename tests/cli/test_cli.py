"""The command line: help that teaches, thin commands, exit codes, JSON and human output."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from flarespec.cli import main
from flarespec.adapter.receipt_report import ReceiptView, receipt_report, summary as render
from flarespec.output.text import where
from flarespec.fixtures.mutations import set_json


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_help_lists_the_commands_and_the_runner_usage():
    result = invoke("--help")
    assert result.exit_code == 0
    for word in ("measure", "validate-pair", "demo", "spec", "fixture", "--peer"):
        assert word in result.output


def test_python_dash_m_works_like_the_console_script():
    completed = subprocess.run([sys.executable, "-m", "flarespec", "--help"],
                               capture_output=True, text=True)
    assert completed.returncode == 0 and "validate-pair" in completed.stdout


def test_missing_required_option_is_a_usage_error_exit_2():
    result = invoke("measure", "--packet", "x.json")
    assert result.exit_code == 2 and "--peer" in result.output


def test_measure_prints_a_summary_and_quiet_silences_it(packet_pair, tmp_path):
    a, b = packet_pair
    loud = invoke("measure", "--packet", a, "--peer", b, "--output", tmp_path / "r.json")
    assert loud.exit_code == 0 and "PASS  metrics.delivery_ttft_ns" in loud.output
    quiet = invoke("measure", "--packet", a, "--peer", b, "--output", tmp_path / "q.json",
                   "--quiet")
    assert quiet.exit_code == 0 and quiet.output == ""
    assert json.loads((tmp_path / "q.json").read_text())["status"] == "pass"


def test_rejection_summary_groups_violations_by_rule(packet_pair, tmp_path):
    a, b = packet_pair
    (a.parent / "corpus.json").unlink()
    result = invoke("measure", "--packet", a, "--peer", b, "--output", tmp_path / "r.json")
    assert result.exit_code == 2
    assert "REJECTED" in result.output and "[packet] corpus.file.missing (1)" in result.output
    assert "no metric exported" in result.output


def test_fixture_write_and_spec_commands(tmp_path):
    written = invoke("fixture", "write", tmp_path / "p", "--target-arch", "sm121", "--seed", 3)
    assert written.exit_code == 0 and written.output.strip().endswith("packet.json")
    assert invoke("fixture", "write", tmp_path / "p").exit_code != 0  # not empty: refused
    listed = invoke("spec", "list")
    assert "flare/bce032c0" in listed.output
    shown = invoke("spec", "show", "flare/bce032c0", "--format", "json")
    resolved = json.loads(shown.output)
    assert resolved["id"] == "flare/bce032c0" and "extends" not in resolved
    assert invoke("spec", "lint", "flare/bce032c0").exit_code == 0


def test_spec_lint_reports_file_line_column(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("flarespec: 1\nid: t/bad\ntitle: t\nbogus: 1\n")
    result = invoke("spec", "lint", bad)
    assert result.exit_code == 2
    assert f"{bad}:4:1: unknown key 'bogus'" in result.output


def test_spec_diff_classifies_a_loosened_child(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("flarespec: 1\nid: flare/child\ntitle: c\nextends: flare/bce032c0\n"
                     "constants:\n  capacity_labels: [sm120, sm121, sm100]\n"
                     "drop_rules: [observation.error]\n")
    result = invoke("spec", "diff", "flare/bce032c0", child, "--format", "json")
    changes = json.loads(result.output)["specs"][0]["changes"]
    found = {(c["class"], c["subject"]) for c in changes}
    assert ("loosening", "rule observation.error") in found
    assert ("loosening", "rule measurements.labels.capacity-label") in found
    assert ("loosening", "rule memory-report.capacity-label") in found


def test_fixture_check_shows_what_a_spec_edit_changes(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("flarespec: 1\nid: flare/child\ntitle: c\nextends: flare/bce032c0\n"
                     "drop_rules: [observation.error]\n")
    bundled = invoke("fixture", "check", "flare/bce032c0", "-k", "observation-error-recorded")
    assert bundled.exit_code == 0 and "1 passed, 0 failed" in bundled.output
    edited = invoke("fixture", "check", child, "-k", "observation-error-recorded")
    assert edited.exit_code == 0  # the dropped rule's case no longer applies: not a failure
    assert "observation-error-recorded: rule observation.error is dropped" in edited.output


# ------------------------------------------------------------ measure / validate-pair


def test_a_directory_as_packet_is_evidence_in_a_receipt_not_a_usage_error(packet_pair,
                                                                          tmp_path):
    a, b = packet_pair
    a.unlink()
    a.mkdir()
    result = invoke("measure", "--packet", a, "--peer", b, "--output", tmp_path / "r.json")
    assert result.exit_code == 2 and "Usage:" not in result.output
    receipt = json.loads((tmp_path / "r.json").read_text())
    assert [(v["packet"], v["rule"], v["file"]) for v in receipt["violations"]] == [
        ("packet", "packet.json.not-regular-file", "packet.json")]


def test_verbose_shows_every_violation_with_its_place_expected_and_actual(packet_pair,
                                                                          tmp_path):
    a, b = packet_pair
    set_json(b.parent, "preparation/memory-report.json", "$.kv_pages_total", 9999)
    output = tmp_path / "r.json"
    for command in (("measure", "--packet", b, "--peer", b),
                    ("validate-pair", "--baseline", a, "--candidate", b)):
        terse = invoke(*command, "--output", output)
        receipt = json.loads(output.read_text())
        verbose = invoke(*command, "--output", output, "--verbose")
        assert json.loads(output.read_text()) == receipt  # the receipt does not change
        assert terse.exit_code == verbose.exit_code == 2
        assert "expected:" not in terse.output and "… and" in terse.output
        assert "… and" not in verbose.output
        findings = [f for f in receipt_report(ReceiptView(receipt), None, rules={}).findings
                    if f.listed]
        assert len(findings) == len(receipt["violations"])
        for violation, finding in zip(receipt["violations"], findings):
            assert (finding.place, finding.line, finding.location) == \
                (violation.get("file"), violation.get("line"), violation.get("location"))
            shown = f"{where(finding)}: {violation['message']}" if where(finding) \
                else violation["message"]
            assert shown in verbose.output
            for key in ("expected", "actual"):
                if key in violation:
                    assert f"{key}: {json.dumps(violation[key])}" in verbose.output


def test_quiet_and_verbose_exclude_each_other(packet_pair, tmp_path):
    a, b = packet_pair
    result = invoke("measure", "--packet", a, "--peer", b, "--output", tmp_path / "r.json",
                    "-q", "-v")
    assert result.exit_code == 2 and "exclude each other" in result.output
    assert not (tmp_path / "r.json").exists()


def test_a_receipt_that_cannot_be_written_exits_2_with_a_message(packet_pair, tmp_path):
    a, b = packet_pair
    (tmp_path / "file").write_text("not a directory")
    result = invoke("measure", "--packet", a, "--peer", b, "--output",
                    tmp_path / "file" / "r.json")
    assert result.exit_code == 2
    # refused before any work, naming what is in the way (issue 13: it said "File exists")
    assert f"{tmp_path / 'file'} is not a directory" in result.output
    assert "nothing was written" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "packets"]


def test_an_internal_error_exits_2_without_a_traceback(packet_pair, tmp_path, monkeypatch):
    from flarespec.adapter import commands

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")
    monkeypatch.setattr(commands, "measure", broken)
    a, b = packet_pair
    result = invoke("measure", "--packet", a, "--peer", b, "--output", tmp_path / "r.json")
    assert result.exit_code == 2
    assert "internal error: RuntimeError: a bug" in result.output
    assert "Traceback" not in result.output


# ------------------------------------------------------------------------ the summary


def _rejection(*violations, truncated=()):
    return {"command": "measure", "status": "rejected", "violations": list(violations),
            "violations_truncated": list(truncated), "warnings": []}


def test_a_violation_with_a_line_is_shown_as_file_colon_line():
    violation = {"packet": "packet", "rule": "response.sse", "file": "run/x/response.sse",
                 "line": 12, "location": "$.events[3]", "message": "bad event",
                 "expected": 1, "actual": "1"}
    text = render(_rejection(violation, {**violation, "location": "line 12"}), "r.json",
                  verbose=True)
    assert "      run/x/response.sse:12 $.events[3]: bad event" in text
    assert "      run/x/response.sse:12: bad event" in text
    assert 'expected: 1\n' in text and 'actual: "1"' in text


def test_the_summary_says_how_many_violations_were_not_kept():
    violation = {"packet": "packet", "rule": "response.sse", "file": "f", "location": None,
                 "message": "m"}
    text = render(_rejection(*[violation] * 100, truncated=[
        {"packet": "packet", "rule": "response.sse", "kept": 100, "total": 2_000_000}]),
        "r.json")
    assert "REJECTED  2000000 violations of 1 rule" in text
    assert "[packet] response.sse (2000000)" in text
    assert "… and 95 more (see the receipt)" in text
    assert "… 1999900 more not kept (rule response.sse: total 2000000)" in text


def test_runner_commands_name_the_environment_they_read():
    """FLARESPEC_JOBS and FLARESPEC_CACHE change how a command runs (never its receipt):
    their --help says so, with the variables' names as adapter.parallel and spec.cache
    read them."""
    from flarespec.adapter.parallel import JOBS_VARIABLE
    from flarespec.compiler.cache import DIRECTORY_VARIABLE, DISABLE_VARIABLE

    for command in ("measure", "validate-pair"):
        shown = invoke(command, "--help").output
        for variable in (JOBS_VARIABLE, DISABLE_VARIABLE, DIRECTORY_VARIABLE):
            assert variable in shown, (command, variable)
