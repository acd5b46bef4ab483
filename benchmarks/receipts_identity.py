"""Receipts byte for byte: the code of a baseline revision against the current code.

Issue 15 asks for speed without a changed verdict: every receipt must stay byte-identical.
This script builds the inputs once, runs both codes on the very same files and compares
what they write:

* the R pairs (``--repetitions``, default 1 5 20 100): a baseline and a candidate packet
  written by the spec's fixture writer with full prompts, as ``benchmarks/run.py`` writes
  them; each is run through ``measure`` (default mode: the second packet in a forked
  worker, and ``FLARESPEC_JOBS=1``) and ``validate-pair``, each a fresh process;
* every catalog case of every bundled spec (``flarespec spec test``'s cases: the packets
  ``fixtures.catalog.build_case`` builds; a case that does not apply to its spec is left
  out, as spec test leaves it), run through ``measure --packet P --peer Q`` (Q = P for a
  case without a peer) and, for a case with a peer, ``validate-pair``, in one process per
  code (click's command line, in process, ``FLARESPEC_JOBS=1``).

The inputs are built by the current code (``--build-with base`` uses the baseline's
writer and catalogs instead: then only the cases the baseline knows are compared).

The baseline code is the revision's tree exported with ``git archive`` (nothing is added
to the repository: no worktree, no branch) into ``--base-dir`` (default
``$TMPDIR/flarespec-base-<commit>``, reused when present), with
``src/flarespec/bundled_specs`` and ``bundled_fixtures`` linked to its ``specs/`` and
``fixtures/`` (what ``pyproject.toml``'s package-dir does for an install). It runs with
``PYTHONPATH=<base-dir>/src``: the import system finds that ``flarespec`` (and its bundled
specs) before the editable install's finder, which would otherwise supply the current
``specs/``. The current code is the ``flarespec`` this interpreter imports (checked: it
must be this checkout's ``src``).

What may differ, and is normalised before the byte comparison (nothing else is):

* ``validator.specs[].files[].path``: the absolute path of each spec file, which names
  the directory the code runs from. Both sides' spec directories are replaced by
  ``<specs>`` in the receipt's bytes.
* ``validator.hooks[].sha256``: the SHA-256 of a hook module's source
  (``flarespec.hooks.flare``), which changes with any edit of that file, a faster one
  too. Each receipt's own hook digests are replaced by a mark naming the module, and the
  modules whose digest differs are listed in a note (``--strict-hooks``: a difference).

Nothing else is normalised: violations and their order, messages, lines, metrics, file
digests, the validator's version and Python, the specs' resolved digests and file digests
are compared byte for byte, and the exit codes too. A difference in the validator identity
alone (a spec file edited since the baseline) is reported as such. Receipts carry no
timestamp, no host and no commit.

    python benchmarks/receipts_identity.py                      # baseline 2ca0839, R = 1 5 20 100
    python benchmarks/receipts_identity.py --base HEAD~3 --repetitions 1 5
    python benchmarks/receipts_identity.py --no-catalog         # the R pairs only
    python benchmarks/receipts_identity.py --prepare 2ca0839    # just export the baseline; print its src

Exit 0: every receipt identical; 1: a difference (listed); 2: the comparison could not run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
BASELINE = "2ca0839"  # issue 15's starting point (docs/benchmarks.md "Issue 15")
SPEC_ID = "flare/bce032c0"
SPECS_MARK = b"<specs>"
DEFAULT_REPETITIONS = [1, 5, 20, 100]


def fail(message: str) -> None:
    print(f"receipts_identity.py: {message}", file=sys.stderr)
    sys.exit(2)


# ------------------------------------------------------------------ the baseline's code


def commit_of(revision: str) -> str:
    found = subprocess.run(["git", "-C", str(REPOSITORY), "rev-parse", "--verify", "--quiet",
                            f"{revision}^{{commit}}"], capture_output=True, text=True)
    if found.returncode:
        fail(f"{revision!r} is not a commit of {REPOSITORY}")
    return found.stdout.strip()


def prepare(revision: str, directory: Path | None = None) -> Path:
    """The revision's tree exported to ``directory`` (made once), ready to import from its
    ``src``; returns that ``src``."""
    commit = commit_of(revision)
    directory = directory or Path(tempfile.gettempdir()) / f"flarespec-base-{commit[:12]}"
    src = directory / "src"
    done = directory / ".exported"
    if not done.exists():
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
        archive = subprocess.Popen(["git", "-C", str(REPOSITORY), "archive", commit],
                                   stdout=subprocess.PIPE)
        unpacked = subprocess.run(["tar", "-x", "-C", str(directory)], stdin=archive.stdout)
        archive.stdout.close()
        if archive.wait() or unpacked.returncode:
            fail(f"could not export {commit} with git archive into {directory}")
        for package, target in (("bundled_specs", "specs"), ("bundled_fixtures", "fixtures")):
            link = src / "flarespec" / package
            if not link.exists():
                link.symlink_to(Path("..", "..", target))
        done.write_text(commit + "\n")
    return src


def environment(src: Path | None, **variables: str) -> dict:
    env = {**os.environ, **variables}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    return env


def code_description(src: Path | None) -> dict:
    """Where that code's flarespec and its bundled specs are imported from."""
    probe = ("import json, flarespec, flarespec.bundled_specs as s; print(json.dumps("
             "{'package': flarespec.__path__[0], 'specs': list(s.__path__)[0]}))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env=environment(src), cwd=tempfile.gettempdir())
    if found.returncode:
        fail(f"flarespec cannot be imported{f' from {src}' if src else ''}: {found.stderr[-500:]}")
    return json.loads(found.stdout)


# --------------------------------------------------------------------------- building


def build(scratch: Path, repetitions: list[int], catalog: bool, src: Path | None) -> list[dict]:
    """The inputs, written by a child running the code of ``src`` (None: the current code);
    returns the jobs: a name, the command's arguments, and whether it runs as its own process."""
    order = {"repetitions": repetitions, "catalog": catalog}
    built = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--build-in-child",
                            str(scratch), json.dumps(order)], env=environment(src))
    if built.returncode:
        fail("building the inputs failed (see above)")
    return json.loads((scratch / "jobs.json").read_text())


