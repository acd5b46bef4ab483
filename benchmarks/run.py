"""The validator against its floor, side by side, one process per run: issues 9 and 15's benchmark command.

For each size it writes a pair of packets with the spec's fixture writer (full prompt text
unless ``--short-prompts``), then measures, in interleaved runs (floor, two-process floor,
measure, measure JOBS=1, validate-pair, floor, ...), each as a fresh process:

* the floor (issue 15's definition, ``bench_validate.floor``): read every file of both
  packets once, SHA-256 it, ``json.loads`` each JSON file, split each SSE stream and
  ``json.loads`` each data payload, split each Prometheus file into samples (name, labels,
  ``float`` value) by hand, no library: the unavoidable work on the same bytes;
* the two-process floor (``bench_validate.floor_two_processes``): the same, the second
  packet in a forked child, as ``measure`` runs by default (default-mode wall is compared
  with it);
* ``measure``: ``flarespec measure --packet A --peer B --output R --quiet`` (what the runner
  does; the second packet in a forked worker), and the same with ``FLARESPEC_JOBS=1`` (one
  process: its CPU and peak RSS are issue 15's work and memory figures);
* ``validate-pair``: ``flarespec validate-pair --baseline A --candidate B --output R --quiet``;
* with ``--baseline-src DIR``: ``measure`` in both modes with the code of DIR (a source
  tree's ``src``, e.g. ``receipts_identity.py --prepare REV``), on the same pair, interleaved.

Sizes: the repetitions of the spec's group matrix (``--repetitions``), plus one
package-heavy pair (R=1, a package of ``--package-mib`` MiB of real bytes in each packet;
0 leaves the row out). The default sizes are 1 5 20 100 (at R=100 measurements.json is
43 MB: the Flare spec raises that document's limit with ``max_mib``). A command that does
not pass stops the run with exit 2 and its receipt's first violations: a rejection is not
the validation this benchmark measures. Wall time, CPU time (user + system) and peak RSS come from
``os.wait4`` on each child (peak RSS is the largest single process, CPU includes any
worker the command forks). One untimed ``measure`` per code comes first (a warm
compiled-spec cache and the code's bytecode for every timed run: ``source_env``). The table gives medians, each command's ratios
to the floors, how wall time and CPU grow from one size to the next (and how the ratio
drifts), and issue 9's and issue 15's targets with the measured figure; the JSON result
goes to ``--out``.

    python benchmarks/run.py                          # R = 1 5 20 100 + a 1 GiB package, 5 runs
    python benchmarks/run.py --repetitions 1 5 20 --runs 5 --package-mib 0 --baseline-src BASE/src
    python benchmarks/run.py --quick                  # smoke: R = 1 5, 1 run, no package row
    python benchmarks/run.py --short-prompts          # one-sentence prompts (smaller packets)

Progress goes to stderr, a line before each run (size, run k of n, the command, runs
done of all, seconds so far; ``--quiet``: none); stdout carries the table only.

The default needs about 2.5 GiB free in the temporary directory (``TMPDIR``) and takes
several minutes; run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import hashlib
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
# the floors first: ratios are to them (the two-process floor for default-mode wall time)
FLOORS = ("floor", "floor_2p")
VALIDATORS = ("measure", "measure_j1", "validate_pair")
COMMANDS = FLOORS + VALIDATORS
BASELINE_COMMANDS = ("measure_base", "measure_j1_base")  # with --baseline-src
LABELS = {"floor": "floor", "floor_2p": "floor 2p", "measure": "measure",
          "measure_j1": "measure JOBS=1", "validate_pair": "validate-pair",
          "measure_base": "measure (baseline)", "measure_j1_base": "measure JOBS=1 (baseline)"}
# issue 9's targets are about these (default mode)
ISSUE9_VALIDATORS = ("measure", "validate_pair")
PACKAGE_REPETITIONS = 1
DISK_MARGIN_MIB = 512  # free space kept beyond the packets' own estimate
PACKET_MIB_PER_REPETITION = 2  # a full-prompt packet is ~1.6 MiB per repetition
DEFAULTS = {"repetitions": [1, 5, 20, 100], "runs": 5, "package_mib": 1024}
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


def run_child(argv: list[str], env: dict | None = None) -> dict:
    """Wall, CPU and peak RSS of one child process (``ru_maxrss`` is KiB on Linux)."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a chatty child never blocks
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors, env=env)
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


