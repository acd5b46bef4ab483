"""``flarespec spec test``: run a spec's own cases (the catalogs of its chain) strictly.

``flarespec fixture check`` is an alias: the same command object behind another name.
"""

from __future__ import annotations

import sys
import time

import click

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
        click.option("--format", "fmt", type=click.Choice(["text", "github", "junit"]), default="text",
                     show_default=True, help="github: ::error:: lines for Actions; junit: JUnit XML."),
        click.option("--output", type=click.Path(dir_okay=False),
                     help="Write the junit report to this file instead of stdout."),
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
    from flarespec.spec.errors import SpecInvalid
    from flarespec.spec.open import is_path, open_compiled

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


def _line(spec_id: str, result) -> str:
    problems = "; ".join(result.problems)
    return (f"{spec_id} {result.name}: expected {result.expected}; got {result.got}"
            + (f" ({problems})" if problems and not result.got.startswith("crash") else ""))


def _summary(spec_id: str, results, seconds: float) -> str:
    from flarespec.fixtures.check import FAILED, KNOWN_ISSUE, NOT_APPLICABLE, PASSED

    count = {status: sum(r.status == status for r in results)
             for status in (PASSED, FAILED, NOT_APPLICABLE, KNOWN_ISSUE)}
    known = f", {count[KNOWN_ISSUE]} known issue(s)" if count[KNOWN_ISSUE] else ""
    return (f"{spec_id}: {count[PASSED]} passed, {count[FAILED]} failed, "
            f"{count[NOT_APPLICABLE]} not applicable{known} ({seconds:.1f} s)")


def _text(runs, github: bool) -> None:
    from flarespec.fixtures.check import FAILED, NOT_APPLICABLE

    for spec_id, results, covered, seconds in runs:
        for result in results:
            if result.status == FAILED:
                click.echo(f"::error title=spec test::{_line(spec_id, result)}" if github
                           else f"FAIL {_line(spec_id, result)}")
            elif result.status == NOT_APPLICABLE:
                click.echo(f"n/a  {spec_id} {result.name}: {result.reason}")
        if covered is not None:
            for line in _coverage_lines(spec_id, covered, github):
                click.echo(line)
        click.echo(_summary(spec_id, results, seconds))


def _coverage_lines(spec_id: str, covered, github: bool) -> list[str]:
    """One line per uncovered rule (its reason), the rules a ``-k`` selection targets,
    and the count: ``coverage: all N error rules covered by M cases`` when complete."""
    lines = [f"{'::warning title=spec test::' if github else 'uncovered '}{spec_id} "
             f"{gap.rule}: {gap.reason()}" for gap in covered.uncovered]
    if covered.selected:
        lines.append(f"{spec_id} -k selection targets: {', '.join(covered.rules) or 'no error rule'}")
    lines.append(f"{spec_id} {covered.summary()}")
    return lines


def _junit(runs, output: str | None) -> None:
    import xml.etree.ElementTree as ET

    from flarespec.fixtures.check import FAILED, KNOWN_ISSUE, NOT_APPLICABLE

    suites = ET.Element("testsuites")
    for spec_id, results, covered, seconds in runs:
        suite = ET.SubElement(suites, "testsuite", name=spec_id, tests=str(len(results)),
                              failures=str(sum(r.status == FAILED for r in results)),
                              skipped=str(sum(r.status in (NOT_APPLICABLE, KNOWN_ISSUE) for r in results)),
                              time=f"{seconds:.3f}")
        for result in results:
            case = ET.SubElement(suite, "testcase", classname=spec_id, name=result.name)
            if result.status == FAILED:
                ET.SubElement(case, "failure", message=_line(spec_id, result)).text = result.report
            elif result.status in (NOT_APPLICABLE, KNOWN_ISSUE):
                ET.SubElement(case, "skipped", message=f"{result.status}: {result.reason}")
        if covered is not None:
            ET.SubElement(suite, "system-out").text = "\n".join(
                _coverage_lines(spec_id, covered, github=False))
    ET.indent(suites)
    text = ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
    if output:
        from pathlib import Path

        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as problem:
            _fail(f"--output {output}: {problem.strerror or problem}")
    else:
        click.echo(text, nl=False)


def render(runs, fmt: str, output: str | None) -> bool:
    """Report every run in ``fmt``; True when some case failed."""
    from flarespec.fixtures.check import FAILED

    if fmt == "junit":
        _junit(runs, output)
    else:
        _text(runs, github=fmt == "github")
    return any(r.status == FAILED for _, results, _, _ in runs for r in results)


def _default_refs() -> tuple[list[str], int]:
    """The bundled specs with a catalog, and how many bundled files do not compile: each is
    named on stderr and skipped (the others are tested; the exit is then 2)."""
    from flarespec.fixtures.check import catalogs_for
    from flarespec.spec.open import bundled_loadable

    specs, problems = bundled_loadable()
    for issue in problems:
        click.echo(f"error: {issue} (this spec file is not tested)", err=True)
    return [spec.id for spec in specs if catalogs_for(spec)], len(problems)


def run_spec_tests(spec_refs, pattern, catalogs, coverage, fmt, output) -> None:
    """The command body (shared by `spec test` and its alias `fixture check`)."""
    from flarespec.fixtures.check import check_cases, coverage as judge_coverage

    if output and fmt != "junit":
        _fail("--output is for --format junit (text and github go to stdout)")
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
        results = check_cases(planned.cases, compiled, spec_path,
                              skip=lambda case: planned.skip.get(case.name))
        covered = judge_coverage(compiled, planned.cases, planned.skip, results,
                                 selected=bool(pattern)) if coverage else None
        runs.append((compiled.id, results, covered, time.perf_counter() - started))
    failed = render(runs, fmt, output)
    sys.exit(EXIT_USAGE if broken else EXIT_FAILED if failed else EXIT_OK)


@click.command("test", help=HELP)
@_options
def spec_test(spec_refs, pattern, catalogs, coverage, fmt, output):
    run_spec_tests(spec_refs, pattern, catalogs, coverage, fmt, output)


@click.command("check", help="Alias of `flarespec spec test` (same options, same code).\n\n" + HELP)
@_options
def fixture_check(spec_refs, pattern, catalogs, coverage, fmt, output):
    run_spec_tests(spec_refs, pattern, catalogs, coverage, fmt, output)