def build_in_child(scratch: Path, order: dict) -> None:
    jobs: list[dict] = []
    inputs = scratch / "inputs"
    for repetitions in order["repetitions"]:
        from flarespec.fixtures.writers import write_pair

        started = time.perf_counter()
        baseline, candidate = write_pair(inputs / f"r{repetitions}", SPEC_ID,
                                         repetitions=repetitions, full_prompts=True)
        print(f"  wrote the R={repetitions} pair ({time.perf_counter() - started:.1f} s)",
              flush=True)
        name = f"r{repetitions}"
        measure = ["measure", "--packet", str(baseline), "--peer", str(candidate)]
        jobs += [
            {"name": f"{name}.measure", "argv": measure, "process": True},
            {"name": f"{name}.measure-jobs1", "argv": measure, "process": True,
             "env": {"FLARESPEC_JOBS": "1"}},
            {"name": f"{name}.validate-pair", "process": True,
             "argv": ["validate-pair", "--baseline", str(baseline), "--candidate", str(candidate)]},
        ]
    if order["catalog"]:
        jobs += build_catalog(inputs / "catalog")
    (scratch / "jobs.json").write_text(json.dumps(jobs, indent=1))


def build_catalog(directory: Path) -> list[dict]:
    from flarespec.adapter.select import bundled_specs
    from flarespec.fixtures.catalog import TemplateCache, build_case
    from flarespec.fixtures.check import catalogs_for, spec_cases

    jobs, built, skipped, crashed = [], 0, 0, []
    for spec in bundled_specs():
        planned = spec_cases(spec, catalogs_for(spec), selection_runs=True)
        templates = TemplateCache(directory / "templates" / spec.id.replace("/", "_"))
        for number, case in enumerate(planned.cases):
            if case.name in planned.skip:
                skipped += 1
                continue
            name = f"{spec.id}/{case.name}"
            where = directory / spec.id.replace("/", "_") / f"case-{number}"
            try:
                packet, peer = build_case(case, where, spec, templates)
            except Exception as problem:  # noqa: BLE001 - the case cannot be built: say so
                crashed.append(f"{name}: {type(problem).__name__}: {problem}")
                continue
            built += 1
            jobs.append({"name": f"{name}.measure", "process": False,
                         "argv": ["measure", "--packet", str(packet), "--peer", str(peer)]})
            if peer != packet:
                jobs.append({"name": f"{name}.validate-pair", "process": False,
                             "argv": ["validate-pair", "--baseline", str(packet),
                                      "--candidate", str(peer)]})
    print(f"  built {built} catalog cases ({skipped} not applicable to their spec"
          f"{f', {len(crashed)} could not be built' if crashed else ''})", flush=True)
    for line in crashed:
        print(f"    not built: {line}")
    return jobs


# ---------------------------------------------------------------------------- running


