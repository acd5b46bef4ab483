"""The bundled AIPerf contract (specs/aiperf/profile-export.yaml) over a real AIPerf run
(tests/aiperf/data/run1: ai-dynamo/aiperf's example artifacts, Apache-2.0, see NOTICE.md).

The real export passes as captured, chosen by ``applies_to`` with no ``--spec``; each broken
copy (written into a temporary directory) is rejected by exactly the rules named, as the
Flare catalog's cases are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flarespec.engine.evaluate import evaluate
from flarespec.spec.open import open_compiled

DATA = Path(__file__).resolve().parent / "data" / "run1"
ENTRY, RECORDS = "profile_export_aiperf.json", "profile_export.jsonl"
SPEC_ID = "aiperf/profile-export"


def _load():
    aggregate = json.loads((DATA / ENTRY).read_text())
    records = [json.loads(line) for line in (DATA / RECORDS).read_text().splitlines() if line]
    return aggregate, records


def _first_ok(records):
    return next(r for r in records if r.get("error") is None)


def _ok(records, n):
    return [r for r in records if r.get("error") is None][n]


def _cancelled(records):
    return next(r for r in records if r.get("error") is not None)


def _set(path, value):
    def edit(aggregate, records):
        target = aggregate["records"]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value(target[path[-1]]) if callable(value) else value
    return edit


def _record(pick, metric, value):
    def edit(aggregate, records):
        record = pick(records)
        record["metrics"][metric]["value"] = value(record["metrics"][metric]["value"])
    return edit


def _nudge(x):
    return x * (1 + 1e-6)


def _drop_record(aggregate, records):
    records.remove(_ok(records, 3))


def _duplicate_id(aggregate, records):
    _ok(records, 1)["metadata"]["x_request_id"] = _ok(records, 0)["metadata"]["x_request_id"]


def _extra_cancelled_metric(aggregate, records):
    _cancelled(records)["metrics"]["ttft"] = {"value": 1.0, "unit": "ms"}


def _missing_ttft(aggregate, records):
    del _ok(records, 2)["metrics"]["ttft"]


def _error_summary_count(aggregate, records):
    aggregate["error_summary"][0]["count"] += 1


def _error_code(aggregate, records):
    _cancelled(records)["error"]["code"] = 500


def _string_value(aggregate, records):
    _ok(records, 0)["metrics"]["ttft"]["value"] = "1680.5"


def _shift_first_chunk(aggregate, records):
    gaps = _ok(records, 0)["metrics"]["inter_chunk_latency"]["value"]
    gaps[0], gaps[1] = gaps[1], gaps[0]


CASES = {
    # the aggregate's statistics against the records
    "ttft-avg": (_set(["ttft", "avg"], _nudge), {"aiperf.aggregate.scalar-avg"}),
    "ttft-p99": (_set(["ttft", "p99"], _nudge), {"aiperf.aggregate.scalar-percentile"}),
    "latency-p50": (_set(["request_latency", "p50"], _nudge), {"aiperf.aggregate.scalar-percentile"}),
    "itl-min": (_set(["inter_token_latency", "min"], _nudge), {"aiperf.aggregate.scalar-min"}),
    "osl-max": (_set(["output_sequence_length", "max"], 248.0), {"aiperf.aggregate.scalar-max"}),
    "ttst-std-sample-not-population": (
        _set(["ttst", "std"], 40.40323547088052), {"aiperf.aggregate.scalar-std"}),
    "content-tokens-count": (_set(["output_token_count", "count"], 89), {"aiperf.aggregate.scalar-count"}),
    "chunk-avg": (_set(["inter_chunk_latency", "avg"], _nudge), {"aiperf.aggregate.chunks-avg"}),
    "chunk-p95": (_set(["inter_chunk_latency", "p95"], _nudge), {"aiperf.aggregate.chunks-percentile"}),
    "chunk-count": (_set(["inter_chunk_latency", "count"], 21536), {"aiperf.aggregate.chunks-count"}),
    "request-count": (_set(["request_count", "avg"], 90.0), {"aiperf.aggregate.request-count",
                                                             "aiperf.aggregate.request-throughput"}),
    "error-count": (_set(["error_request_count", "avg"], 10.0), {"aiperf.aggregate.error-count"}),
    "duration": (_set(["benchmark_duration", "avg"], _nudge), {
        "aiperf.aggregate.duration", "aiperf.aggregate.request-throughput",
        "aiperf.aggregate.output-token-throughput"}),
    "first-request": (_set(["min_request_timestamp", "avg"], lambda x: x - 4096),
                      {"aiperf.aggregate.first-request"}),
    "throughput": (_set(["output_token_throughput", "avg"], _nudge),
                   {"aiperf.aggregate.output-token-throughput"}),
    "total-isl": (_set(["total_isl", "avg"], 48951.0), {"aiperf.aggregate.total-isl"}),
    "total-reasoning": (_set(["total_reasoning_tokens", "avg"], 19793.0),
                        {"aiperf.aggregate.total-reasoning-tokens"}),
    "error-summary-count": (_error_summary_count, {"aiperf.aggregate.error-summary-total",
                                                   "aiperf.aggregate.error-summary-code"}),
    # a record against itself
    "latency-vs-timestamps": (_record(_first_ok, "max_response_timestamp", lambda v: v + 10**6), {
        "aiperf.record.latency-from-timestamps"}),  # not the run's last response
    "ttst-not-first-gap": (_shift_first_chunk, {"aiperf.record.ttst-first-gap"}),
    "throughput-per-user": (_record(_first_ok, "output_token_throughput_per_user", _nudge), {
        "aiperf.record.throughput-per-user", "aiperf.aggregate.scalar-avg",
        "aiperf.aggregate.scalar-std"}),
    "reasoning-tokens": (_record(lambda rs: _ok(rs, 5), "reasoning_token_count", lambda v: v + 1), {
        "aiperf.record.output-length-reasoning-only",  # this record has no content tokens
        "aiperf.aggregate.scalar-avg", "aiperf.aggregate.scalar-std",
        "aiperf.aggregate.scalar-percentile", "aiperf.aggregate.total-reasoning-tokens",
        "aiperf.aggregate.scalar-max"}),
    "cancelled-with-ttft": (_extra_cancelled_metric, {"aiperf.record.cancelled-metrics"}),
    "missing-ttft": (_missing_ttft, {"aiperf.record.metrics-present", "aiperf.record.ttft-plus-gaps",
                                     "aiperf.record.inter-token-latency",
                                     "aiperf.aggregate.scalar-count", "aiperf.aggregate.scalar-avg",
                                     "aiperf.aggregate.scalar-std", "aiperf.aggregate.scalar-percentile"}),
    "dropped-record": (_drop_record, None),
    "duplicate-request-id": (_duplicate_id, {"aiperf.records.unique-ids"}),
    "error-code": (_error_code, {"aiperf.aggregate.error-summary-code"}),
    "ttft-as-string": (_string_value, {"aiperf.records.shape"}),
}


@pytest.fixture(scope="module")
def spec():
    return open_compiled(SPEC_ID)


def _write(tmp_path: Path, aggregate, records) -> Path:
    (tmp_path / ENTRY).write_text(json.dumps(aggregate))
    (tmp_path / RECORDS).write_text("".join(json.dumps(r) + "\n" for r in records))
    return tmp_path / ENTRY


def test_the_real_export_passes_as_captured(spec, tmp_path):
    shutil.copy(DATA / ENTRY, tmp_path / ENTRY)
    shutil.copy(DATA / RECORDS, tmp_path / RECORDS)
    report = evaluate(spec, tmp_path / ENTRY)
    assert report.ok, report.violations[:5]
    assert set(report.files) == {ENTRY, RECORDS}


def test_the_bundled_data_is_the_capture_byte_for_byte():
    import hashlib
    digests = {name: hashlib.sha256((DATA / name).read_bytes()).hexdigest()
               for name in (ENTRY, RECORDS)}
    assert digests == {
        ENTRY: "5250bc5b7a8fa16d45b8ff92ad567749bad20201a736c1b402519f3d6c0404af",
        RECORDS: "ce0e2a194a22813a92f0964f6809fd59388bf9858632b454480bcdb39ef4715f"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_broken_copy_is_rejected_by_its_rules(spec, tmp_path, name):
    edit, expected = CASES[name]
    aggregate, records = _load()
    edit(aggregate, records)
    report = evaluate(spec, _write(tmp_path, aggregate, records))
    fired = {v.rule for v in report.violations if v.severity == "error"}
    assert not report.ok
    if expected is None:  # a dropped successful record: every statistic it was counted in
        assert {"aiperf.records.count", "aiperf.aggregate.request-count",
                "aiperf.aggregate.scalar-count", "aiperf.aggregate.chunks-count"} <= fired
        assert all(rule.startswith("aiperf.") for rule in fired)
    else:
        assert fired == expected


def test_a_broken_line_of_the_records_is_located_at_its_line(spec, tmp_path):
    aggregate, records = _load()
    entry = _write(tmp_path, aggregate, records)
    lines = (tmp_path / RECORDS).read_text().splitlines(keepends=True)
    lines[41] = lines[41][:-5] + "\n"
    (tmp_path / RECORDS).write_text("".join(lines))
    report = evaluate(spec, entry)
    [violation] = [v for v in report.violations if v.rule == "aiperf.records.invalid-json"]
    assert violation.file == RECORDS and violation.line == 42


def test_check_chooses_the_aiperf_contract_with_no_spec(tmp_path):
    from cli_run import run

    shutil.copy(DATA / ENTRY, tmp_path / ENTRY)
    shutil.copy(DATA / RECORDS, tmp_path / RECORDS)
    result = run("check", tmp_path / ENTRY, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] is True
