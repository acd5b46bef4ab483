"""Issue 23, item 6 (and issue 24): a spec's ``metric`` is optional. ``validate-pair`` on a
pair whose spec declares none passes with a receipt without any metric; ``measure``, which
exports one metric for the runner, rejects at spec selection with ``metric.undeclared``
(nothing validated for the packet); ``flarespec report`` renders such receipts. Used to be:
exit 2, ``internal error: TypeError: 'NoneType' object is not subscriptable``, no receipt."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_run import run

TOY = Path(__file__).resolve().parents[1] / "engine" / "toy"
SPEC = TOY / "base.yaml"  # declares no metric
NO_METRIC = "metric.undeclared"


def metric_keys(value) -> set[str]:
    """Every key anywhere in a receipt that names a metric."""
    if isinstance(value, dict):
        found = {key for key in value if key in ("metric", "metrics")}
        return found.union(*(metric_keys(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(metric_keys(item) for item in value))
    return set()


@pytest.fixture
def pair(tmp_path):
    roots = []
    for name in ("a", "b"):
        shutil.copytree(TOY / "inventory", tmp_path / name)
        roots.append(tmp_path / name / "index.json")
    return roots


def test_validate_pair_without_a_metric_passes_with_a_receipt_without_one(pair, tmp_path):
    output = tmp_path / "out" / "pair.json"
    result = run("validate-pair", "--baseline", pair[0], "--candidate", pair[1],
                 "--output", output, "--spec", SPEC)
    assert result.exit_code == 0, result.output
    receipt = json.loads(output.read_text())
    assert receipt["status"] == "pass" and receipt["violations"] == []
    assert metric_keys(receipt) == set()
    for role in ("baseline", "candidate"):
        record = receipt["pair"][role]
        assert record["valid"] is True and record["spec"] == "toy/base"
        assert set(record["files"]) == {"stock.json", "shelves/s0.json", "shelves/s1.json"}


@pytest.mark.parametrize("own_peer", [False, True], ids=["peer", "own-peer"])
def test_measure_without_a_metric_is_rejected_at_spec_selection(pair, tmp_path, own_peer):
    output = tmp_path / "a.json"
    peer = pair[0] if own_peer else pair[1]
    result = run("measure", "--packet", pair[0], "--peer", peer, "--output", output,
                 "--spec", SPEC)
    assert result.exit_code == 2, result.output
    receipt = json.loads(output.read_text())
    assert receipt["status"] == "rejected" and metric_keys(receipt) == set()
    assert [(v["packet"], v["rule"]) for v in receipt["violations"]] == [("packet", NO_METRIC)]
    (violation,) = receipt["violations"]
    assert violation["message"] == (
        f"spec toy/base ({SPEC}) declares no metric; measure reports one metric for the "
        f"runner: use validate-pair, which validates a pair without one")
    packet = receipt["packet"]
    assert packet["spec"] == "toy/base" and packet["valid"] is False
    assert packet["files"] == {} and packet["entry_sha256"] is None  # nothing validated
    if not own_peer:  # the peer is validated in full, as always
        assert receipt["peer"]["valid"] is True and len(receipt["peer"]["files"]) == 3
    assert "metric.undeclared" in result.output


@pytest.mark.parametrize("fmt", ["text", "json", "github", "junit", "markdown", "sarif"])
def test_report_renders_a_pass_without_a_metric(pair, tmp_path, fmt):
    output = tmp_path / "pair.json"
    assert run("validate-pair", "--baseline", pair[0], "--candidate", pair[1], "--output",
               output, "--spec", SPEC).exit_code == 0
    shown = run("report", output, "--format", fmt)
    assert shown.exit_code == 0, shown.output
    if fmt == "text":
        assert "flarespec validate-pair: PASS" in shown.output
        assert "baseline: no metric (spec toy/base declares none)" in shown.output
        assert "None" not in shown.output


def test_report_renders_the_no_metric_rejection(pair, tmp_path):
    output = tmp_path / "a.json"
    run("measure", "--packet", pair[0], "--peer", pair[1], "--output", output, "--spec", SPEC)
    shown = run("report", output)
    assert shown.exit_code == 1 and f"[packet] {NO_METRIC} (1)" in shown.output


def test_the_reader_still_refuses_a_pass_missing_a_metric_it_must_carry(pair, tmp_path):
    """Optional is not anything goes: a measure pass carries its metric; a pair pass carries
    one in both records or in neither."""
    output = tmp_path / "pair.json"
    run("validate-pair", "--baseline", pair[0], "--candidate", pair[1], "--output", output,
        "--spec", SPEC)
    receipt = json.loads(output.read_text())
    receipt["pair"]["baseline"]["metric"] = {"key": "metrics.k", "value": 1, "unit": "ns"}
    output.write_text(json.dumps(receipt))
    shown = run("report", output)
    assert shown.exit_code == 2
    assert "$.pair.candidate.metric: a pass carries the metric in both records or in neither" \
        in shown.output
    measured = tmp_path / "a.json"
    run("measure", "--packet", pair[0], "--peer", pair[0], "--output", measured, "--spec", SPEC)
    receipt = json.loads(measured.read_text())
    receipt.update(status="pass", violations=[])
    measured.write_text(json.dumps(receipt))
    shown = run("report", measured)
    assert shown.exit_code == 2 and "$.packet.metric: a measure pass carries its metric" \
        in shown.output


def test_spec_test_judges_a_spec_without_a_metric_by_its_rules(pair, tmp_path):
    """``spec test`` measures each case; for a spec that declares no metric it asks for no
    metric (``needs_metric=False``), so its accepted cases pass and its rejected ones are
    judged by their rules, not all refused with ``metric.undeclared``."""
    from flarespec.adapter.commands import measure

    passed = measure(pair[0], pair[1], tmp_path / "ok.json", spec_path=SPEC,
                     needs_metric=False)
    assert passed.exit_code == 0 and passed.receipt["status"] == "pass"
    assert metric_keys(passed.receipt) == set()
    stock = pair[1].parent / "stock.json"
    stock.write_text(stock.read_text().replace('"a": 1', '"a": 5'))
    rejected = measure(pair[1], pair[0], tmp_path / "no.json", spec_path=SPEC,
                       needs_metric=False)
    rules = {v["rule"] for v in rejected.receipt["violations"]}
    assert rejected.exit_code == 2 and NO_METRIC not in rules and "toy.item.count" in rules
