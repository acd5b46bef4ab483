"""The adapter as a library: selection, pair matching, receipts (functions, not subprocesses)."""

from __future__ import annotations

import json

import pytest
from receipt_checks import all_keys

from flarespec.adapter import commands
from flarespec.adapter.commands import OutputRefused, measure, validate_pair
from flarespec.fixtures.mutations import refresh_digests, set_json

PEER_INVALID = "pair.peer-invalid"
INTERNAL_ERROR = "engine.internal-error"


def rules_of(receipt) -> set[str]:
    return {v["rule"] for v in receipt["violations"]}


def test_measure_pass_receipt_binds_identities_and_validator(packet_pair, tmp_path):
    a, b = packet_pair
    outcome = measure(a, b, tmp_path / "out" / "a.json")
    receipt = json.loads(outcome.output.read_text())
    assert outcome.exit_code == 0 and receipt == outcome.receipt
    assert receipt["status"] == "pass" and receipt["receipt_schema"] == "flarespec-receipt-v1"
    packet = receipt["packet"]
    assert receipt["metrics"]["delivery_ttft_ns"] == packet["metric"]["value"]
    assert [s["request"] for s in packet["metric"]["samples"]] == [
        "r0.ttft-512.q0", "r0.ttft-512.q1", "r0.ttft-512.q2"]
    assert packet["metric"]["contract"]["clock_domain"] == "client.perf_counter_ns.elapsed"
    assert packet["entry_sha256"] and len(packet["files"]) == 73
    identities = packet["identities"]
    assert identities["source"]["revision"] == "bce032c014bae34502ba22d3304fa084d5b40afe"
    assert identities["synthetic"] is True
    assert identities["prepared_capacity"]["target_arch"] == "sm120"
    assert identities["package_sha256"] == packet["files"]["package/flare-package.bin"]
    validator = receipt["validator"]
    assert validator["name"] == "flarespec" and validator["specs"][0]["id"] == "flare/bce032c0"
    assert len(validator["specs"][0]["resolved_sha256"]) == 64
    assert validator["hooks"] == [{"module": "flarespec.hooks.flare",
                                   "sha256": validator["hooks"][0]["sha256"]}]
    assert "not a measurement of service quality" in receipt["limits"]
    assert receipt["warnings"] == [] and receipt["violations"] == []
    assert receipt["violations_truncated"] == []
    assert receipt["peer"]["same_as_packet"] is False and "metric" not in receipt["peer"]


def test_a_packet_may_be_its_own_peer(packet_pair, tmp_path):
    a, _ = packet_pair
    outcome = measure(a, a, tmp_path / "self.json")
    assert outcome.exit_code == 0 and outcome.receipt["peer"]["same_as_packet"] is True


def test_missing_packet_json_is_a_rejection_with_a_receipt(tmp_path):
    outcome = measure(tmp_path / "nope" / "packet.json", tmp_path / "nope" / "packet.json",
                      tmp_path / "r.json")
    assert outcome.exit_code == 2
    assert rules_of(outcome.receipt) == {"packet.json.missing"}  # its own peer: no pair rule
    assert "metrics" not in outcome.receipt


def test_unknown_revision_names_the_supported_revisions(packet_pair, tmp_path):
    a, _ = packet_pair
    set_json(a.parent, "packet.json", "$.source.revision", "0" * 40)
    outcome = measure(a, a, tmp_path / "r.json")
    assert rules_of(outcome.receipt) == {"spec.unsupported"}
    message = next(v["message"] for v in outcome.receipt["violations"]
                   if v["rule"] == "spec.unsupported")
    assert "bce032c014bae34502ba22d3304fa084d5b40afe" in message and "flare/bce032c0" in message


def test_spec_override_validates_against_the_named_file(packet_pair, tmp_path, flare_spec):
    a, _ = packet_pair
    set_json(a.parent, "packet.json", "$.source.revision", "0" * 40)
    refresh_digests(a.parent)
    child = tmp_path / "next.yaml"
    child.write_text("flarespec: 1\nid: flare/next\ntitle: next\nextends: flare/bce032c0\n"
                     "constants:\n  source:\n    repository: NVIDIA/flare-local-inference\n"
                     f"    revision: '{'0' * 40}'\n    readset: "
                     + json.dumps(flare_spec.constants["source"]["readset"]) + "\n")
    outcome = measure(a, a, tmp_path / "r.json", spec_path=child)
    assert outcome.exit_code == 0, outcome.receipt["violations"]
    assert outcome.receipt["validator"]["specs"][0]["id"] == "flare/next"


def test_a_broken_spec_override_is_a_rejection_naming_file_and_line(packet_pair, tmp_path):
    a, _ = packet_pair
    broken = tmp_path / "broken.yaml"
    broken.write_text("flarespec: 1\nid: broken/one\ntitle: t\nrules:\n  - id: a.b\n"
                      "    description: d\n    given: 'x:$'\n    assert: {no_such_kind: 1}\n")
    outcome = measure(a, a, tmp_path / "r.json", spec_path=broken)
    assert outcome.exit_code == 2
    spec_violations = [v for v in outcome.receipt["violations"] if v["rule"] == "spec.invalid"]
    assert any("no_such_kind" in v["message"] and v["location"] == "line 8, column 14"
               for v in spec_violations), spec_violations


def test_output_inside_a_root_raises_before_anything_is_written(packet_pair):
    a, b = packet_pair
    with pytest.raises(OutputRefused):
        measure(a, b, b.parent / "r.json")
    assert not (b.parent / "r.json").exists()


