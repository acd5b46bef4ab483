"""The layers of ``bench_layers.py`` in instructions: deterministic, where CPU time is not.

Each layer runs once in a process of its own under ``valgrind --tool=cachegrind``
(``PYTHONHASHSEED=0``, no cache simulation), and so does a process that only sets up
(imports, the bundled spec compiled, the packet's path known). A layer's instructions are
its process's minus the set-up process's, so the rows count the evaluation alone, as
``bench_layers.py`` times it; the start-up row is ``bench_layers.py``'s (a ``measure``
process up to its first packet: the CLI imported, the spec chosen) minus a bare
``python -c pass``, as a share of the pair's floor. Every process keeps its bytecode as an
installed package does (``run.source_env``; an untimed first round writes it), so no row
counts the compiler. The same packet is used by every process (written once, first).

    python benchmarks/bench_instructions.py --repetitions 20
    python benchmarks/bench_instructions.py --packet DIR/packet.json --json

Why a second benchmark: CPU ratios move by 10-20 % with the load of the machine; the
instruction counts of a pure-Python run do not, so a change of a few per cent (one layer
rewritten) is seen in one run. They do not weigh cache misses or the C library's speed, so
the CPU ratios (``run.py``, ``bench_layers.py``) stay the targets.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LAYERS = ("floor", "loading", "shapes", "full")
SETUP_DRIFT = 0.01  # the set-up measured first and last may differ by this share at most
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _one(layer: str, entry: Path) -> None:
    """Run in the measured process: set up, then run ``layer`` once (``setup``: nothing)."""
    sys.path.insert(0, str(HERE))
    from bench_layers import SPEC_ID, measured

    from flarespec.adapter.select import bundled_specs

    spec = next(s for s in bundled_specs() if s.id == SPEC_ID)
    if layer != "setup":
        measured(spec, entry, layer)


def instructions(arguments: list[str], environment: dict) -> int:
    """The instructions a Python process with ``arguments`` executes, by cachegrind."""
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, *arguments], env=environment, capture_output=True, text=True,
        check=True)
    found = _REFS.search(done.stderr)
    if found is None:
        raise SystemExit(f"cachegrind printed no instruction count:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def measure(entry: Path, scratch: Path) -> dict:
    """Every layer's instructions over the set-up process, and the start-up's."""
    sys.path.insert(0, str(HERE))
    from bench_layers import _MEASURE_START
    from run import source_env

    environment = source_env(None, scratch, PYTHONHASHSEED="0")
    own = [str(Path(__file__).resolve()), "--run"]
    start = ["-c", _MEASURE_START, str(entry)]
    for warm in ([*own, "setup", str(entry)], start):  # bytecode written, untimed
        subprocess.run([sys.executable, *warm], env=environment, check=True,
                       capture_output=True)
    setup = instructions([*own, "setup", str(entry)], environment)
    bare = instructions(["-c", "pass"], environment)
    counts = {layer: instructions([*own, layer, str(entry)], environment) - setup
              for layer in LAYERS}
    again = instructions([*own, "setup", str(entry)], environment)
    if abs(again - setup) > SETUP_DRIFT * setup:  # every row would be off by the difference
        raise SystemExit(f"the set-up process ran {setup:,} instructions first and {again:,} "
                         f"last: something changed meanwhile (a source file edited, so the "
                         f"spec was compiled again?); run again on a still tree")
    floor = counts["floor"]
    result = {name: {"instructions": count, "x_floor": round(count / floor, 3)}
              for name, count in counts.items()}
    up = instructions(start, environment) - bare
    result["start-up"] = {"instructions": up, "x_pair_floor": round(up / (2 * floor), 3)}
    return result


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--run":
        _one(sys.argv[2], Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packet", type=Path, help="A packet's entry file (default: write one).")
    parser.add_argument("--repetitions", type=int, default=20, help="R of the packet written.")
    parser.add_argument("--json", action="store_true", help="Print the result as JSON.")
    options = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_instructions.py needs valgrind (cachegrind) on PATH")
    with tempfile.TemporaryDirectory() as scratch:
        entry = options.packet
        if entry is None:
            from flarespec.adapter.select import bundled_specs
            from flarespec.fixtures.writers import write_packet

            sys.path.insert(0, str(HERE))
            from bench_layers import SPEC_ID
            spec = next(s for s in bundled_specs() if s.id == SPEC_ID)
            entry = write_packet(Path(scratch) / "packet", spec,
                                 repetitions=options.repetitions, full_prompts=True)
        result = measure(entry, Path(scratch))
    if options.json:
        print(json.dumps(result, indent=2))
        return
    for name, row in result.items():
        share = (f"{row['x_floor']:6.3f}x floor" if "x_floor" in row
                 else f"{row['x_pair_floor']:6.3f}x the pair's floor")
        print(f"{name:<10} {row['instructions'] / 1e9:8.3f} G  {share}")


if __name__ == "__main__":
    main()
