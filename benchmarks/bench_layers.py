"""The validator in layers against the floor: what loading alone costs, with shapes, with rules.

One packet, in one process, each layer a full evaluation with the layers above it switched
off (min of ``--rounds`` interleaved rounds, CPU time):

* floor: ``bench_validate.floor`` (read, SHA-256, parse: issue 15's definition);
* loading: every document read, hashed and strictly parsed (the rules do nothing, no
  shape is checked; the final load still loads every document);
* + shapes: the declared shapes checked too;
* full: the rules as well (a whole ``evaluate``).

The ratios say how much of issue 15's budget (``measure`` at 2.0× the floor, start-up
included) each layer takes: a layer already at or above 2.0× means no work on the layers
above it can meet the target. Start-up (imports, the compiled spec) is in none of them; it
is its own row:

* start-up: what a ``measure`` process spends before its first packet (the CLI and the
  command imported, the spec chosen for the packet from the compiled-spec cache), a fresh
  process each round, its CPU (``getrusage``) minus a bare ``python -c`` process's; its
  ratio is to the *pair's* floor (two such packets), since ``measure`` starts once per pair.
  Its bytecode is kept as an installed package's is (``run.source_env``, in the run's
  scratch directory, written by an untimed first round): a machine that sets
  ``PYTHONDONTWRITEBYTECODE`` would otherwise time the compiler on every module.

    python benchmarks/bench_layers.py --repetitions 20
    python benchmarks/bench_layers.py --packet DIR/packet.json --rounds 9
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_validate import floor
from run import source_env

SPEC_ID = "flare/bce032c0"
LAYERS = ("floor", "loading", "shapes", "full")
# A child's own CPU when it is done: user and system time of the whole process, start-up
# of the interpreter included (the bare child's figure takes that out again).
_CPU_SO_FAR = ("import resource\n"
               "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
               "print(usage.ru_utime + usage.ru_stime)\n")
_MEASURE_START = ("import sys\n"
                  "import flarespec.cli\n"
                  "from flarespec.adapter.commands import choose_spec, entry_path\n"
                  "choose_spec(entry_path(sys.argv[1]), None)\n")


def measured(spec, entry: Path, layer: str) -> float:
    from flarespec.engine.evaluate import Evaluation, evaluate
    from flarespec.loaders.files import clear_process_hash_cache

    try:  # where a document's shape is checked (a revision before 326f7a7: the evaluation)
        from flarespec.engine.documents import DocumentStore as shape_owner
    except ImportError:
        shape_owner = Evaluation
    apply, has_shape = Evaluation._apply_rules, shape_owner._has_shape
    try:
        if layer in ("loading", "shapes"):  # no rule runs (engine/passes.py nor one by one)
            Evaluation._apply_rules = lambda self, numbers: None
        if layer == "loading":
            shape_owner._has_shape = lambda self, document, loaded, scope: True
        clear_process_hash_cache()
        gc.collect()
        start = time.process_time()
        if layer == "floor":
            floor(entry.parent)
        else:
            evaluate(spec, entry)
        return time.process_time() - start
    finally:
        Evaluation._apply_rules, shape_owner._has_shape = apply, has_shape


def child_cpu(entry: Path, source: str, scratch: Path) -> float:
    """The CPU seconds of a fresh ``python -c source`` process (``sys.argv[1]``: the entry),
    its bytecode kept as an installed package's is (``run.source_env``: in ``scratch``)."""
    done = subprocess.run([sys.executable, "-c", source + _CPU_SO_FAR, str(entry)],
                          capture_output=True, text=True, check=True,
                          env=source_env(None, scratch))
    return float(done.stdout.split()[-1])


def start_up(entry: Path, scratch: Path) -> float:
    """One round of the start-up row: the measure process's CPU before its first packet,
    a bare interpreter's taken out."""
    return child_cpu(entry, _MEASURE_START, scratch) - child_cpu(entry, "", scratch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packet", type=Path, help="A packet's entry file (default: write one).")
    parser.add_argument("--repetitions", type=int, default=20, help="R of the packet written.")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="Print the result as JSON.")
    options = parser.parse_args()

    from flarespec.adapter.select import bundled_specs

    spec = next(s for s in bundled_specs() if s.id == SPEC_ID)
    with tempfile.TemporaryDirectory() as scratch:
        entry = options.packet
        if entry is None:
            from flarespec.fixtures.writers import write_packet
            entry = write_packet(Path(scratch) / "packet", spec, repetitions=options.repetitions,
                                 full_prompts=True)
        measured(spec, entry, "full")  # warm: bytecode, caches
        start_up(entry, Path(scratch))  # warm: bytecode and the compiled-spec cache
        times = {layer: [] for layer in (*LAYERS, "start-up")}
        for _ in range(options.rounds):
            for layer in LAYERS:
                times[layer].append(measured(spec, entry, layer))
            times["start-up"].append(start_up(entry, Path(scratch)))
    best = {layer: min(values) for layer, values in times.items()}
    result = {layer: {"cpu_s": round(best[layer], 4), "x_floor": round(best[layer] / best["floor"], 2)}
              for layer in LAYERS}
    result["start-up"] = {"cpu_s": round(best["start-up"], 4),
                          "x_pair_floor": round(best["start-up"] / (2 * best["floor"]), 2)}
    if options.json:
        print(json.dumps(result, indent=2))
        return
    labels = {"floor": "floor", "loading": "loading (no shapes, no rules)",
              "shapes": "loading + shapes", "full": "loading + shapes + rules"}
    for layer in LAYERS:
        print(f"{labels[layer]:<32} {result[layer]['cpu_s']:7.3f} s  {result[layer]['x_floor']:5.2f}x floor")
    row = result["start-up"]
    print(f"{'start-up (a measure process)':<32} {row['cpu_s']:7.3f} s  "
          f"{row['x_pair_floor']:5.2f}x the pair's floor")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