class Progress:
    """One line on stderr before each run (size, run k of n, which command, runs done of
    all, seconds so far) and a final line; nothing with ``--quiet``. Plain lines, terminal
    or not: the table's ``R=.. measured`` lines share the terminal on stdout, and this
    runner never imports flarespec (nor click): its own peak RSS would be every child's
    (see ``write_sizes``), so it does not use ``flarespec.output.progress``."""

    def __init__(self, total: int, *, quiet: bool = False, stream=None,
                 clock=time.monotonic):
        self.total, self.quiet, self.clock = total, quiet, clock
        self.stream = sys.stderr if stream is None else stream
        self.done, self.start = 0, clock()

    def _line(self, text: str) -> None:
        if not self.quiet:
            print(f"run.py: {text} [{self.done}/{self.total} runs, "
                  f"{self.clock() - self.start:.0f} s]", file=self.stream, flush=True)

    def note(self, text: str) -> None:
        self._line(text)

    def warm_up(self, size: Size, name: str) -> None:
        self._line(f"{size.label}: {LABELS[name]}, untimed (warms the compiled-spec cache)")

    def run(self, size: Size, k: int, n: int, name: str) -> None:
        """Said before the run starts: what runs now."""
        self._line(f"{size.label}: run {k}/{n}, {LABELS[name]}")
        self.done += 1

    def finish(self) -> None:
        self._line("all runs done")


def runs_in_all(sizes: list[Size], runs: int, baseline_src: Path | None) -> int:
    """How many timed runs the whole benchmark makes (warm-up runs aside)."""
    commands = len(COMMANDS) + (len(BASELINE_COMMANDS) if baseline_src is not None else 0)
    return len(sizes) * runs * commands


def source_env(src: Path | None, scratch: Path, **variables: str) -> dict:
    """The environment of a child: flarespec imported from ``src`` (a source tree's ``src``
    directory, e.g. a worktree of a baseline commit: see receipts_identity.py) when given,
    with its bytecode kept as an installed package's is and a compiled-spec cache of its
    own. A child that compiled every source file per run (``PYTHONDONTWRITEBYTECODE``, an
    unwritable tree) would time the compiler (about 75 ms a command), so the bytecode goes
    to the run's ``scratch`` directory (the first, untimed round writes it; nothing is
    written into the tree, and a source tree's bytecode is keyed by its own path). The
    compiled-spec cache is one directory per code under ``scratch``: a cache file holds one
    entry, so two codes taking turns in one cache would compile the spec again on every
    run (about 0.3 s a ``measure``)."""
    env = {**os.environ, **variables}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(scratch / "bytecode"))
    code = "installed" if src is None else \
        hashlib.sha256(str(src.resolve()).encode()).hexdigest()[:16]
    env.setdefault("FLARESPEC_CACHE_DIR", str(scratch / "spec-cache" / code))
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    return env


def write_sizes(scratch: Path, sizes: list[Size], full_prompts: bool,
                src: Path | None = None) -> None:
    """The pairs, written by a child process: Linux carries a process's peak RSS across
    fork and exec into its children's ``ru_maxrss``, so this runner must stay small (it
    never imports flarespec) or it would be every child's peak."""
    order = {"full_prompts": full_prompts, "sizes": [asdict(size) for size in sizes]}
    written = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--write",
                              str(scratch), json.dumps(order)], env=source_env(src, scratch))
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


