"""``flarespec spec test``: run a spec's own cases (the catalogs of its chain) strictly.

``flarespec fixture check`` is an alias: the same command object behind another name.
"""

from __future__ import annotations

import sys
import time

import click

from flarespec.cli.formats import emit, format_options

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

HELP = """Run the cases of each SPEC (bundled id or file; default: every bundled spec that
has a catalog) and check them strictly.

The cases come from the catalogs associated with the spec or one of its ancestors (a
catalog's `spec:`), built from the constants of the spec under test, so a child inherits
them. A case whose expected rule or document the child dropped is "not applicable";
expectations follow renamed rules (`renamed_from`). Strict means: exactly the expected
error rule ids, the expected warnings, no metric in a rejection, no internal error, and
the spec's metric on a pass.

\b
Exit codes: 0 every case as expected (not applicable ones aside),
            1 some case failed (one line each: expected vs got),
            2 usage or spec error, or -k matched no case.
\b
Examples:
  flarespec spec test                          # every bundled spec
  flarespec spec test child.yaml -k missing    # the missing-file cases of a draft
  flarespec spec test shop/v1 --coverage --format junit --output cases.xml
  flarespec spec test shop/v1 --format sarif --output cases.sarif
\b
Progress goes to stderr (a bar on a terminal, a line per tenth in a CI log; none with -q).
"""


def _options(command):
    for option in reversed([
        click.argument("spec_refs", nargs=-1, metavar="[SPEC]..."),
        click.option("-k", "pattern", help="Only cases whose name contains this text (no match: exit 2)."),
        click.option("--catalog", "catalogs", multiple=True, type=click.Path(exists=True, dir_okay=False),
                     help="Run this catalog file instead of the spec's own catalogs (repeatable)."),
        click.option("--coverage", is_flag=True,
                     help="Also list the error rules no case covers (a rule is covered when a case "
                          "expects it in rejected_by and it fires there; with -k, only the rules the "
                          "selected cases target are counted) and say how many are (exit code unchanged)."),
        format_options(),
        click.option("--output", type=click.Path(dir_okay=False),
                     help="Write the report (any --format) to this file instead of stdout."),
        click.option("--quiet", "-q", is_flag=True, help="No progress on stderr."),
    ]):
        command = option(command)
    return command


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _plan(spec_ref: str, catalogs: tuple[str, ...], pattern: str | None):
    """(compiled spec, SpecCases filtered by -k, spec_path for measure) or exit 2."""
    from pathlib import Path

    from flarespec.fixtures.catalog import CatalogError
    from flarespec.fixtures.check import catalogs_for, spec_cases
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import is_path, open_compiled

    try:
        compiled = open_compiled(spec_ref)
        files = [Path(c) for c in catalogs] or catalogs_for(compiled)
        if not files:
            _fail(f"{spec_ref}: no catalog is associated with {compiled.id} or its ancestors "
                  f"(give one with --catalog)")
        planned = spec_cases(compiled, files, selection_runs=not is_path(spec_ref))
    except SpecInvalid as problem:
        click.echo(str(problem), err=True)
        sys.exit(EXIT_USAGE)
    except CatalogError as problem:
        _fail(str(problem))
    planned.cases = [case for case in planned.cases if not pattern or pattern in case.name]
    planned.catalog_files = files
    return compiled, planned, spec_ref if is_path(spec_ref) else None


def _refuse_reading_output(output: str | None, plans) -> None:
    """``--output`` naming a file this command reads (a spec file, a parent, a hook
    module's source, a catalog) is refused, exit 2, before anything runs or is written."""
    if not output:
        return
    from pathlib import Path

    from flarespec.adapter.receipt import OutputRefused, refuse_inputs, spec_inputs

    inputs = []
    for compiled, planned, _ in plans:
        inputs.extend(spec_inputs(compiled))
        inputs.extend((str(f), "a catalog file") for f in [*planned.catalogs,
                                                            *getattr(planned, "catalog_files", ())])
    try:
        refuse_inputs(output, Path(output), inputs)
    except OutputRefused as refused:
        _fail(f"--output refused: {refused}; nothing was written")


def _default_refs() -> tuple[list[str], int]:
    """The bundled specs with a catalog, and how many bundled files do not compile: each is
    named on stderr and skipped (the others are tested; the exit is then 2)."""
    from flarespec.fixtures.check import catalogs_for
    from flarespec.compiler.open import bundled_loadable

    specs, problems = bundled_loadable()
    for issue in problems:
        click.echo(f"error: {issue} (this spec file is not tested)", err=True)
    return [spec.id for spec in specs if catalogs_for(spec)], len(problems)


def run_spec_tests(spec_refs, pattern, catalogs, coverage, fmt, root, output, quiet) -> None:
    """The command body (shared by `spec test` and its alias `fixture check`)."""
    from flarespec.fixtures.check import check_cases, coverage as judge_coverage
    from flarespec.fixtures.case_report import SpecRun, spec_test_report
    from flarespec.output.progress import progress

    refs, broken = (list(spec_refs), 0) if spec_refs else _default_refs()
    plans = [_plan(ref, catalogs, pattern) for ref in refs]
    if not plans:
        _fail("no spec to test: no bundled spec has a catalog")
    if pattern and not any(planned.cases for _, planned, _ in plans):
        _fail(f"-k {pattern!r} matches no case")
    _refuse_reading_output(output, plans)
    runs = []
    for compiled, planned, spec_path in plans:
        started = time.perf_counter()
        with progress(len(planned.cases), f"spec test {compiled.id}", quiet=quiet,
                      unit="cases") as step:
            results = check_cases(planned.cases, compiled, spec_path,
                                  skip=lambda case: planned.skip.get(case.name),
                                  on_case=lambda result: step(result.name))
        covered = judge_coverage(compiled, planned.cases, planned.skip, results,
                                 selected=bool(pattern)) if coverage else None
        catalog = str(planned.catalog_files[0]) if planned.catalog_files else None
        places = {case.name: (case.mark.file, case.mark.line) for case in planned.cases
                  if case.mark is not None}
        runs.append(SpecRun(compiled.id, results, covered, time.perf_counter() - started,
                            catalog, places))
    report = spec_test_report(runs, broken)
    emit(report, fmt, root=root, to=output)
    sys.exit(EXIT_USAGE if broken else EXIT_OK if report.ok else EXIT_FAILED)


@click.command("test", help=HELP)
@_options
def spec_test(spec_refs, pattern, catalogs, coverage, fmt, root, output, quiet):
    run_spec_tests(spec_refs, pattern, catalogs, coverage, fmt, root, output, quiet)


@click.command("check", help="Alias of `flarespec spec test` (same options, same code).\n\n" + HELP)
@_options
def fixture_check(spec_refs, pattern, catalogs, coverage, fmt, root, output, quiet):
    run_spec_tests(spec_refs, pattern, catalogs, coverage, fmt, root, output, quiet)
