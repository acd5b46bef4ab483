"""The engine's plain-path walker against jsonpath-ng's own find, on a large array.

    python benchmarks/bench_jsonpath.py [--size 100000]
"""

from __future__ import annotations

import argparse
import statistics
import time


def timed(function, rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    size = parser.parse_args().size

    from jsonpath_ng.ext import parse

    from flarespec.engine.paths import CompiledJsonPath

    document = {"events": [{"seq": i, "arrival_ns": 1000 + i, "token_ids": [i]}
                           for i in range(size)]}
    expression = "$.events[*].arrival_ns"
    library = parse(expression)
    engine = CompiledJsonPath(expression)
    assert [m.value for m in library.find(document)] == [m.value for m in engine.find(document)]
    library_time = timed(lambda: library.find(document))
    engine_time = timed(lambda: engine.find(document))
    located_time = timed(lambda: [m.location for m in engine.find(document)])
    print(f"{size} elements, {expression}")
    print(f"  jsonpath-ng find            {library_time:.3f} s")
    print(f"  engine walker               {engine_time:.3f} s  ratio {engine_time / library_time:.2f}")
    print(f"  engine walker + locations   {located_time:.3f} s  ratio {located_time / library_time:.2f}")


if __name__ == "__main__":
    main()