def command_lines(scratch: Path, size: Size, src: Path | None = None,
                  baseline_src: Path | None = None) -> dict[str, tuple[list[str], dict]]:
    """Each command's argv and environment. ``measure_j1`` is ``measure`` with
    ``FLARESPEC_JOBS=1`` (one process); the baseline commands run the code of
    ``baseline_src`` on the same pair."""
    baseline, candidate = pair_paths(scratch, size)
    flarespec = [sys.executable, "-m", "flarespec"]
    floor = [sys.executable, str(Path(__file__).resolve())]
    roots = [str(baseline.parent), str(candidate.parent)]

    def measure(tag: str) -> list[str]:
        return [*flarespec, "measure", "--packet", str(baseline), "--peer", str(candidate),
                "--output", str(scratch / f"receipt-{tag}-{size.name}.json"), "--quiet"]

    default, one = source_env(src, scratch), source_env(src, scratch, FLARESPEC_JOBS="1")
    lines = {
        "floor": ([*floor, "--floor", *roots], default),
        "floor_2p": ([*floor, "--floor-2p", *roots], default),
        "measure": (measure("measure"), default),
        "measure_j1": (measure("measure-j1"), one),
        "validate_pair": ([*flarespec, "validate-pair", "--baseline", str(baseline),
                           "--candidate", str(candidate), "--output",
                           str(scratch / f"receipt-pair-{size.name}.json"), "--quiet"], default),
    }
    if baseline_src is not None:
        lines["measure_base"] = (measure("measure-base"), source_env(baseline_src, scratch))
        lines["measure_j1_base"] = (measure("measure-j1-base"),
                                    source_env(baseline_src, scratch, FLARESPEC_JOBS="1"))
    return lines


def measure_size(scratch: Path, size: Size, runs: int, src: Path | None = None,
                 baseline_src: Path | None = None, progress: Progress | None = None) -> dict:
    """Medians of ``runs`` interleaved rounds (a slow moment of the machine hits all alike).
    One untimed ``measure`` first (per code): the compiled-spec cache is warm for all.
    ``progress`` is told each run before it starts."""
    progress = progress or Progress(0, quiet=True)
    argvs = command_lines(scratch, size, src, baseline_src)
    for name in ("measure", "measure_base"):
        if name in argvs:
            progress.warm_up(size, name)
            run_child(*argvs[name])
    samples: dict[str, list[dict]] = {name: [] for name in argvs}
    for k in range(1, runs + 1):
        for name in argvs:
            progress.run(size, k, runs, name)
            samples[name].append(run_child(*argvs[name]))
    return {name: {key: statistics.median(run[key] for run in runs_)
                   for key in ("wall", "cpu", "rss_mib")}
            for name, runs_ in samples.items()}


def packet_size(scratch: Path, size: Size) -> tuple[int, float]:
    files = [p for entry in pair_paths(scratch, size) for p in entry.parent.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files) / MIB


# ------------------------------------------------------------------------- figures


def row_for(scratch: Path, size: Size, runs: int, src: Path | None = None,
            baseline_src: Path | None = None, progress: Progress | None = None) -> dict:
    files, mib = packet_size(scratch, size)
    medians = measure_size(scratch, size, runs, src, baseline_src, progress)
    floor, floor_2p = medians["floor"], medians["floor_2p"]
    ratios = {name: {"wall": medians[name]["wall"] / floor["wall"],
                     "wall_2p": medians[name]["wall"] / floor_2p["wall"],
                     "cpu": medians[name]["cpu"] / floor["cpu"],
                     "rss": medians[name]["rss_mib"] / floor["rss_mib"]}
              for name in (*VALIDATORS, *BASELINE_COMMANDS) if name in medians}
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
            "cpu": {name: row[name]["cpu"] / previous[name]["cpu"] for name in COMMANDS},
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
             for what, limit, figure in checks for name in ISSUE9_VALIDATORS]
    return [{"target": what, "limit": limit, "figure": value, "met": value <= limit}
            for what, limit, value in found if value is not None]


