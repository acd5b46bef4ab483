"""Issue 13, classes 3, 8 and 9: snapshot arithmetic is exact, a hook fails closed on a name
that is not there, and a truncated snapshot rejects.

Packets come from the project's writer (tmp_path) and are edited with its mutations
(``prom_add``/``prom_set``, digests refreshed). Counters above 2^53 are where binary floats
lose units: each off-by-one below is first shown to be invisible in float arithmetic (so
the test fails on a validator that reads samples as floats), then required to reject.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flarespec.adapter.commands import measure
from flarespec.authoring.lint import lint_one
from flarespec.engine.evaluate import evaluate
from flarespec.fixtures.mutations import prom_add, prom_set, refresh_digests
from flarespec.compiler.open import open_compiled
from renamed_counters import disagreeing

BIG = 2 ** 60
COMPLETED, FAILED = "flare_requests_completed_total", "flare_requests_failed_total"
KV_FREE, KV_CACHED = "flare_kv_pages_free", "flare_kv_pages_cached"


# `template` and `packet` (a fresh copy of a valid packet) come from tests/conftest.py


def snapshots(root: Path) -> dict[str, list[str]]:
    return json.loads((root / "packet.json").read_text())["snapshots"]


def all_snapshot_files(root: Path) -> list[str]:
    return sorted({path for pair in snapshots(root).values() for path in pair})


def sample(root: Path, rel: str, name: str) -> int:
    [line] = [line for line in (root / rel).read_text().split("\n") if line.startswith(name + " ")]
    return int(line.split()[1])


def shift_counters(root: Path, counters, offset: int) -> None:
    """Add ``offset`` to every counter in every snapshot: every delta and continuity holds."""
    for rel in all_snapshot_files(root):
        for name in counters:
            prom_add(root, rel, name, offset)


def verdict(spec, root: Path) -> tuple[set, set]:
    refresh_digests(root)
    report = evaluate(spec, root / "packet.json")
    return {v.rule for v in report.violations}, {v.rule for v in report.warnings}


def test_a_valid_packet_with_counters_at_2_60_passes(flare_spec, packet):
    shift_counters(packet, flare_spec.constants["counters"].values(), BIG)
    first = snapshots(packet)["r0.warmup"][0]
    assert sample(packet, first, COMPLETED) > BIG
    assert float(sample(packet, first, COMPLETED) + 1) == float(sample(packet, first, COMPLETED))
    assert verdict(flare_spec, packet) == (set(), set())


def test_a_failed_counter_that_moves_by_one_above_2_53_rejects(flare_spec, packet):
    shift_counters(packet, flare_spec.constants["counters"].values(), BIG)
    before, after = snapshots(packet)["r0.prefix-hit"]
    prom_add(packet, after, FAILED, 1)
    was, now = sample(packet, before, FAILED), sample(packet, after, FAILED)
    assert now - was == 1 and float(now) - float(was) == 0  # a float reading sees no move
    errors, warnings = verdict(flare_spec, packet)
    assert (errors, warnings) == ({"snapshot.delta.failed"}, set())
    [violation] = evaluate(flare_spec, packet / "packet.json").violations
    assert f"({was} -> {now})" in violation.message and "moved by 1 " in violation.message


def _float_blind_offset(before: int, expected: int, actual: int) -> int:
    """An offset above 2^53 at which ``actual`` (exact) reads as ``expected`` in floats."""
    for offset in range(2 ** 53, 2 ** 53 + 64):
        if float(offset + before + actual) - float(offset + before) == expected:
            return offset
    raise AssertionError("no float-blind offset")


def test_a_completed_delta_off_by_one_above_2_53_rejects(flare_spec, packet):
    before, after = snapshots(packet)["r0.decode-c4"]  # four requests: completed moves by 4
    start = sample(packet, before, COMPLETED)
    offset = _float_blind_offset(start, 4, 5)
    shift_counters(packet, flare_spec.constants["counters"].values(), offset)
    # the off-by-one: one completion too many after decode-c4, and in every later snapshot
    groups = list(snapshots(packet))
    later = {path for group in groups[groups.index("r0.decode-c4") + 1:] for path in snapshots(packet)[group]}
    assert later and before not in later
    for rel in later | {after}:
        prom_add(packet, rel, COMPLETED, 1)
    moved = sample(packet, after, COMPLETED) - sample(packet, before, COMPLETED)
    assert moved == 5 and float(sample(packet, after, COMPLETED)) - float(sample(packet, before, COMPLETED)) == 4
    assert verdict(flare_spec, packet) == ({"snapshot.delta.completed"}, set())
    # only decode-c4's delta is wrong (a float reading would also get other groups wrong)
    violations = evaluate(flare_spec, packet / "packet.json").violations
    assert [(v.file, v.actual, v.expected) for v in violations] == [(after, 5, 4)]


def _float_blind_split(total: int) -> tuple[int, int]:
    """Two parts above 2^53 in magnitude that add up to ``total + 1`` exactly and to
    ``total`` in floats."""
    for free in range(2 ** 53, 2 ** 53 + 64):
        cached = total + 1 - free
        if float(free) + float(cached) == total:
            return free, cached
    raise AssertionError("no float-blind split")


def test_a_conservation_sum_off_by_one_above_2_53_rejects(flare_spec, packet):
    rel = snapshots(packet)["r0.ttft-512"][1]
    total = json.loads((packet / "preparation/memory-report.json").read_text())["kv_pages_total"]
    free, cached = _float_blind_split(total)
    prom_set(packet, rel, KV_FREE, free)
    prom_set(packet, rel, KV_CACHED, cached)
    assert free + cached == total + 1 and float(free) + float(cached) == total
    errors, _ = verdict(flare_spec, packet)
    assert errors == {"snapshot.conservation"}
    # and the same parts, off by nothing, pass: the arithmetic is exact, not merely strict
    prom_set(packet, rel, KV_CACHED, cached - 1)
    assert verdict(flare_spec, packet) == (set(), set())


def test_continuity_is_exact_above_2_53(flare_spec, packet):
    shift_counters(packet, flare_spec.constants["counters"].values(), BIG)
    pairs = list(snapshots(packet).values())
    for rel in {path for pair in pairs[-1:] for path in pair}:  # the last group, both snapshots
        prom_add(packet, rel, FAILED, 1)
    assert verdict(flare_spec, packet) == (set(), {"snapshot.counters.continuity"})


# ------------------------------------------------------------------ fail closed on absence


CHILD = """\
flarespec: 1
id: flare/renamed-counter
title: the reused-token counter renamed in counters, idle_metrics restated with the old name
extends: flare/bce032c0
constants:
""" + disagreeing("flare_prompt_tokens_reused", "flare_prompt_tokens_reused_total")


def test_a_counter_constant_naming_an_absent_metric_rejects_via_the_hook(tmp_path, packet):
    """Issue 13 class 9: the counter renamed in ``counters`` while a restated
    ``idle_metrics`` keeps the old name (lint refuses it: spec.name-not-required): no
    snapshot rule requires the new name, so only the hooks can notice it is not there."""
    (tmp_path / "child.yaml").write_text(CHILD)
    assert [issue.code for issue in lint_one(str(tmp_path / "child.yaml")).errors] == \
        ["spec.name-not-required"]
    spec = open_compiled(tmp_path / "child.yaml")  # as tests/engine/document_files.compile_text
    assert spec.constants["counters"]["reused_tokens"] == "flare_prompt_tokens_reused"
    assert "flare_prompt_tokens_reused" not in {m["name"] for m in spec.constants["idle_metrics"]}
    errors, warnings = verdict(spec, packet)
    assert errors == {"snapshot.delta.reused-tokens", "snapshot.counters.monotonic"}
    assert warnings == {"snapshot.counters.continuity"}
    report = evaluate(spec, packet / "packet.json")
    delta = [v for v in report.violations if v.rule == "snapshot.delta.reused-tokens"]
    assert len(delta) == 2 * len(snapshots(packet))  # each group: before and after
    first = delta[0]
    assert first.message.startswith("flare_prompt_tokens_reused: no unlabelled sample in the before snapshot")
    assert first.file == snapshots(packet)["r0.warmup"][0]
    assert first.actual == "missing"


@pytest.mark.parametrize("line, found", [
    ("flare_requests_cancelled_total 1", "2 unlabelled samples"),
    (None, "not a finite integer"),
])
def test_a_hook_fails_closed_on_a_duplicate_or_non_integral_counter(flare_spec, packet, line, found):
    before, _ = snapshots(packet)["r0.prefix-hit"]
    if line is None:
        prom_set(packet, before, "flare_requests_cancelled_total", "1.5")
    else:
        (packet / before).write_text((packet / before).read_text() + line + "\n")
    errors, _ = verdict(flare_spec, packet)
    sample_rule = "snapshot.sample.exactly-one" if line else "snapshot.sample.integral"
    assert errors == {sample_rule, "snapshot.delta.cancelled", "snapshot.counters.monotonic"}
    report = evaluate(flare_spec, packet / "packet.json")
    [delta] = [v for v in report.violations if v.rule == "snapshot.delta.cancelled"]
    assert found in delta.message and delta.file == before


# ------------------------------------------------------------------ truncated snapshot


def test_a_snapshot_without_its_final_line_feed_rejects_end_to_end(flare_spec, packet, tmp_path):
    """Issue 13 class 8: a capture cut inside its last line is not read as a shorter value."""
    rel = snapshots(packet)["r0.ttft-512"][1]
    data = (packet / rel).read_bytes()
    assert data.endswith(b"\n")
    (packet / rel).write_bytes(data[:-2])  # "... 1700000003000\n" loses its last digit and LF
    refresh_digests(packet)
    outcome = measure(packet / "packet.json", packet / "packet.json", tmp_path / "receipt.json")
    assert outcome.exit_code == 2
    rules = {v["rule"] for v in outcome.receipt["violations"]
             if v.get("severity", "error") == "error"}
    assert "snapshot.file.invalid-exposition" in rules
    assert rules <= {"snapshot.file.invalid-exposition", "pair.peer-invalid"}
    [violation] = [v for v in outcome.receipt["violations"] if v["rule"] == "snapshot.file.invalid-exposition"]
    assert violation["file"] == rel and "line feed" in violation["message"]
    assert violation["line"] == data.count(b"\n")