def run_jobs(jobs: list[dict], out: Path, src: Path | None) -> None:
    """Every job's receipt (and exit code) under ``out``: the process jobs each a fresh
    ``python -m flarespec``; the others in one child, in process."""
    out.mkdir(parents=True)
    codes = {}
    for number, job in enumerate(jobs):
        if not job["process"]:
            continue
        receipt = out / f"{number}.json"
        ran = subprocess.run([sys.executable, "-m", "flarespec", *job["argv"], "--output",
                              str(receipt), "--quiet"], env=environment(src, **job.get("env", {})),
                             cwd=tempfile.gettempdir(), capture_output=True, text=True)
        codes[number] = ran.returncode
    in_process = [(number, job) for number, job in enumerate(jobs) if not job["process"]]
    if in_process:
        order = out / "in-process.json"
        order.write_text(json.dumps([[number, job["argv"]] for number, job in in_process]))
        ran = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--run-in-child",
                              str(order), str(out)], env=environment(src, FLARESPEC_JOBS="1"),
                             cwd=tempfile.gettempdir())
        if ran.returncode:
            fail(f"the in-process runner failed ({'current' if src is None else src})")
        codes.update({int(k): v for k, v in json.loads((out / "codes.json").read_text()).items()})
    (out / "codes.json").write_text(json.dumps(codes))


def run_in_child(order_file: Path, out: Path) -> None:
    """The in-process jobs through click's command line (as ``flarespec spec test`` runs a
    case: one process for all); records each exit code."""
    import io

    from flarespec.cli import main

    codes = {}
    for number, argv in json.loads(order_file.read_text()):
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()
        try:
            main.main(args=[*argv, "--output", str(out / f"{number}.json"), "--quiet"],
                      prog_name="flarespec", standalone_mode=True)
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except Exception as crash:  # noqa: BLE001 - compared like an exit code
            code = f"crash: {type(crash).__name__}: {crash}"
        finally:
            sys.stdout, sys.stderr = stdout, stderr
        codes[number] = code
    (out / "codes.json").write_text(json.dumps(codes))


# -------------------------------------------------------------------------- comparing


def normalised(path: Path, specs_dir: str) -> bytes | None:
    if not path.exists():
        return None
    data = path.read_bytes()
    quoted = json.dumps(specs_dir.rstrip("/") + "/")[1:-1].encode()
    return data.replace(quoted, SPECS_MARK + b"/")


def hooks_masked(data: bytes) -> tuple[bytes, dict]:
    """The receipt with each hook module's digest (``validator.hooks[].sha256``) replaced
    by a mark, and those digests by module."""
    try:
        hooks = {hook["module"]: hook["sha256"]
                 for hook in json.loads(data).get("validator", {}).get("hooks", [])}
    except (ValueError, AttributeError, KeyError, TypeError):
        return data, {}
    for module, digest in hooks.items():
        data = data.replace(f'"{digest}"'.encode(), f'"<digest of {module}>"'.encode())
    return data, hooks


def identity_only(base: bytes, current: bytes) -> bool:
    """The two receipts differ only in ``validator`` (a spec or hook edited since)."""
    try:
        one, two = json.loads(base), json.loads(current)
    except ValueError:
        return False
    one.pop("validator", None)
    two.pop("validator", None)
    return one == two


def compare(jobs: list[dict], base_out: Path, current_out: Path, base_specs: str,
            current_specs: str, hooks_changed: set[str], *, strict_hooks: bool = False) -> list[str]:
    """The differences, one line each; the hook modules whose digest alone differs go to
    ``hooks_changed`` (a difference only with ``strict_hooks``)."""
    base_codes = json.loads((base_out / "codes.json").read_text())
    current_codes = json.loads((current_out / "codes.json").read_text())
    differences = []
    for number, job in enumerate(jobs):
        key = str(number)
        if base_codes.get(key) != current_codes.get(key):
            differences.append(f"{job['name']}: exit {base_codes.get(key)} (baseline) vs "
                               f"{current_codes.get(key)} (current)")
            continue
        base = normalised(base_out / f"{number}.json", base_specs)
        current = normalised(current_out / f"{number}.json", current_specs)
        if base == current:
            continue
        if base is not None and current is not None and not strict_hooks:
            (base_masked, base_hooks), (current_masked, current_hooks) = \
                hooks_masked(base), hooks_masked(current)
            if base_masked == current_masked:
                hooks_changed.update(module for module in base_hooks
                                     if base_hooks[module] != current_hooks.get(module))
                continue
        if base is None or current is None:
            differences.append(f"{job['name']}: a receipt written by "
                               f"{'the current code only' if base is None else 'the baseline only'}")
        elif identity_only(base, current):
            differences.append(f"{job['name']}: only the validator identity differs (a spec "
                               f"{'or hook ' if strict_hooks else ''}file changed since the "
                               f"baseline)")
        else:
            differences.append(f"{job['name']}: receipts differ: {first_difference(base, current)}")
    return differences