def issue15_targets(rows: list[dict]) -> list[dict]:
    """Issue 15's targets against the issue's floor, each with its figure (left out when its
    size, or for "not slower at R=1" the baseline code, was not run). "Not slower" compares
    the new code with the baseline's in the same interleaved run: the ratio of the two
    medians must be at most 1 (plus 3% of noise)."""
    r1, r20, r100 = _matrix(rows, 1), _matrix(rows, 20), _matrix(rows, 100)
    growth_20 = _growth_from(r20, 5)
    based = r1 if r1 and "measure_base" in r1 else None
    checks = [
        ("R=20 measure JOBS=1 CPU x floor", 2.0,
         r20 and r20["ratios"]["measure_j1"]["cpu"]),
        ("R=20 measure (default) wall x two-process floor", 2.0,
         r20 and r20["ratios"]["measure"]["wall_2p"]),
        ("R=20 measure JOBS=1 peak RSS x floor", 1.5,
         r20 and r20["ratios"]["measure_j1"]["rss"]),
        ("R=100 measure JOBS=1 peak RSS x floor", 2.0,
         r100 and r100["ratios"]["measure_j1"]["rss"]),
        ("R=20/R=5 measure JOBS=1 CPU growth", 4.5,
         growth_20 and growth_20["cpu"]["measure_j1"]),
        ("R=1 measure wall / baseline's (not slower)", 1.03,
         based and based["measure"]["wall"] / based["measure_base"]["wall"]),
        ("R=1 measure JOBS=1 CPU / baseline's (not slower)", 1.03,
         based and based["measure_j1"]["cpu"] / based["measure_j1_base"]["cpu"]),
    ]
    return [{"target": what, "limit": limit, "figure": value, "met": value <= limit}
            for what, limit, value in checks if value]


# --------------------------------------------------------------------------- table


def table(rows: list[dict], checked: list[dict], checked15: list[dict] | None = None) -> str:
    head = (f"{'size':>17} {'files':>6} {'MiB':>7} | {'floor s':>7} {'fl2p s':>7} {'meas s':>7} "
            f"{'pair s':>7} {'meas x':>6} {'x 2p':>6} {'pair x':>6} | {'floor c':>7} "
            f"{'j1 cpu':>7} {'cpu x j1':>8} {'cpu x m':>7} {'cpu x p':>7} | {'floor MiB':>9} "
            f"{'j1 MiB':>7} {'meas MiB':>8} {'rss x j1':>8} {'rss x m':>7}")
    lines = [head] + [_table_row(row) for row in rows]
    lines += [_baseline_line(row) for row in rows if "measure_base" in row]
    lines += [_growth_line(row) for row in rows if "growth" in row]
    lines += [_package_line(row) for row in rows if "rss_added_mib" in row]
    lines += ["issue 9 targets:"] + [_target_line(t) for t in checked]
    if checked15 is not None:
        lines += ["issue 15 targets (the issue's floor):"] + [_target_line(t) for t in checked15]
    return "\n".join(lines)


def _target_line(t: dict) -> str:
    return f"  {'met    ' if t['met'] else 'NOT met'} {t['target']}: {t['figure']:.2f} (<= {t['limit']})"


def _table_row(row: dict) -> str:
    f, f2, m, j1, p = (row[name] for name in COMMANDS)
    rm, rj, rp = (row["ratios"][name] for name in VALIDATORS)
    return (f"{row['size']:>17} {row['files']:>6} {row['mib']:>7.1f} | {f['wall']:>7.3f} "
            f"{f2['wall']:>7.3f} {m['wall']:>7.3f} {p['wall']:>7.3f} {rm['wall']:>6.2f} "
            f"{rm['wall_2p']:>6.2f} {rp['wall']:>6.2f} | {f['cpu']:>7.3f} {j1['cpu']:>7.3f} "
            f"{rj['cpu']:>8.2f} {rm['cpu']:>7.2f} {rp['cpu']:>7.2f} | {f['rss_mib']:>9.1f} "
            f"{j1['rss_mib']:>7.1f} {m['rss_mib']:>8.1f} {rj['rss']:>8.2f} {rm['rss']:>7.2f}")


def _baseline_line(row: dict) -> str:
    b, bj = row["ratios"]["measure_base"], row["ratios"]["measure_j1_base"]
    return (f"{row['size']} baseline code: measure wall {row['measure_base']['wall']:.3f} s "
            f"({b['wall_2p']:.2f}x 2p floor), JOBS=1 CPU {row['measure_j1_base']['cpu']:.3f} s "
            f"({bj['cpu']:.2f}x floor), JOBS=1 RSS {row['measure_j1_base']['rss_mib']:.1f} MiB "
            f"({bj['rss']:.2f}x)")


