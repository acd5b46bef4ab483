"""One piece of work in a forked worker process, while this process does another.

``measure`` and ``validate-pair`` validate two packets that share nothing but the compiled
spec. On a machine with two cores the second packet is validated in a child made by
``os.fork`` (it inherits the compiled spec, so nothing is compiled or sent twice) while the
parent validates the first; the child sends back its result pickled through a pipe and exits
with ``os._exit`` (no atexit handler, no flushed parent buffer runs twice).

Fails closed: a worker that dies, is killed, or sends anything but one complete pickled
result gives ``on_failure(problem)``, which the caller turns into a rejecting violation.
Nothing is ever inferred from a missing result.

``FLARESPEC_JOBS=1`` (or a machine with one usable core, a platform without ``fork``, or a
caller running other threads) validates both packets in this process, one after the other:
the same receipts, slower.
"""

from __future__ import annotations

import os
import pickle
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
        os.close(worker.reader)
        _, status = os.waitpid(worker.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        return on_failure(WorkerFailed(f"the worker process ended with status {code}"))
    try:
        return pickle.loads(b"".join(chunks))
    except Exception as problem:  # truncated or garbled: no result
        return on_failure(WorkerFailed(f"the worker's result is unreadable: {problem}"))
