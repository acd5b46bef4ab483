"""One piece of work in a forked worker process, while this process does another.

``measure`` and ``validate-pair`` validate two packets that share nothing but the compiled
spec. On a machine with two cores the second packet is validated in a child made by
``os.fork`` (it inherits the compiled spec, so nothing is compiled or sent twice) while the
parent validates the first; the child sends back its result pickled through a pipe and exits
with ``os._exit`` (no atexit handler, no flushed parent buffer runs twice).

Fails closed: a worker that dies, is killed, or sends anything but one complete pickled
result gives ``on_failure(problem)``, which the caller turns into a rejecting violation.
Nothing is ever inferred from a missing result.

``flarespec check`` validates several entry files the same way (:func:`run_all`): each in
a worker of its own, as many at a time as there are usable cores, the results put back in
the order of the arguments.

``FLARESPEC_JOBS=1`` (or a machine with one usable core, a platform without ``fork``, or a
caller running other threads) validates both packets (every entry) in this process, one
after the other: the same receipts, slower.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable

JOBS_VARIABLE = "FLARESPEC_JOBS"
_CHUNK = 1 << 20
# for a result nested deeper than the default limit allows to pickle (see _dumps): values
# come from parsers bounded by the default limit, so 50 times that is far beyond need, and
# 128 MiB of stack holds it (pickling uses well under 1 KiB of C stack per level)
_DEEP_RECURSION_LIMIT = 50_000
_DEEP_STACK_BYTES = 128 << 20


class WorkerFailed(Exception):
    """The worker gave no usable result."""


@dataclass
class Worker:
    pid: int
    reader: int


def jobs() -> int:
    """Processes to use: ``FLARESPEC_JOBS`` when set to a positive integer, else the cores
    this process may run on (at most the two packets of a pair)."""
    setting = os.environ.get(JOBS_VARIABLE, "").strip()
    if setting.isascii() and setting.isdigit() and int(setting) > 0:
        return int(setting)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def enabled() -> bool:
    """Fork only from a single-threaded process: a child forked while another thread holds
    a lock (logging, an import, an allocator in a C library) can wait on it forever. The
    command line is single-threaded; a library caller with threads gets one process."""
    return jobs() > 1 and hasattr(os, "fork") and sys.platform != "win32" \
        and threading.active_count() == 1


def start(function: Callable[..., Any], *args) -> Worker:
    """Fork a worker that computes ``function(*args)`` and writes it, pickled, to a pipe."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never returns into the caller's code
        os.close(reader)
        _serve(writer, function, args)
    os.close(writer)
    return Worker(pid, reader)


def _serve(writer: int, function: Callable[..., Any], args: tuple) -> None:
    status = 1
    try:
        payload = _dumps(function(*args))
        view = memoryview(payload)
        while view:
            view = view[os.write(writer, view[:_CHUNK]):]
        status = 0
    finally:  # whatever happened, leave without running the parent's cleanup
        os._exit(status)


def _dumps(value: Any) -> bytes:
    """The pickled result. Pickling recurses once or twice per level of nesting, and a
    report may quote a value nested as deep as the JSON parser goes (just under the
    recursion limit): that one is pickled in a thread with a larger stack and limit. The
    worker exits right after, so nothing else runs under the raised limit."""
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        pass
    pickled: list[bytes] = []

    def deep() -> None:
        sys.setrecursionlimit(_DEEP_RECURSION_LIMIT)
        pickled.append(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    threading.stack_size(_DEEP_STACK_BYTES)
    thread = threading.Thread(target=deep)
    thread.start()
    thread.join()
    if not pickled:
        raise WorkerFailed("the result could not be pickled")
    return pickled[0]


def result(worker: Worker, on_failure: Callable[[BaseException], Any]) -> Any:
    """The worker's result, or ``on_failure(problem)`` when there is none to trust."""
    chunks = []
    try:
        while chunk := os.read(worker.reader, _CHUNK):
            chunks.append(chunk)
    finally:
        status = _reap(worker)
    return _decoded(status, chunks, on_failure)


def _reap(worker: Worker) -> int:
    """Close the worker's pipe and wait for it to end; its wait status."""
    os.close(worker.reader)
    return os.waitpid(worker.pid, 0)[1]


def run_all(function: Callable[..., Any], calls: list[tuple],
            on_failure: Callable[[int, BaseException], Any], *, workers: int,
            on_done: Callable[[int], None] | None = None) -> list:
    """``function(*args)`` for each ``args`` of ``calls``, in at most ``workers`` forked
    workers at a time (each call in its own; a new one starts as one ends, whichever ends
    first), results in the order of ``calls``; ``on_failure(index, problem)`` stands for
    the result of a worker that gave none to trust. ``on_done(index)`` as each call ends.
    With one worker, or when forking is not enabled, every call runs here in turn. An
    exception here (an interrupt) kills and reaps the workers still running."""
    if workers <= 1 or len(calls) <= 1 or not enabled():
        results = []
        for index, args in enumerate(calls):
            results.append(function(*args))
            if on_done is not None:
                on_done(index)
        return results
    results: list = [None] * len(calls)
    waiting = iter(enumerate(calls))
    running = selectors.DefaultSelector()

    def launch() -> None:
        for index, args in waiting:
            running.register((worker := start(function, *args)).reader, selectors.EVENT_READ,
                             (index, worker, []))
            return

    try:
        for _ in range(workers):
            launch()
        while running.get_map():
            for key, _ in running.select():
                index, worker, chunks = key.data
                chunk = os.read(key.fd, _CHUNK)
                if chunk:
                    chunks.append(chunk)
                    continue
                running.unregister(key.fd)
                results[index] = _decoded(_reap(worker), chunks,
                                          lambda problem: on_failure(index, problem))
                if on_done is not None:
                    on_done(index)
                launch()
    finally:
        for key in list(running.get_map().values()):  # left only by an exception
            running.unregister(key.fd)
            os.kill(key.data[1].pid, signal.SIGKILL)
            _reap(key.data[1])
        running.close()
    return results


def _decoded(status: int, chunks: list[bytes], on_failure: Callable[[BaseException], Any]
             ) -> Any:
    """The result a worker sent, or ``on_failure(problem)`` when it ended badly or sent
    anything but one complete pickle."""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        return on_failure(WorkerFailed(f"the worker process ended with status {code}"))
    try:
        return pickle.loads(b"".join(chunks))
    except Exception as problem:  # truncated or garbled: no result
        return on_failure(WorkerFailed(f"the worker's result is unreadable: {problem}"))