def _growth_line(row: dict) -> str:
    growth = row["growth"]
    walls = ", ".join(f"{LABELS[name]} x{growth['wall'][name]:.2f}" for name in COMMANDS)
    cpus = ", ".join(f"{LABELS[name]} x{growth['cpu'][name]:.2f}" for name in ("floor", "measure_j1"))
    drift = ", ".join(f"{LABELS[name]} x{growth['ratio_drift'][name]:.2f}" for name in VALIDATORS)
    return (f"R={row['repetitions']}/R={growth['from_repetitions']} wall growth: {walls}; "
            f"CPU growth: {cpus}; "
            f"ratio R={row['repetitions']} / ratio R={growth['from_repetitions']}: {drift}")


def _package_line(row: dict) -> str:
    added = ", ".join(f"{LABELS[name]} {row['rss_added_mib'][name]:+.1f}" for name in COMMANDS)
    return f"{row['size']}: peak RSS added by the package over R={row['repetitions']} (MiB): {added}"


# ---------------------------------------------------------------------------- main


def parse_options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Defaults: --repetitions 1 5 20 100 --runs 5 --package-mib 1024; --quick: "
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
    parser.add_argument("--quiet", action="store_true",
                        help="No progress on stderr (a line before each run, by default); "
                             "stdout's table is the same.")
    parser.add_argument("--out", type=Path, default=HERE / "results.json",
                        help="Where the results are saved as JSON (default: %(default)s).")
    parser.add_argument("--src", type=Path, metavar="DIR",
                        help="Run flarespec (and write the pairs) from this source directory "
                             "(PYTHONPATH), e.g. a worktree's src/ prepared by "
                             "receipts_identity.py --prepare REV.")
    parser.add_argument("--baseline-src", type=Path, metavar="DIR",
                        help="Also run measure (default and FLARESPEC_JOBS=1) with the code of "
                             "this source directory, interleaved: issue 15's not-slower target.")
    parser.add_argument("--floor", nargs="+", type=Path, metavar="ROOT",
                        help=argparse.SUPPRESS)  # the floor's own child process
    parser.add_argument("--floor-2p", nargs=2, type=Path, metavar="ROOT",
                        help=argparse.SUPPRESS)  # the two-process floor's child
    parser.add_argument("--write", nargs=2, metavar=("DIR", "ORDER"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    for key, value in (QUICK if options.quick else DEFAULTS).items():
        if getattr(options, key) is None:
            setattr(options, key, value)
    if options.runs < 1 or min(options.repetitions) < 1 or options.package_mib < 0:
        parser.error("--runs and --repetitions take integers >= 1, --package-mib >= 0")
    for flag, src in (("--src", options.src), ("--baseline-src", options.baseline_src)):
        if src is not None and not (src / "flarespec" / "__init__.py").is_file():
            parser.error(f"{flag} {src}: no flarespec package there (give a source tree's src "
                         f"directory, e.g. what receipts_identity.py --prepare REV prints)")
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
    if options.floor_2p:
        from bench_validate import floor_two_processes

        return floor_two_processes(*options.floor_2p)
    sizes = sizes_of(options)
    progress = Progress(runs_in_all(sizes, options.runs, options.baseline_src),
                        quiet=options.quiet)
    with tempfile.TemporaryDirectory(prefix="flarespec-bench-") as scratch:
        check_disk(options, Path(scratch), sizes)
        progress.note(f"writing {len(sizes)} pairs ({', '.join(s.label for s in sizes)})")
        write_sizes(Path(scratch), sizes, not options.short_prompts, options.src)
        rows = []
        for size in sizes:
            rows.append(row_for(Path(scratch), size, options.runs, options.src,
                                options.baseline_src, progress))
            print(f"{size.label} measured", flush=True)
        progress.finish()
    add_growth(rows)
    add_package_cost(rows)
    checked, checked15 = targets(rows), issue15_targets(rows)
    print(table(rows, checked, checked15))
    options.out.write_text(json.dumps({
        "spec": SPEC_ID, "runs": options.runs, "cpus": os.cpu_count(),
        "full_prompts": not options.short_prompts,
        "src": options.src and str(options.src),
        "baseline_src": options.baseline_src and str(options.baseline_src),
        "results": rows, "targets": checked, "issue15_targets": checked15,
    }, indent=2) + "\n")
    print(f"saved {options.out}")


if __name__ == "__main__":
    main()