def first_difference(base: bytes, current: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(base, current)) if a != b),
              min(len(base), len(current)))
    start = max(0, at - 60)
    return (f"at byte {at}: baseline ...{base[start:at + 60].decode(errors='replace')!r} vs "
            f"current ...{current[start:at + 60].decode(errors='replace')!r}")


# ------------------------------------------------------------------------------- main


def parse_options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="See the module docstring for what is compared.")
    parser.add_argument("--base", default=BASELINE, metavar="REV",
                        help="The baseline revision (default: %(default)s).")
    parser.add_argument("--base-dir", type=Path, metavar="DIR",
                        help="Where its tree is exported (default: $TMPDIR/flarespec-base-<commit>).")
    parser.add_argument("--current-src", type=Path, metavar="DIR",
                        help="Compare this source directory's code instead of the working tree "
                             "(e.g. the output of --prepare REV, or a copy with some files changed).")
    parser.add_argument("--repetitions", type=int, nargs="*", default=DEFAULT_REPETITIONS,
                        metavar="R", help="The R pairs (default: 1 5 20 100; none: no pairs).")
    parser.add_argument("--no-catalog", action="store_true", help="Leave the catalog cases out.")
    parser.add_argument("--build-with", choices=("current", "base"), default="current",
                        help="Whose writer and catalogs build the inputs (default: current).")
    parser.add_argument("--strict-hooks", action="store_true",
                        help="A hook module's digest that differs is a difference too (by "
                             "default it is reported, not failed: it changes with the source).")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="Build and keep everything in DIR (default: a removed temporary one).")
    parser.add_argument("--prepare", metavar="REV",
                        help="Only export REV's tree and print the src directory to import from.")
    parser.add_argument("--build-in-child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--run-in-child", nargs=2, type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    options = parse_options(argv)
    if options.build_in_child:
        try:
            return build_in_child(Path(options.build_in_child[0]),
                                  json.loads(options.build_in_child[1]))
        except Exception as problem:  # noqa: BLE001 - said in one line, no traceback
            fail(f"building the inputs: {type(problem).__name__}: {problem}")
    if options.run_in_child:
        return run_in_child(*options.run_in_child)
    if options.prepare:
        print(prepare(options.prepare, options.base_dir))
        return
    base_src = prepare(options.base, options.base_dir)
    current_src = options.current_src
    base_code, current_code = code_description(base_src), code_description(current_src)
    if current_src is None and \
            Path(current_code["package"]).resolve() != (REPOSITORY / "src" / "flarespec").resolve():
        fail(f"this interpreter imports flarespec from {current_code['package']}, not from "
             f"{REPOSITORY / 'src'}: activate this checkout's environment")
    print(f"baseline {commit_of(options.base)[:12]}: {base_code['package']}")
    print(f"current ({'working tree' if current_src is None else current_src}): "
          f"{current_code['package']}")
    if options.keep and options.keep.exists() and any(options.keep.iterdir()):
        fail(f"--keep {options.keep}: not empty")
    held = (contextlib.nullcontext(str(options.keep)) if options.keep
            else tempfile.TemporaryDirectory(prefix="flarespec-receipts-"))
    with held as scratch_name:
        scratch = Path(scratch_name)
        scratch.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        jobs = build(scratch, options.repetitions, not options.no_catalog,
                     base_src if options.build_with == "base" else current_src)
        print(f"built {len(jobs)} runs in {time.perf_counter() - started:.0f} s")
        for label, src in (("baseline", base_src), ("current", current_src)):
            started = time.perf_counter()
            run_jobs(jobs, scratch / label, src)
            print(f"ran the {label} code in {time.perf_counter() - started:.0f} s", flush=True)
        hooks_changed: set[str] = set()
        differences = compare(jobs, scratch / "baseline", scratch / "current",
                              base_code["specs"], current_code["specs"], hooks_changed,
                              strict_hooks=options.strict_hooks)
    print(f"{len(jobs)} receipts compared (pairs: R = {' '.join(map(str, options.repetitions)) or '-'}"
          f"; catalog: {'no' if options.no_catalog else 'yes'}); normalised: the spec files' "
          f"directory in validator.specs[].files[].path"
          + ("" if options.strict_hooks else ", and validator.hooks[].sha256"))
    if hooks_changed:
        print(f"note: the digest of hook module(s) {', '.join(sorted(hooks_changed))} differs "
              f"(its source changed since the baseline); everything else was compared byte for "
              f"byte{' (--strict-hooks: a difference)' if options.strict_hooks else ''}")
    if differences:
        print(f"{len(differences)} differ:")
        for line in differences:
            print(f"  {line}")
        sys.exit(1)
    print("every receipt byte-identical (and every exit code the same)")


if __name__ == "__main__":
    main()
