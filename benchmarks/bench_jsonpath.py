"""The engine's JSONPath walker (flarespec.engine.jsonpath) against jsonpath-ng's own find,
on a large array.

    python benchmarks/bench_jsonpath.py [--size 100000]

jsonpath-ng is no longer what the engine runs; it is the yardstick of this benchmark (and a
test-time oracle), so the ratios stay comparable with the figures before the engine had its
own RFC 9535 walker. ``values`` is the validator's hot path (a passing check needs no
location); ``find`` builds matches; ``+ locations`` also formats every location.
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
    print(f"{size} elements")
    for expression, library_expression in [
            ("$.events[*].arrival_ns", "$.events[*].arrival_ns"),
            ("$.events[?@.seq >= 0].arrival_ns", "$.events[?(@.seq >= 0)].arrival_ns"),
            ("$..arrival_ns", "$..arrival_ns")]:
        library = parse(library_expression)
        engine = CompiledJsonPath(expression)
        assert [m.value for m in library.find(document)] == engine.values(document) == \
            [m.value for m in engine.find(document)]
        library_time = timed(lambda: library.find(document))
        values_time = timed(lambda: engine.values(document))
        find_time = timed(lambda: engine.find(document))
        located_time = timed(lambda: [m.location for m in engine.find(document)])
        print(f"{expression}")
        print(f"  jsonpath-ng find            {library_time:.3f} s")
        print(f"  engine values               {values_time:.3f} s  ratio "
              f"{values_time / library_time:.2f}")
        print(f"  engine find                 {find_time:.3f} s  ratio "
              f"{find_time / library_time:.2f}")
        print(f"  engine find + locations     {located_time:.3f} s  ratio "
              f"{located_time / library_time:.2f}")
    fixed = CompiledJsonPath("$.events[7].arrival_ns")
    rounds = 100_000
    fixed_time = timed(lambda: [fixed.values(document) for _ in range(rounds)])
    print(f"$.events[7].arrival_ns values, per call  {fixed_time / rounds * 1e9:.0f} ns")


if __name__ == "__main__":
    main()
