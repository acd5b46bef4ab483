"""The validator against its floor, side by side, one process per run: issue 9's one benchmark command.

For each size it writes a pair of packets with the spec's fixture writer (full prompt text
unless ``--short-prompts``), then measures, in interleaved runs (floor, measure,
validate-pair, floor, ...), each as a fresh process:

* the floor: read every file of both packets once, SHA-256 it, ``json.loads`` each JSON file,
  split the SSE streams and json-decode their data, parse the Prometheus files
  (``bench_validate.floor``): the unavoidable work on the same bytes;
* ``measure``: ``flarespec measure --packet A --peer B --output R --quiet`` (what the runner does);
* ``validate-pair``: ``flarespec validate-pair --baseline A --candidate B --output R --quiet``.

Sizes: the repetitions of the spec's group matrix (``--repetitions``), plus one
package-heavy pair (R=1, a package of ``--package-mib`` MiB of real bytes in each packet;
0 leaves the row out). The default sizes are 1 5 20 100 (at R=100 measurements.json is
43 MB: the Flare spec raises that document's limit with ``max_mib``). A command that does
not pass stops the run with exit 2 and its receipt's first violations: a rejection is not
the validation this benchmark measures. Wall time, CPU time (user + system) and peak RSS come from
``os.wait4`` on each child (peak RSS is the largest single process, CPU includes any
worker the command forks). The floor is one process: a validator that checks the two
packets on two cores can beat it on wall time, so the CPU ratio is the work figure. The table gives medians, each command's ratio to the floor,
how wall time grows from one size to the next (and how the ratio drifts), and issue 9's
targets with the measured figure; the JSON result goes to ``--out``.

    python benchmarks/run.py                          # R = 1 5 20 100 + a 1 GiB package, 3 runs
    python benchmarks/run.py --repetitions 5 20 --runs 5 --package-mib 0
    python benchmarks/run.py --quick                  # smoke: R = 1 5, 1 run, no package row
    python benchmarks/run.py --short-prompts          # one-sentence prompts (smaller packets)

The default needs about 2.5 GiB free in the temporary directory (``TMPDIR``) and takes
several minutes; run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEC_ID = "flare/bce032c0"
MIB = 2**20
COMMANDS = ("floor", "measure", "validate_pair")  # the floor first: ratios are to it
VALIDATORS = COMMANDS[1:]
LABELS = {"floor": "floor", "measure": "measure", "validate_pair": "validate-pair"}
PACKAGE_REPETITIONS = 1
DISK_MARGIN_MIB = 512  # free space kept beyond the packets' own estimate
PACKET_MIB_PER_REPETITION = 2  # a full-prompt packet is ~1.6 MiB per repetition
DEFAULTS = {"repetitions": [1, 5, 20, 100], "runs": 3, "package_mib": 1024}
QUICK = {"repetitions": [1, 5], "runs": 1, "package_mib": 0}


@dataclass(frozen=True)
class Size:
    """One pair to write and measure: a repetition count, and (package row) a large package."""

    repetitions: int
    package_mib: int = 0

    @property
    def name(self) -> str:
        return f"r{self.repetitions}" + (f"-package{self.package_mib}" if self.package_mib else "")

    @property
    def label(self) -> str:
        return f"R={self.repetitions}" + (f"+{self.package_mib}MiB pkg" if self.package_mib else "")


# ------------------------------------------------------------------------ children


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
            fail(f"{' '.join(argv)}\nexited {code}: {errors.read().decode()[-2000:]}"
                 f"{receipt_violations(argv)}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024}


def receipt_violations(argv: list[str]) -> str:
    """The first violations of a flarespec command's receipt (its stderr is quiet)."""
    if "--output" not in argv:
        return ""
    try:
        receipt = json.loads(Path(argv[argv.index("--output") + 1]).read_text())
        return "".join(f"\n  {v['rule']}: {v['message']}" for v in receipt["violations"][:5])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def fail(message: str) -> None:
    print(f"run.py: {message}", file=sys.stderr)
    sys.exit(2)


