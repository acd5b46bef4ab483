"""The second packet of a pair validated in a forked worker (adapter/parallel.py): the same
receipts as one process validating both, and a worker that fails rejects, never passes."""

from __future__ import annotations

import json
import os
import signal

import pytest

from flarespec.adapter import commands, parallel
from flarespec.adapter.commands import measure, validate_pair
from flarespec.fixtures.mutations import refresh_digests, set_json

INTERNAL_ERROR = "engine.internal-error"
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def receipt_bytes(command, first, second, output, monkeypatch, jobs: str) -> bytes:
    monkeypatch.setenv(parallel.JOBS_VARIABLE, jobs)
    command(first, second, output)
    return output.read_bytes()


@pytest.mark.parametrize("command", [measure, validate_pair])
def test_one_process_and_two_write_the_same_receipt(command, packet_pair, tmp_path,
                                                    monkeypatch):
    a, b = packet_pair
    forked = []
    monkeypatch.setattr(parallel, "start", lambda *args, real=parallel.start:
                        forked.append(args) or real(*args))
    sequential = receipt_bytes(command, a, b, tmp_path / "one.json", monkeypatch, "1")
    assert not forked
    both = receipt_bytes(command, a, b, tmp_path / "two.json", monkeypatch, "2")
    assert len(forked) == 1 and both == sequential
    assert json.loads(both)["status"] == "pass"


def test_a_rejected_peer_reads_the_same_from_the_worker(packet_pair, tmp_path, monkeypatch):
    a, b = packet_pair
    set_json(b.parent, "preparation/memory-report.json", "$.kv_pages_total", 9999)
    refresh_digests(b.parent)
    sequential = receipt_bytes(measure, a, b, tmp_path / "one.json", monkeypatch, "1")
    both = receipt_bytes(measure, a, b, tmp_path / "two.json", monkeypatch, "2")
    assert both == sequential
    receipt = json.loads(both)
    assert receipt["status"] != "pass" and "metric" not in receipt["packet"]
    assert "pair.peer-invalid" in {v["rule"] for v in receipt["violations"]}


def _dies_for(entry_name: str, how):
    real = commands._run_evaluation

    def run(spec, entry):
        if entry.parent.name == entry_name:
            how()
        return real(spec, entry)
    return run


@pytest.mark.parametrize("how", [
    lambda: os.kill(os.getpid(), signal.SIGKILL),  # killed: no result at all
    lambda: os._exit(0),  # "success" without a result: an empty pipe is no result either
    lambda: (_ for _ in ()).throw(KeyboardInterrupt()),  # not an Exception: status 1
], ids=["killed", "silent-exit", "base-exception"])
def test_a_failed_worker_rejects_with_an_internal_error(how, packet_pair, tmp_path,
                                                        monkeypatch):
    a, b = packet_pair
    monkeypatch.setenv(parallel.JOBS_VARIABLE, "2")
    monkeypatch.setattr(commands, "_run_evaluation", _dies_for(b.parent.name, how))
    outcome = validate_pair(a, b, tmp_path / "pair.json")
    assert outcome.exit_code == 2
    receipt = outcome.receipt
    assert receipt["status"] != "pass" and "metrics" not in receipt
    failed = [v for v in receipt["violations"] if v["rule"] == INTERNAL_ERROR]
    assert len(failed) == 1 and "worker" in failed[0]["message"]


@pytest.mark.parametrize(("setting", "expected"), [("1", 1), ("3", 3), (" 2 ", 2)])
def test_jobs_follows_the_variable(setting, expected, monkeypatch):
    monkeypatch.setenv(parallel.JOBS_VARIABLE, setting)
    assert parallel.jobs() == expected


@pytest.mark.parametrize("setting", ["0", "-1", "two", "", "٢"])
def test_jobs_ignores_a_setting_that_is_no_positive_integer(setting, monkeypatch):
    monkeypatch.setenv(parallel.JOBS_VARIABLE, setting)
    assert parallel.jobs() == len(os.sched_getaffinity(0))


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _depth(value) -> int:
    depth = 0
    while value:
        value, depth = value[0], depth + 1
    return depth


def test_a_result_nested_deeper_than_pickle_recurses_comes_back_whole():
    """A report may quote a value nested as deep as the JSON parser goes; pickling it with
    the default recursion limit fails (the hostile deep-source case did), so the worker
    pickles it with a larger stack."""
    with pytest.raises(RecursionError):
        import pickle
        pickle.dumps(_nested(5000))
    worker = parallel.start(_nested, 5000)
    assert _depth(parallel.result(worker, lambda problem: problem)) == 5000


def test_a_caller_with_other_threads_gets_one_process(packet_pair, tmp_path, monkeypatch):
    """Forking while another thread may hold a lock can hang the child: with a second thread
    alive, both packets are validated in this process (and pass as before)."""
    import threading

    a, b = packet_pair
    monkeypatch.setenv(parallel.JOBS_VARIABLE, "2")
    forked = []
    monkeypatch.setattr(parallel, "start", lambda *args: forked.append(args))
    release = threading.Event()
    waiting = threading.Thread(target=release.wait)
    waiting.start()
    try:
        outcome = measure(a, b, tmp_path / "threaded.json")
    finally:
        release.set()
        waiting.join()
    assert outcome.exit_code == 0 and forked == []
