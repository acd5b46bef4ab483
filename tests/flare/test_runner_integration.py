"""Behave exactly like the external-benchmark runner (contract section 11), with real processes."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packet_tree import tree_digest
from receipt_checks import all_keys

CLI = (sys.executable, "-m", "flarespec")
METRIC_KEY = "metrics.delivery_ttft_ns"


def run_argv(argv: tuple, result: Path) -> int:
    """Run one runner argv with {result} replaced; the runner owns the result path."""
    concrete = [str(result) if part == "{result}" else str(part) for part in argv]
    completed = subprocess.run(concrete, capture_output=True, text=True, timeout=120,
                               env={**os.environ, "PYTHONWARNINGS": "error"})
    assert "Traceback" not in completed.stderr, completed.stderr
    return completed.returncode


def read_dotted(path: Path, dotted: str):
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def measurement(argv: tuple, result: Path) -> float | None:
    """A complete measurement: exit 0 and a finite number at the metric key."""
    code = run_argv(argv, result)
    value = read_dotted(result, METRIC_KEY)
    complete = code == 0 and isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)
    return value if complete else None


def run_trial(a: Path, b: Path, results: Path) -> dict:
    results.mkdir(parents=True, exist_ok=True)
    baseline_command = CLI + ("measure", "--packet", a, "--peer", b, "--output", "{result}")
    candidate_command = CLI + ("measure", "--packet", b, "--peer", a, "--output", "{result}")
    validation_command = CLI + ("validate-pair", "--baseline", a, "--candidate", b,
                                "--output", "{result}")
    baseline = measurement(baseline_command, results / "baseline.json")
    candidate = measurement(candidate_command, results / "candidate.json")
    validation = run_argv(validation_command, results / "validation.json")
    complete = baseline is not None and candidate is not None and validation == 0
    return {"baseline": baseline, "candidate": candidate, "validation_exit": validation,
            "verdict": "COMPARED" if complete else "INCONCLUSIVE"}


def independent_ttft_median(packet_json: Path) -> float:
    import statistics

    root = packet_json.parent
    packet = json.loads(packet_json.read_text())
    corpus = json.loads((root / packet["corpus"]).read_text())
    values = []
    for group in corpus["groups"]:
        if group["kind"] != "ttft-512":
            continue
        for request in group["requests"]:
            observation = json.loads((root / packet["run"] / group["id"] / request["id"] /
                                      "observation.json").read_text())
            first = next(e for e in observation["events"] if e["token_ids"])
            values.append(first["arrival_ns"])
    return statistics.median(values)


def test_valid_pair_gives_two_complete_measurements_and_a_passing_validation(packet_pair,
                                                                             tmp_path):
    a, b = packet_pair
    trial = run_trial(a, b, tmp_path / "results")
    assert trial["verdict"] == "COMPARED"
    assert trial["baseline"] == independent_ttft_median(a)
    assert trial["candidate"] == independent_ttft_median(b)
    assert trial["baseline"] != trial["candidate"]
    pair = json.loads((tmp_path / "results" / "validation.json").read_text())
    assert pair["status"] == "pass" and "metrics" not in pair
    assert pair["pair"]["baseline"]["metrics"]["delivery_ttft_ns"] == trial["baseline"]


def test_incomplete_peer_gives_no_metric_and_an_inconclusive_trial(packet_pair, tmp_path):
    a, b = packet_pair
    observation = next((b.parent / "run").glob("*ttft-512/*/observation.json"))
    observation.unlink()  # the peer is now incomplete evidence
    trial = run_trial(a, b, tmp_path / "results")
    assert trial == {"baseline": None, "candidate": None, "validation_exit": 2,
                     "verdict": "INCONCLUSIVE"}
    ttft = independent_ttft_median(a)
    for name in ("baseline.json", "candidate.json", "validation.json"):
        receipt = json.loads((tmp_path / "results" / name).read_text())
        assert receipt["status"] == "rejected"
        assert not {"metrics", "samples"} & set(all_keys(receipt))
        assert str(ttft) not in json.dumps(receipt)  # not even the valid packet's own value
        assert any(v["rule"] == "observation.file.missing" for v in receipt["violations"])


def test_commands_leave_every_packet_byte_identical(packet_pair, tmp_path):
    a, b = packet_pair
    before = tree_digest(a.parent.parent)
    run_trial(a, b, tmp_path / "results")
    run_trial(a, a, tmp_path / "self")
    assert tree_digest(a.parent.parent) == before


def test_rejected_packet_is_left_byte_identical(packet_pair, tmp_path):
    a, b = packet_pair
    (a.parent / "corpus.json").write_text("{\"name\": 1, \"name\": 2}")
    before = tree_digest(a.parent.parent)
    trial = run_trial(a, b, tmp_path / "results")
    assert trial["verdict"] == "INCONCLUSIVE"
    assert tree_digest(a.parent.parent) == before


def test_wrong_command_line_exits_2_without_a_receipt(tmp_path):
    result = tmp_path / "r.json"
    code = run_argv(CLI + ("measure", "--packet", tmp_path / "p.json", "--output", "{result}"),
                    result)
    assert code == 2
    assert not result.exists()


def test_output_inside_a_packet_root_is_refused_and_nothing_is_written(packet_pair):
    a, b = packet_pair
    before = tree_digest(a.parent.parent)
    for inside in (a.parent / "receipt.json", b.parent / "run" / "r.json"):
        completed = subprocess.run([*CLI, "measure", "--packet", str(a), "--peer", str(b),
                                    "--output", str(inside)], capture_output=True, text=True)
        assert completed.returncode == 2
        assert "inside the packet root" in completed.stderr
        assert "Traceback" not in completed.stderr
    assert tree_digest(a.parent.parent) == before


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_output_through_a_symlink_into_a_packet_root_is_refused(packet_pair, tmp_path):
    a, b = packet_pair
    link = tmp_path / "sneaky"
    link.symlink_to(a.parent, target_is_directory=True)
    before = tree_digest(a.parent.parent)
    completed = subprocess.run([*CLI, "measure", "--packet", str(a), "--peer", str(b),
                                "--output", str(link / "receipt.json")],
                               capture_output=True, text=True)
    assert completed.returncode == 2
    assert tree_digest(a.parent.parent) == before


def test_an_unreadable_entry_file_gives_rejection_receipts_not_a_crash(packet_pair, tmp_path):
    a, b = packet_pair
    a.unlink()
    a.symlink_to("packet.json")  # a symlink loop: evidence, not a traceback
    trial = run_trial(a, b, tmp_path / "results")
    assert trial == {"baseline": None, "candidate": None, "validation_exit": 2,
                     "verdict": "INCONCLUSIVE"}
    expected = {"baseline.json": {("packet", "packet.json.unreadable")},
                "candidate.json": {("peer", "packet.json.unreadable"),
                                   ("pair", "pair.peer-invalid")},
                "validation.json": {("baseline", "packet.json.unreadable")}}
    for name, rules in expected.items():
        receipt = json.loads((tmp_path / "results" / name).read_text())
        assert receipt["status"] == "rejected" and "metrics" not in receipt
        assert {(v["packet"], v["rule"]) for v in receipt["violations"]} == rules