def write_sizes(scratch: Path, sizes: list[Size], full_prompts: bool) -> None:
    """The pairs, written by a child process: Linux carries a process's peak RSS across
    fork and exec into its children's ``ru_maxrss``, so this runner must stay small (it
    never imports flarespec) or it would be every child's peak."""
    order = {"full_prompts": full_prompts, "sizes": [asdict(size) for size in sizes]}
    written = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--write",
                              str(scratch), json.dumps(order)])
    if written.returncode:
        sys.exit(2)  # the child said why on stderr


def write_in_child(scratch: Path, order: dict) -> None:
    from flarespec.fixtures.writers import write_pair

    for size in [Size(**fields) for fields in order["sizes"]]:
        package = {"package_size": size.package_mib * MIB} if size.package_mib else {}
        pair = write_pair(scratch / size.name, SPEC_ID, repetitions=size.repetitions,
                          full_prompts=order["full_prompts"], **package)
        assert pair == pair_paths(scratch, size), pair


def pair_paths(scratch: Path, size: Size) -> tuple[Path, Path]:
    return (scratch / size.name / "baseline" / "packet.json",
            scratch / size.name / "candidate" / "packet.json")


def command_lines(scratch: Path, size: Size) -> dict[str, list[str]]:
    baseline, candidate = pair_paths(scratch, size)
    flarespec = [sys.executable, "-m", "flarespec"]
    return {
        "floor": [sys.executable, str(Path(__file__).resolve()), "--floor",
                  str(baseline.parent), str(candidate.parent)],
        "measure": [*flarespec, "measure", "--packet", str(baseline), "--peer", str(candidate),
                    "--output", str(scratch / f"receipt-measure-{size.name}.json"), "--quiet"],
        "validate_pair": [*flarespec, "validate-pair", "--baseline", str(baseline),
                          "--candidate", str(candidate), "--output",
                          str(scratch / f"receipt-pair-{size.name}.json"), "--quiet"],
    }


