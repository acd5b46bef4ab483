"""The command line: parse arguments, call the library, print, exit.

Commands stay thin; heavy imports happen inside the command that needs them, and the
``spec`` and ``fixture`` groups are imported only when used (cli/lazy.py), so that
``flarespec --help`` and ``flarespec measure`` start fast. Exit codes: 0 pass, 2 rejected evidence (with a receipt)
or no receipt at all: a wrong command line (click's usage errors), a refused output, a
receipt that cannot be written, an internal error, an output stream that cannot be
written (``> /dev/full``: said in one line on the other stream; a receipt already written
stays as it is). Never a traceback (``--verbose`` shows one for an internal error).
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click

from flarespec.cli.lazy import LazyGroup

EXIT_REJECTED = 2

# A packet path is not checked here (readable=False: click would refuse an unreadable file
# as a usage error): a missing, unreadable or non-regular packet.json (even a directory) is
# evidence, reported in a rejection receipt. Only a path spelled as a directory
# (`A/packet.json/`, which names no file) is a usage error (packet_path).
PACKET = click.Path(path_type=str, readable=False)


def packet_path(_ctx, _param, value: str) -> str:
    """A ``--packet``/``--peer``/``--baseline``/``--candidate`` value, refused only when its
    spelling names a directory (adapter.commands.entry_path says why)."""
    from flarespec.adapter.commands import entry_path

    try:
        entry_path(value)
    except ValueError as problem:
        raise click.BadParameter(str(problem)) from None
    return value


# name -> ("module:attribute", summary listed by `flarespec --help` without importing it)
LAZY_COMMANDS = {
    "spec": ("flarespec.cli.spec_commands:spec",
             "Work with specs: the contract as versioned YAML."),
    "fixture": ("flarespec.cli.fixture_commands:fixture",
                "Synthetic evidence: complete, valid, deterministic packets (always labelled "
                "synthetic)."),
    "report": ("flarespec.cli.report_command:report",
               "Render a receipt (pass or rejection) as text, json, github, junit, markdown "
               "or sarif."),
    "path": ("flarespec.cli.path_command:path",
             "Print what a JSONPath selects from a file, as a spec's rule would see it."),
    "check": ("flarespec.cli.check_command:check",
              "Validate entry files of any benchmark tool, each in full against its spec."),
}


class GuardedGroup(LazyGroup):
    """The command line's group: a failed write to stdout or stderr, by a command or when
    the streams are flushed at the end, is said in one line on the stream that still
    works, exit 2 (never a traceback, nor a flush error at the interpreter's exit)."""

    def main(self, *args, **kwargs):
        from flarespec.cli.formats import StreamUnwritable

        try:
            try:
                return super().main(*args, **kwargs)
            finally:  # inside the guard: what is still buffered is written here, not at exit
                _flush_streams()
        except StreamUnwritable as failed:
            _streams_failed(str(failed), failed.stream)
        except OSError as problem:  # a write that did not go through formats.echo, or a bug
            _streams_failed(f"I/O error: {type(problem).__name__}: {problem}", None)


def _flush_streams() -> None:
    from flarespec.cli.formats import StreamUnwritable

    for name in ("stdout", "stderr"):
        try:
            getattr(sys, name).flush()
        except OSError as problem:
            raise StreamUnwritable(name, problem) from None
        except (AttributeError, ValueError):  # no such stream, or a closed one
            pass


def _streams_failed(message: str, failed: str | None) -> NoReturn:
    """``flarespec: MESSAGE`` on stderr, else stdout (not the stream that ``failed``); a
    stream that cannot be flushed is pointed at the null device, so that the interpreter's
    own flush at exit cannot fail again. Exit 2."""
    for name in ("stderr", "stdout"):
        try:
            if name != failed:
                getattr(sys, name).write(f"flarespec: {message}\n")
                getattr(sys, name).flush()
                break
        except (AttributeError, OSError, ValueError):
            continue
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        try:
            stream.flush()
            works = name != failed
        except (AttributeError, OSError, ValueError):
            works = False
        if not works:
            _to_null_device(stream)
    sys.exit(EXIT_REJECTED)


def _to_null_device(stream) -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(null, stream.fileno())
    except (AttributeError, OSError, ValueError):  # not a file descriptor (a test's stream)
        pass
    finally:
        os.close(null)


@click.group(cls=GuardedGroup, lazy=LAZY_COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="flarespec", prog_name="flarespec")
def main():
    """flarespec: validate captured evidence offline against declarative YAML specs.

    \b
    Runner commands (exit 0 = pass with a metric, 2 = rejected, no metric):
      flarespec measure --packet A/packet.json --peer B/packet.json --output R/a.json
      flarespec validate-pair --baseline A/packet.json --candidate B/packet.json --output R/pair.json
    \b
    Check:    flarespec check --specs my-specs/ run1/profile_export_aiperf.json
    Try it:   flarespec demo
    Specs:    flarespec spec list | show | kinds | new | lint | test | diff | impact | schema
    Fixtures: flarespec fixture write DIR [--pair]
    Paths:    flarespec path '$.groups[*].id' FILE.json
    Reports:  flarespec report R/a.json --format sarif > a.sarif
    """


def spec_reference(_ctx, _param, value: str | None) -> str | None:
    """A ``--spec`` value, checked before any work (by :func:`_before_any_spec`, once the
    packet roots are known, as opening a bundled id may read the compiled-spec cache): an
    existing path or a bundled id; anything else is a usage error listing the bundled ids
    (a broken file is reported later, in the receipt, as spec.invalid)."""
    if value is None:
        return None
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import check_spec_ref

    try:
        check_spec_ref(value)
    except SpecInvalid as problem:
        raise click.BadParameter(str(problem), param_hint="--spec") from None
    return value


_RECEIPT_OPTIONS = (
    click.option("--output", required=True, type=click.Path(path_type=str, readable=False),
                 help="Receipt path: outside both packet roots, not a symlink, and a "
                      "regular file if it exists (it is replaced)."),
    click.option("--spec", "spec_path", metavar="ID|FILE",
                 help="Validate against this spec (a bundled id such as one `flarespec "
                      "spec list` shows, or a spec file) instead of choosing by the "
                      "packet's applies_to."),
    click.option("--quiet", "-q", is_flag=True,
                 help="No summary on stderr (the receipt is still written)."),
    click.option("--verbose", "-v", is_flag=True,
                 help="Every violation on stderr, with file:line or location, expected "
                      "and actual (the receipt is the same)."),
)
_FORMAT_HELP = ("Print the run as a report on stdout in this format instead of the "
                "summary on stderr (the receipt is the same; `flarespec report` renders "
                "it later). ")


def receipt_options(command):
    """The options every receipt-writing command shares, declared once."""
    from flarespec.cli.formats import format_options

    for option in reversed(_RECEIPT_OPTIONS):
        command = option(command)
    return format_options(default=None, intro=_FORMAT_HELP)(command)


def _before_any_spec(spec_path: str | None, quiet: bool, *entries: str) -> None:
    """Refuse the compiled-spec cache if a packet root holds it (a note on stderr), then
    check ``--spec``: no spec is opened, and no cache entry read, before that."""
    from flarespec.adapter.commands import guard_cache
    from flarespec.cli.formats import echo

    note = guard_cache(*entries)
    if note and not quiet:
        echo(f"flarespec: note: {note}", err=True)
    spec_reference(None, None, spec_path)


def _earlier_file(output) -> str:
    """Said after "no receipt was written" when a file is at the output all the same."""
    if output is not None and os.path.lexists(output):
        return f" (the file at {output} is an earlier run's, not this run's receipt)"
    return ""


def guarded(action, verbose: bool, output=None, refusals: tuple = ()):
    """``action()`` for a command that may write a receipt: a refused output, a receipt
    that cannot be written, one of ``refusals`` (``(exception class, what was not done)``)
    and a bug are each one line on stderr and exit 2, never a traceback (one for a bug with
    ``verbose``). The one place these outcomes are worded, for every such command."""
    from flarespec.adapter.commands import OutputRefused, ReceiptUnwritable

    try:
        return action()
    except OutputRefused as refused:
        _fail(f"refused: {refused}; nothing was written")
    except ReceiptUnwritable as problem:
        _fail(f"{problem}; no receipt was written")
    except Exception as bug:
        for kind, undone in refusals:
            if isinstance(bug, kind):
                _fail(f"{bug}; {undone}")
        if verbose:  # a bug: say so, exit 2 (never a metric or a pass)
            import traceback
            traceback.print_exc()
        _fail(f"internal error: {type(bug).__name__}: {bug}; no receipt was written"
              f"{_earlier_file(output)}")


def _run_guarded(action, quiet: bool, verbose: bool, fmt: str | None = None, root=None,
                 output=None):
    """Run a receipt-writing action; refuse bad outputs; never show a traceback. The
    summary goes to stderr, or with ``fmt`` the report to stdout."""
    from flarespec.adapter.commands import OutputRefused, ReceiptUnwritable

    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose exclude each other")
    outcome = guarded(action, verbose, output)
    if fmt is not None:
        from flarespec.adapter.receipt_report import ReceiptView, receipt_report
        from flarespec.cli.formats import emit

        emit(receipt_report(ReceiptView(outcome.receipt), outcome.output), fmt, root=root,
             verbose=verbose)
    elif not quiet:  # the report model is imported only to be shown
        from flarespec.adapter.receipt_report import summary
        from flarespec.cli.formats import echo

        echo(summary(outcome.receipt, outcome.output, verbose=verbose), err=True)
    sys.exit(outcome.exit_code)


def _fail(message: str) -> NoReturn:
    from flarespec.cli.formats import echo
    from flarespec.output.visible import visible

    echo(f"flarespec: {visible(message)}", err=True)  # an error may quote packet text
    sys.exit(EXIT_REJECTED)


# what the runner commands read from the environment (shown under their --help)
RUNNER_ENVIRONMENT = """\b
Environment:
  FLARESPEC_JOBS=1   validate both packets in this process, one after the other
                     (default: the second in a forked worker when two cores are
                     usable; the receipt is the same)
  FLARESPEC_CACHE=0  neither read nor write the compiled-spec cache
                     (FLARESPEC_CACHE_DIR moves it; default ~/.cache/flarespec)"""


@main.command(epilog=RUNNER_ENVIRONMENT)
@click.option("--packet", required=True, type=PACKET, callback=packet_path,
              help="The packet to measure (its packet.json).")
@click.option("--peer", required=True, type=PACKET, callback=packet_path,
              help="The packet it is compared with; may be the packet itself.")
@receipt_options
def measure(packet, peer, output, spec_path, quiet, verbose, fmt, root):
    """Validate PACKET and PEER in full, then export PACKET's metric.

    Both packets must pass every rule and match on every pair identity of the spec;
    otherwise the receipt has status "rejected", lists every violation and holds no metric.
    """
    from flarespec.adapter.commands import measure as run

    _before_any_spec(spec_path, quiet, packet, peer)
    _run_guarded(lambda: run(packet, peer, output, spec_path=spec_path), quiet, verbose, fmt,
                 root, output)


@main.command("validate-pair", epilog=RUNNER_ENVIRONMENT)
@click.option("--baseline", required=True, type=PACKET, callback=packet_path,
              help="The baseline packet.json.")
@click.option("--candidate", required=True, type=PACKET, callback=packet_path,
              help="The candidate packet.json.")
@receipt_options
def validate_pair(baseline, candidate, output, spec_path, quiet, verbose, fmt, root):
    """Validate BASELINE and CANDIDATE in full and check that they are comparable.

    On pass the receipt records both packets' identities and metric values under "pair"
    (there is no top-level metric); on rejection it holds no metric value at all.
    """
    from flarespec.adapter.commands import validate_pair as run

    _before_any_spec(spec_path, quiet, baseline, candidate)
    _run_guarded(lambda: run(baseline, candidate, output, spec_path=spec_path), quiet,
                 verbose, fmt, root, output)


@main.command()
@click.option("--dir", "directory", type=click.Path(file_okay=False),
              help="Where to write the sample pair and receipts (default: a new temporary directory).")
def demo(directory):
    """Write a synthetic sample pair, run the three runner commands on it, say what happened."""
    from flarespec.cli.demo import run_demo

    sys.exit(run_demo(directory))