def test_validate_pair_pass_has_pair_values_and_no_top_level_metric(packet_pair, tmp_path):
    a, b = packet_pair
    outcome = validate_pair(a, b, tmp_path / "pair.json")
    receipt = outcome.receipt
    assert outcome.exit_code == 0 and "metrics" not in receipt
    assert receipt["pair"]["baseline"]["metrics"]["delivery_ttft_ns"] != \
        receipt["pair"]["candidate"]["metrics"]["delivery_ttft_ns"]


def test_validate_pair_rejection_has_no_metric_value(packet_pair, tmp_path):
    a, b = packet_pair
    set_json(b.parent, "preparation/memory-report.json", "$.kv_pages_total", 9999)
    refresh_digests(b.parent)
    receipt = validate_pair(a, b, tmp_path / "pair.json").receipt
    assert receipt["status"] == "rejected"
    assert "pair.prepared-capacity" in rules_of(receipt)
    assert not {"metrics", "samples", "metric"} & set(all_keys(receipt["pair"]))
    assert "metrics" not in receipt


def test_receipt_is_written_atomically_leaving_no_temporary_files(packet_pair, tmp_path):
    a, b = packet_pair
    out = tmp_path / "receipts"
    measure(a, b, out / "a.json")
    measure(a, b, out / "a.json")
    assert sorted(p.name for p in out.iterdir()) == ["a.json"]


def by_role(receipt) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for violation in receipt["violations"]:
        found.setdefault(violation["packet"], set()).add(violation["rule"])
    return found


def test_peer_invalid_is_reported_only_for_an_invalid_distinct_peer(packet_pair, tmp_path):
    a, b = packet_pair
    (b.parent / "corpus.json").unlink()
    own = measure(b, b, tmp_path / "own.json").receipt["violations"]
    assert "corpus.file.missing" in {v["rule"] for v in own}
    bad_packet = measure(b, a, tmp_path / "bad-packet.json").receipt
    assert by_role(bad_packet) == {"packet": {v["rule"] for v in own}}
    bad_peer = measure(a, b, tmp_path / "bad-peer.json").receipt
    assert by_role(bad_peer) == {"peer": {v["rule"] for v in own}, "pair": {PEER_INVALID}}
    (violation,) = [v for v in bad_peer["violations"] if v["rule"] == PEER_INVALID]
    assert violation["file"] is None and violation["location"] is None
    count = f"{len(own)} violation{'s' if len(own) != 1 else ''}"
    assert (f"the peer {b} is invalid ({count}, listed under packet "
            f"\"peer\")") in violation["message"]
    assert "metrics" not in bad_peer and bad_peer["status"] == "rejected"


def test_validate_pair_lists_each_packets_violations_without_peer_invalid(packet_pair,
                                                                         tmp_path):
    a, b = packet_pair
    (b.parent / "corpus.json").unlink()
    outcome = validate_pair(a, b, tmp_path / "pair.json")
    assert outcome.exit_code == 2
    assert set(by_role(outcome.receipt)) == {"candidate"}
    assert "corpus.file.missing" in by_role(outcome.receipt)["candidate"]


def test_a_failure_while_choosing_the_spec_is_a_violation_not_an_exception(packet_pair,
                                                                           tmp_path,
                                                                           monkeypatch):
    a, b = packet_pair

    def exploding(entry, specs, broken=()):
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")
    monkeypatch.setattr(commands, "select_spec", exploding)
    outcome = measure(a, b, tmp_path / "r.json")
    assert outcome.exit_code == 2 and "metrics" not in outcome.receipt
    assert by_role(outcome.receipt) == {"packet": {INTERNAL_ERROR}, "peer": {INTERNAL_ERROR},
                                        "pair": {PEER_INVALID}}
    assert "ValueError: Exceeds the limit" in outcome.receipt["violations"][0]["message"]


def test_a_failure_while_comparing_the_pair_is_a_violation_not_an_exception(packet_pair,
                                                                             tmp_path,
                                                                             monkeypatch):
    a, b = packet_pair

    def exploding(first, second):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(commands, "strict_equal", exploding)
    outcome = validate_pair(a, b, tmp_path / "r.json")
    assert outcome.exit_code == 2 and "metrics" not in outcome.receipt
    assert by_role(outcome.receipt) == {"pair": {INTERNAL_ERROR}}


def test_a_missing_spec_file_is_spec_invalid(packet_pair, tmp_path):
    a, _ = packet_pair
    outcome = measure(a, a, tmp_path / "r.json", spec_path=tmp_path / "absent.yaml")
    assert by_role(outcome.receipt) == {"packet": {"spec.invalid"}}
    assert "absent.yaml" in outcome.receipt["violations"][0]["message"]


def test_rules_the_report_cut_short_are_listed_with_their_totals(packet_pair, tmp_path,
                                                                monkeypatch):
    """The report keeps a bounded number of violations per rule and counts the rest in
    ``suppressed``; the receipt says which rules were cut, how many it lists and how many
    there were."""
    a, b = packet_pair
    (a.parent / "corpus.json").unlink()

    class Capped(commands.Evaluation):
        def run(self):
            report = super().run()
            if self.documents.root == a.parent:
                report.suppressed["corpus.file.missing"] = 41
            return report
    monkeypatch.setattr(commands, "Evaluation", Capped)
    receipt = measure(a, b, tmp_path / "r.json").receipt
    assert receipt["violations_truncated"] == [
        {"packet": "packet", "rule": "corpus.file.missing", "kept": 1, "total": 42}]
    assert json.loads((tmp_path / "r.json").read_text())["violations_truncated"] == \
        receipt["violations_truncated"]
