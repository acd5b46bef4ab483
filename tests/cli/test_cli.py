"""The command line: help that teaches, thin commands, exit codes, JSON and human output."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from flarespec.cli import main


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
    changes = json.loads(result.output)["changes"]
    found = {(c["class"], c["subject"]) for c in changes}
    assert ("loosening", "rule observation.error") in found
    assert ("loosening", "rule measurements.labels.capacity-label") in found
    assert ("loosening", "rule memory-report.capacity-label") in found


def test_fixture_check_shows_what_a_spec_edit_changes(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("flarespec: 1\nid: flare/child\ntitle: c\nextends: flare/bce032c0\n"
                     "drop_rules: [observation.error]\n")
    bundled = invoke("fixture", "check", "-k", "observation-error-recorded", "--format", "json")
    assert bundled.exit_code == 0
    assert [r["ok"] for r in json.loads(bundled.output)] == [True]
    edited = invoke("fixture", "check", "-k", "observation-error-recorded", "--spec", child,
                    "--format", "json")
    assert edited.exit_code == 2
    (result,) = json.loads(edited.output)
    assert result["ok"] is False and result["expected"] == "observation.error"
