"""The validator against its floor, side by side, one process per run: the one benchmark command.

For each size it writes a pair of packets with the spec's fixture writer, then measures,
in interleaved runs (floor, measure, floor, measure, ...), each as a fresh process:

* ``measure``: ``flarespec measure --packet A --peer B --output R`` (what the runner does);
* the floor: read every file of both packets once, SHA-256 it, ``json.loads`` each JSON file,
  split the SSE streams and json-decode their data, parse the Prometheus files
  (``bench_validate.floor``): the unavoidable work on the same bytes.

Wall time, CPU time (user + system) and peak RSS come from ``os.wait4`` on each child; the
table shows medians and the ratios measure / floor, plus how time grows from the second
smallest size to the largest. Results are printed and saved as JSON.

    python benchmarks/run.py [--repetitions 1 5 20] [--runs 3] [--out benchmarks/results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEC_ID = "flare/bce032c0"
MIB = 2**20


def run_child(argv: list[str]) -> dict:
    """Wall, CPU and peak RSS of one child process (``ru_maxrss`` is KiB on Linux)."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a chatty child never blocks
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(argv)}\nexited {code}: {errors.read().decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024}


def write_sizes(scratch: Path, repetitions: list[int]) -> dict[int, tuple[Path, Path]]:
    """The pairs, written by a child process: Linux carries a process's peak RSS across
    fork and exec into its children's ``ru_maxrss``, so this runner must stay small (it
    never imports flarespec) or it would be every child's peak."""
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--write", str(scratch),
                    *map(str, repetitions)], check=True)
    return {r: pair_paths(scratch, r) for r in repetitions}


def pair_paths(scratch: Path, repetitions: int) -> tuple[Path, Path]:
    return (scratch / f"r{repetitions}" / "baseline" / "packet.json",
            scratch / f"r{repetitions}" / "candidate" / "packet.json")


def write_in_child(scratch: Path, repetitions: list[str]) -> None:
    from flarespec.fixtures.writers import write_pair

    for r in repetitions:
        baseline, candidate = write_pair(scratch / f"r{r}", SPEC_ID, repetitions=int(r))
        assert (baseline, candidate) == pair_paths(scratch, int(r)), (baseline, candidate)


def measure_size(pair: tuple[Path, Path], out: Path, runs: int) -> dict:
    baseline, candidate = pair
    validator = [sys.executable, "-m", "flarespec", "measure", "--packet", str(baseline),
                 "--peer", str(candidate), "--output", str(out), "--quiet"]
    floor = [sys.executable, str(Path(__file__).resolve()), "--floor",
             str(baseline.parent), str(candidate.parent)]
    samples = {"floor": [], "measure": []}
    for _ in range(runs):  # interleaved: a slow moment of the machine hits both alike
        samples["floor"].append(run_child(floor))
        samples["measure"].append(run_child(validator))
    return {name: {key: statistics.median(run[key] for run in runs_)
                   for key in ("wall", "cpu", "rss_mib")}
            for name, runs_ in samples.items()}


def packet_size(pair: tuple[Path, Path]) -> tuple[int, float]:
    files = [p for entry in pair for p in entry.parent.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files) / MIB


def table(results: list[dict]) -> str:
    lines = [f"{'R':>3} {'files':>6} {'MiB':>6} | {'floor s':>7} {'measure s':>9} {'wall x':>6} "
             f"| {'floor cpu':>9} {'meas cpu':>8} {'cpu x':>5} | {'floor MiB':>9} "
             f"{'meas MiB':>8} {'rss x':>5}"]
    for row in results:
        f, m = row["floor"], row["measure"]
        lines.append(
            f"{row['repetitions']:>3} {row['files']:>6} {row['mib']:>6.1f} | {f['wall']:>7.3f} "
            f"{m['wall']:>9.3f} {m['wall'] / f['wall']:>6.2f} | {f['cpu']:>9.3f} {m['cpu']:>8.3f} "
            f"{m['cpu'] / f['cpu']:>5.2f} | {f['rss_mib']:>9.1f} {m['rss_mib']:>8.1f} "
            f"{m['rss_mib'] / f['rss_mib']:>5.2f}")
    if len(results) >= 2:
        small, large = results[-2], results[-1]
        growth = {name: large[name]["wall"] / small[name]["wall"] for name in ("floor", "measure")}
        lines.append(f"R={large['repetitions']}/R={small['repetitions']} wall growth: "
                     f"measure x{growth['measure']:.2f}, floor x{growth['floor']:.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, nargs="+", default=[1, 5, 20],
                        help="Packet sizes: repetitions of the spec's group matrix.")
    parser.add_argument("--runs", type=int, default=3, help="Interleaved runs per size (median).")
    parser.add_argument("--out", type=Path, default=HERE / "results.json",
                        help="Where the table is saved as JSON.")
    parser.add_argument("--floor", nargs="+", type=Path, metavar="ROOT",
                        help=argparse.SUPPRESS)  # the floor's own child process
    parser.add_argument("--write", nargs="+", metavar="DIR R", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.write:
        return write_in_child(Path(options.write[0]), options.write[1:])
    if options.floor:
        sys.path.insert(0, str(HERE))
        from bench_validate import floor

        for root in options.floor:
            floor(root)
        return
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        pairs = write_sizes(Path(scratch), sorted(set(options.repetitions)))
        for repetitions, pair in pairs.items():
            files, mib = packet_size(pair)
            row = measure_size(pair, Path(scratch) / f"receipt-{repetitions}.json", options.runs)
            results.append({"repetitions": repetitions, "files": files, "mib": mib, **row})
            print(f"R={repetitions} measured", flush=True)
    print(table(results))
    options.out.write_text(json.dumps({"spec": SPEC_ID, "runs": options.runs,
                                       "cpus": os.cpu_count(), "results": results},
                                      indent=2) + "\n")
    print(f"saved {options.out}")


if __name__ == "__main__":
    main()