def measure_size(scratch: Path, size: Size, runs: int) -> dict:
    """Medians of ``runs`` interleaved rounds (a slow moment of the machine hits all alike)."""
    argvs = command_lines(scratch, size)
    samples: dict[str, list[dict]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name in COMMANDS:
            samples[name].append(run_child(argvs[name]))
    return {name: {key: statistics.median(run[key] for run in runs_)
                   for key in ("wall", "cpu", "rss_mib")}
            for name, runs_ in samples.items()}


def packet_size(scratch: Path, size: Size) -> tuple[int, float]:
    files = [p for entry in pair_paths(scratch, size) for p in entry.parent.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files) / MIB


# ------------------------------------------------------------------------- figures


def row_for(scratch: Path, size: Size, runs: int) -> dict:
    files, mib = packet_size(scratch, size)
    medians = measure_size(scratch, size, runs)
    floor = medians["floor"]
    ratios = {name: {"wall": medians[name]["wall"] / floor["wall"],
                     "cpu": medians[name]["cpu"] / floor["cpu"],
                     "rss": medians[name]["rss_mib"] / floor["rss_mib"]} for name in VALIDATORS}
    return {"size": size.label, "repetitions": size.repetitions, "package_mib": size.package_mib,
            "files": files, "mib": mib, **medians, "ratios": ratios}


def add_growth(rows: list[dict]) -> None:
    """On each matrix row after the first: wall growth of every command from the previous
    size, and how each validator's wall ratio drifted (1.0: it grows like the floor)."""
    matrix = [row for row in rows if not row["package_mib"]]
    for previous, row in zip(matrix, matrix[1:]):
        row["growth"] = {
            "from_repetitions": previous["repetitions"],
            "wall": {name: row[name]["wall"] / previous[name]["wall"] for name in COMMANDS},
            "ratio_drift": {name: row["ratios"][name]["wall"] / previous["ratios"][name]["wall"]
                            for name in VALIDATORS},
        }


def add_package_cost(rows: list[dict]) -> None:
    """On the package row: peak RSS it adds over the matrix row of the same repetitions."""
    plain = {row["repetitions"]: row for row in rows if not row["package_mib"]}
    for row in rows:
        if row["package_mib"] and row["repetitions"] in plain:
            row["rss_added_mib"] = {name: row[name]["rss_mib"] - plain[row["repetitions"]][name]["rss_mib"]
                                    for name in COMMANDS}


def _matrix(rows: list[dict], repetitions: int) -> dict | None:
    return next((r for r in rows if r["repetitions"] == repetitions and not r["package_mib"]), None)


def _growth_from(row: dict | None, before: int) -> dict | None:
    growth = row.get("growth") if row else None
    return growth if growth and growth["from_repetitions"] == before else None


def _largest_over(rows: list[dict], repetitions: int) -> dict | None:
    larger = [row for row in rows if row["repetitions"] > repetitions and not row["package_mib"]]
    return max(larger, key=lambda row: row["repetitions"], default=None)


def targets(rows: list[dict]) -> list[dict]:
    """Issue 9's targets, each with its measured figure (left out when its size was not run)."""
    r1, r20 = _matrix(rows, 1), _matrix(rows, 20)
    large = r20 and _largest_over(rows, 20)  # issue 9 names R=100 (see the docstring)
    package = next((row for row in rows if row["package_mib"]), None)
    growth_20 = _growth_from(r20, 5)
    checks = [
        ("R=20 {} wall x floor", 2.0, lambda name: r20 and r20["ratios"][name]["wall"]),
        ("R=20 {} peak RSS MiB", 150.0, lambda name: r20 and r20[name]["rss_mib"]),
        ("R=20/R=5 {} wall growth", 4.5, lambda name: growth_20 and growth_20["wall"][name]),
        (f"R={large and large['repetitions']} ratio / R=20 ratio, {{}}", 1.1,
         lambda name: large and large["ratios"][name]["wall"] / r20["ratios"][name]["wall"]),
        ("package-heavy {} wall x floor", 1.2,
         lambda name: package and package["ratios"][name]["wall"]),
        ("R=1 {} wall x floor (start-up)", 3.0, lambda name: r1 and r1["ratios"][name]["wall"]),
    ]
    found = [(what.format(LABELS[name]), limit, figure(name))
             for what, limit, figure in checks for name in VALIDATORS]
    return [{"target": what, "limit": limit, "figure": value, "met": value <= limit}
            for what, limit, value in found if value is not None]


# --------------------------------------------------------------------------- table


def table(rows: list[dict], checked: list[dict]) -> str:
    head = (f"{'size':>17} {'files':>6} {'MiB':>7} | {'floor s':>7} {'meas s':>7} {'pair s':>7} "
            f"{'meas x':>6} {'pair x':>6} | {'cpu x m':>7} {'cpu x p':>7} | {'floor MiB':>9} "
            f"{'meas MiB':>8} {'pair MiB':>8} {'rss x m':>7} {'rss x p':>7}")
    lines = [head] + [_table_row(row) for row in rows]
    lines += [_growth_line(row) for row in rows if "growth" in row]
    lines += [_package_line(row) for row in rows if "rss_added_mib" in row]
    lines += ["issue 9 targets:"] + [
        f"  {'met    ' if t['met'] else 'NOT met'} {t['target']}: {t['figure']:.2f} (<= {t['limit']})"
        for t in checked]
    return "\n".join(lines)


def _table_row(row: dict) -> str:
    f, m, p = (row[name] for name in COMMANDS)
    rm, rp = (row["ratios"][name] for name in VALIDATORS)
    return (f"{row['size']:>17} {row['files']:>6} {row['mib']:>7.1f} | {f['wall']:>7.3f} "
            f"{m['wall']:>7.3f} {p['wall']:>7.3f} {rm['wall']:>6.2f} {rp['wall']:>6.2f} | "
            f"{rm['cpu']:>7.2f} {rp['cpu']:>7.2f} | {f['rss_mib']:>9.1f} {m['rss_mib']:>8.1f} "
            f"{p['rss_mib']:>8.1f} {rm['rss']:>7.2f} {rp['rss']:>7.2f}")


def _growth_line(row: dict) -> str:
    growth = row["growth"]
    walls = ", ".join(f"{LABELS[name]} x{growth['wall'][name]:.2f}" for name in COMMANDS)
    drift = ", ".join(f"{LABELS[name]} x{growth['ratio_drift'][name]:.2f}" for name in VALIDATORS)
    return (f"R={row['repetitions']}/R={growth['from_repetitions']} wall growth: {walls}; "
            f"ratio R={row['repetitions']} / ratio R={growth['from_repetitions']}: {drift}")


def _package_line(row: dict) -> str:
    added = ", ".join(f"{LABELS[name]} {row['rss_added_mib'][name]:+.1f}" for name in COMMANDS)
    return f"{row['size']}: peak RSS added by the package over R={row['repetitions']} (MiB): {added}"


# ---------------------------------------------------------------------------- main


def parse_options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Defaults: --repetitions 1 5 20 100 --runs 3 --package-mib 1024; --quick: "
               "--repetitions 1 5 --runs 1 --package-mib 0. An option given explicitly wins.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, nargs="+", metavar="R",
                        help="Packet sizes: repetitions of the spec's group matrix.")
    parser.add_argument("--runs", type=int, help="Interleaved runs per size (medians).")
    parser.add_argument("--package-mib", type=int, metavar="N",
                        help="Package-heavy row: R=1 with an N MiB package in each packet "
                             "(real bytes, read and hashed); 0 leaves the row out.")
    parser.add_argument("--short-prompts", action="store_true",
                        help="One-sentence prompts instead of full prompt text (~4 characters "
                             "per prompt token).")
    parser.add_argument("--quick", action="store_true",
                        help="Smoke run: R=1 and 5, one run, no package row.")
    parser.add_argument("--out", type=Path, default=HERE / "results.json",
                        help="Where the results are saved as JSON (default: %(default)s).")
    parser.add_argument("--floor", nargs="+", type=Path, metavar="ROOT",
                        help=argparse.SUPPRESS)  # the floor's own child process
    parser.add_argument("--write", nargs=2, metavar=("DIR", "ORDER"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    for key, value in (QUICK if options.quick else DEFAULTS).items():
        if getattr(options, key) is None:
            setattr(options, key, value)
    if options.runs < 1 or min(options.repetitions) < 1 or options.package_mib < 0:
        parser.error("--runs and --repetitions take integers >= 1, --package-mib >= 0")
    options.parser = parser
    return options


def sizes_of(options: argparse.Namespace) -> list[Size]:
    sizes = [Size(r) for r in sorted(set(options.repetitions))]
    return sizes + ([Size(PACKAGE_REPETITIONS, options.package_mib)] if options.package_mib else [])


def check_disk(options: argparse.Namespace, scratch: Path, sizes: list[Size]) -> None:
    """Refuse up front (exit 2) rather than fill the disk half way through."""
    needed = DISK_MARGIN_MIB + sum(2 * (size.package_mib + PACKET_MIB_PER_REPETITION * size.repetitions)
                                   for size in sizes)
    free = shutil.disk_usage(scratch).free / MIB
    if free < needed:
        options.parser.error(f"the packets need about {needed} MiB and {scratch} has {free:.0f} MiB "
                             "free: choose a smaller --package-mib or --repetitions, or set TMPDIR")


def main(argv: list[str] | None = None) -> None:
    options = parse_options(argv)
    sys.path.insert(0, str(HERE))  # bench_validate, for the children
    if options.write:
        return write_in_child(Path(options.write[0]), json.loads(options.write[1]))
    if options.floor:
        from bench_validate import floor

        for root in options.floor:
            floor(root)
        return
    sizes = sizes_of(options)
    with tempfile.TemporaryDirectory(prefix="flarespec-bench-") as scratch:
        check_disk(options, Path(scratch), sizes)
        write_sizes(Path(scratch), sizes, not options.short_prompts)
        rows = []
        for size in sizes:
            rows.append(row_for(Path(scratch), size, options.runs))
            print(f"{size.label} measured", flush=True)
    add_growth(rows)
    add_package_cost(rows)
    checked = targets(rows)
    print(table(rows, checked))
    options.out.write_text(json.dumps({
        "spec": SPEC_ID, "runs": options.runs, "cpus": os.cpu_count(),
        "full_prompts": not options.short_prompts, "results": rows, "targets": checked,
    }, indent=2) + "\n")
    print(f"saved {options.out}")


if __name__ == "__main__":
    main()
