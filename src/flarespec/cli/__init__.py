"""The command line: parse arguments, call the library, print, exit.

Commands stay thin; heavy imports happen inside the command that needs them so that
``flarespec --help`` starts fast. Exit codes: 0 pass, 2 rejected evidence or a wrong
command line (click's usage errors also exit 2, with no receipt).
"""

from __future__ import annotations

import sys

import click

EXIT_REJECTED = 2

PACKET = click.Path(dir_okay=False, path_type=str)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="flarespec", prog_name="flarespec")
def main():
    """flarespec: validate captured evidence offline against declarative YAML specs.

    \b
    Runner commands (exit 0 = pass with a metric, 2 = rejected, no metric):
      flarespec measure --packet A/packet.json --peer B/packet.json --output R/a.json
      flarespec validate-pair --baseline A/packet.json --candidate B/packet.json --output R/pair.json
    \b
    Try it:   flarespec demo
    Specs:    flarespec spec list | show | lint | diff
    Fixtures: flarespec fixture write DIR [--pair]
    """


def _run_guarded(action, quiet: bool):
    """Run a receipt-writing action; refuse bad outputs; never show a traceback."""
    from flarespec.adapter.commands import OutputRefused
    from flarespec.cli.summary import render

    try:
        outcome = action()
    except OutputRefused as refused:
        click.echo(f"flarespec: refused: {refused}; nothing was written", err=True)
        sys.exit(EXIT_REJECTED)
    except OSError as problem:
        click.echo(f"flarespec: cannot write the receipt: {problem}", err=True)
        sys.exit(EXIT_REJECTED)
    if not quiet:
        click.echo(render(outcome.receipt, outcome.output), err=True)
    sys.exit(outcome.exit_code)


@main.command()
@click.option("--packet", required=True, type=PACKET, help="The packet to measure (its packet.json).")
@click.option("--peer", required=True, type=PACKET,
              help="The packet it is compared with; may be the packet itself.")
@click.option("--output", required=True, type=click.Path(dir_okay=False, path_type=str),
              help="Receipt path; must lie outside both packet roots.")
@click.option("--spec", "spec_path", type=click.Path(exists=True, dir_okay=False),
              help="Validate against this spec file instead of choosing by the packet's revision.")
@click.option("--quiet", "-q", is_flag=True, help="No summary on stderr (the receipt is still written).")
def measure(packet, peer, output, spec_path, quiet):
    """Validate PACKET and PEER in full, then export PACKET's metric.

    Both packets must pass every rule and match on every pair identity of the spec;
    otherwise the receipt has status "rejected", lists every violation and holds no metric.
    """
    from flarespec.adapter.commands import measure as run

    _run_guarded(lambda: run(packet, peer, output, spec_path=spec_path), quiet)


@main.command("validate-pair")
@click.option("--baseline", required=True, type=PACKET, help="The baseline packet.json.")
@click.option("--candidate", required=True, type=PACKET, help="The candidate packet.json.")
@click.option("--output", required=True, type=click.Path(dir_okay=False, path_type=str),
              help="Receipt path; must lie outside both packet roots.")
@click.option("--spec", "spec_path", type=click.Path(exists=True, dir_okay=False),
              help="Validate against this spec file instead of choosing by revision.")
@click.option("--quiet", "-q", is_flag=True, help="No summary on stderr.")
def validate_pair(baseline, candidate, output, spec_path, quiet):
    """Validate BASELINE and CANDIDATE in full and check that they are comparable.

    On pass the receipt records both packets' identities and metric values under "pair"
    (there is no top-level metric); on rejection it holds no metric value at all.
    """
    from flarespec.adapter.commands import validate_pair as run

    _run_guarded(lambda: run(baseline, candidate, output, spec_path=spec_path), quiet)


@main.command()
@click.option("--dir", "directory", type=click.Path(file_okay=False),
              help="Where to write the sample pair and receipts (default: a new temporary directory).")
def demo(directory):
    """Write a synthetic sample pair, run the three runner commands on it, say what happened."""
    from flarespec.cli.demo import run_demo

    sys.exit(run_demo(directory))


from flarespec.cli.fixture_commands import fixture  # noqa: E402
from flarespec.cli.spec_commands import spec  # noqa: E402

main.add_command(spec)
main.add_command(fixture)
