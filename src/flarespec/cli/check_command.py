"""``flarespec check``: validate entry files of any benchmark tool against their specs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from flarespec.cli import PACKET, _fail, guarded
from flarespec.cli.formats import echo, format_options

ENVIRONMENT = """\b
Environment:
  FLARESPEC_SPECS=D1:D2  spec directories searched after each --specs DIR
                         (os.pathsep-separated: ':' here, ';' on Windows)
  FLARESPEC_JOBS=1       validate the entries in this process, one after the other
                         (default: as many at a time as there are usable cores)
  FLARESPEC_CACHE=0      neither read nor write the compiled-spec cache"""


def _entries(_ctx, _param, values: tuple[str, ...]) -> tuple[str, ...]:
    """Each ENTRY, refused only when its spelling names a directory (``A/x.json/``); a
    missing or unreadable file is evidence, reported as its entry's violation."""
    from flarespec.adapter.commands import entry_path

    for value in values:
        try:
            entry_path(value)
        except ValueError as problem:
            raise click.BadParameter(str(problem)) from None
    return values


@click.command("check", epilog=ENVIRONMENT)
@click.argument("entries", metavar="ENTRY...", nargs=-1, required=True, type=PACKET,
                callback=_entries)
@click.option("--spec", "spec_ref", metavar="ID|FILE",
              help="Validate every ENTRY against this spec (an id of a bundled spec or of "
                   "one under --specs, drafts included, or a spec file) instead of "
                   "choosing by applies_to.")
@click.option("--specs", "spec_dirs", metavar="DIR", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A directory of spec files (every *.yaml under it, recursively) to "
                   "choose from beside the bundled specs; repeatable. A spec id used twice "
                   "(here and bundled, or in two files) is refused.")
@click.option("--output", metavar="RECEIPT", type=click.Path(path_type=str, readable=False),
              help="Also write the receipt (the model measure writes: every file read and "
                   "its digest, the specs' and hooks' digests) here: outside every entry's "
                   "root, not a symlink.")
@format_options(intro="The report on stdout: ")
@click.option("--verbose", "-v", is_flag=True,
              help="text and markdown: every violation, expected and actual in full.")
@click.option("--quiet", "-q", is_flag=True, help="No notes and no progress on stderr.")
def check(entries, spec_ref, spec_dirs, output, fmt, root, verbose, quiet):
    """Validate entry files of any benchmark tool, each in full against its spec.

    The spec of an ENTRY is the one named with --spec, or the one whose applies_to holds
    for it among the bundled specs and the specs under each --specs DIR (and
    FLARESPEC_SPECS); a spec is tried only for an entry file of the name its entry
    document declares (file_name). No peer, no metric and no receipt are required.

    \b
    flarespec check --specs my-specs/ run1/profile_export_aiperf.json
    flarespec check --spec aiperf/profile --specs my-specs/ run*/profile_export_aiperf.json
    flarespec check --specs my-specs/ run1/profile.json --output r/run1.json --format sarif

    Entries are validated on the usable cores and reported in argument order. Exit 0 when
    every entry passes, 2 when any is rejected or no spec applies to it (the message names
    the specs tried and their conditions), and 2 with no report for a wrong command line,
    a spec id used twice, or a receipt that cannot be written.
    """
    from flarespec.compiler.open import SpecDirectoryError, spec_directories

    try:
        directories = spec_directories(spec_dirs)
    except SpecDirectoryError as problem:
        _fail(str(problem))
    outcome = _run(list(entries), spec_ref, directories, output, verbose, quiet)
    _show(outcome, fmt, root, verbose, quiet)
    sys.exit(outcome.exit_code)


def _run(entries: list[str], spec_ref, directories, output, verbose: bool, quiet: bool):
    """The check, its progress on stderr when there are several entries; every way it can
    fail without a report is one line and exit 2 (a traceback only for a bug, with -v)."""
    from flarespec.adapter.check import CheckRefused, check
    from flarespec.output.progress import progress

    def run():
        with progress(len(entries), "flarespec check", quiet=quiet or len(entries) < 2,
                      unit="entries") as step:
            return check(entries, spec_ref=spec_ref, spec_dirs=directories, output=output,
                         on_done=lambda index: step(entries[index]))
    return guarded(run, verbose, output, ((CheckRefused, "nothing was checked"),))


def _show(outcome, fmt: str, root, verbose: bool, quiet: bool) -> None:
    """The receipt as a report in ``fmt`` on stdout; the spec files that do not load, as
    notes on stderr (they were not considered for any entry)."""
    from flarespec.adapter.receipt_report import ReceiptView, receipt_report, spec_rules
    from flarespec.cli.formats import emit
    from flarespec.output.visible import visible

    if outcome.library is not None and not quiet:
        for issue in outcome.library.problems:
            echo(f"flarespec: note: {visible(str(issue))} (this spec file is not considered)",
                 err=True)
    view = ReceiptView(outcome.receipt)
    specs = [result.spec for result in outcome.results if result.spec is not None]
    emit(receipt_report(view, outcome.output, rules=spec_rules(view.spec_ids, specs)), fmt,
         root=root, verbose=verbose)
