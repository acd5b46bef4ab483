"""Speed and memory of a full packet validation against its floor, reported as ratios.

The floor (issue 15's definition) is the time (and peak memory) to do only the unavoidable
work on the same bytes, in plain Python: read every file of the packet once, SHA-256 it,
``json.loads`` each JSON file, split each SSE stream and ``json.loads`` each data payload,
split each Prometheus file into samples (name, labels, ``float`` value) -- no library. The
ratio says what the spec interpreter costs on top of that.

    python benchmarks/bench_validate.py [--repetitions 1 4 16] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path


PARSED_SUFFIXES = (".json", ".sse", ".prom")
HASH_CHUNK = 2**20


def floor(root: Path) -> None:
    """Issue 15's floor for one packet: read and SHA-256 every file below ``root`` once;
    ``json.loads`` each JSON file, split each SSE stream and ``json.loads`` each data
    payload, split each Prometheus file into samples (name, labels, ``float`` value) by
    hand -- no library. A file that is not parsed (the package) is hashed in chunks:
    reading it whole would put its size into the floor's peak memory, which the validator
    (streaming the hash) does not pay."""
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix not in PARSED_SUFFIXES:
            _hash_streamed(path)
            continue
        data = path.read_bytes()
        hashlib.sha256(data).hexdigest()
        if path.suffix == ".json":
            json.loads(data)
        elif path.suffix == ".sse":
            for line in data.decode().splitlines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])
        else:
            prometheus_samples(data.decode())


def floor_two_processes(first: Path, second: Path) -> None:
    """The floor of a pair on two cores, as ``measure`` runs by default: the second packet's
    floor in a forked child while this process does the first's."""
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            floor(second)
            status = 0
        finally:
            os._exit(status)
    floor(first)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"the floor's child for {second} failed")


def prometheus_samples(text: str) -> list[tuple[str, dict, float]]:
    """Every sample of an exposition as (name, labels, float value), split by hand: no
    checks, no escapes resolved beyond what the split needs (the floor is the least work)."""
    samples = []
    for line in text.split("\n"):
        if not line or line[0] == "#":
            continue
        brace = line.find("{")
        if brace < 0:
            name, _, rest = line.partition(" ")
            labels = {}
        else:
            close = line.rfind("}")
            name, rest = line[:brace], line[close + 1:]
            labels = {}
            for item in line[brace + 1:close].split('",'):
                if item:
                    key, _, value = item.partition('="')
                    labels[key.strip(" ,")] = value.rstrip('"')
        samples.append((name, labels, float(rest.split()[0])))
    return samples


def _hash_streamed(path: Path) -> str:
    digest, buffer = hashlib.sha256(), bytearray(HASH_CHUNK)
    view = memoryview(buffer)
    with path.open("rb", buffering=0) as handle:
        while size := handle.readinto(buffer):
            digest.update(view[:size])
    return digest.hexdigest()


def validate(spec, entry: Path) -> None:
    from flarespec.engine.evaluate import evaluate
    from flarespec.loaders.files import clear_process_hash_cache

    clear_process_hash_cache()  # every round pays for hashing, like a fresh process
    report = evaluate(spec, entry)
    assert report.ok and report.metric is not None, report.violations[:3]


def timed(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_memory(function) -> int:
    gc.collect()
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()

    from flarespec.adapter.select import bundled_specs
    from flarespec.fixtures.writers import write_packet

    spec = next(s for s in bundled_specs() if s.id == "flare/bce032c0")
    print(f"{'repetitions':>11} {'files':>6} {'MiB':>6} {'floor s':>8} {'validate s':>10} "
          f"{'time ratio':>10} {'memory ratio':>12}")
    with tempfile.TemporaryDirectory() as scratch:
        for repetitions in options.repetitions:
            entry = write_packet(Path(scratch) / f"r{repetitions}", spec,
                                 repetitions=repetitions)
            root = entry.parent
            files = [p for p in root.rglob("*") if p.is_file()]
            size = sum(p.stat().st_size for p in files) / 2**20
            read_hash_parse = lambda root=root: floor(root)  # noqa: E731
            full_validation = lambda entry=entry: validate(spec, entry)  # noqa: E731
            floor_time = timed(read_hash_parse, options.rounds)
            validate_time = timed(full_validation, options.rounds)
            floor_peak = peak_memory(read_hash_parse)
            validate_peak = peak_memory(full_validation)
            print(f"{repetitions:>11} {len(files):>6} {size:>6.1f} {floor_time:>8.3f} "
                  f"{validate_time:>10.3f} {validate_time / floor_time:>10.1f} "
                  f"{validate_peak / floor_peak:>12.1f}")


if __name__ == "__main__":
    main()
