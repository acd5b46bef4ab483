"""``flarespec spec diff``: review what a spec change does, and gate a pull request on it."""

from __future__ import annotations

import sys

import click

from flarespec.cli.formats import emit, format_options
from flarespec.review.impact import FAIL_ON as IMPACT_FAIL_ON
from flarespec.review.render import FAIL_ON, GATE_FAILED

USAGE_OR_SPEC_ERROR = 2


@click.command("diff")
@click.argument("refs", nargs=-1, metavar="OLD NEW | --base REV [PATH...]")
@click.option("--base", "base", metavar="REV",
              help="Compare every spec file under PATH... (default: the current directory) "
                   "with the same file at git revision REV; report added and deleted "
                   "spec files.")
@format_options(intro="Every change is a finding at its line in the new spec (a change "
                      "the gate fails on an error). ")
@click.option("--fail-on", type=click.Choice(FAIL_ON), default=None,
              help=f"Exit {GATE_FAILED} when an unacknowledged change of this class is "
                   "present (any: every class but neutral).")
@click.option("--ack", "ack_file", type=click.Path(dir_okay=False),
              help="YAML or JSON list of {fingerprint, reason}: these changes are "
                   "approved and never fail the gate.")
def diff(refs, base, fmt, root, fail_on, ack_file):
    """Show what changed between two specs, field by field, classed by what it does to the
    set of accepted inputs: tightening, loosening, review (undecidable: the reason is
    given) or neutral (wording).

    \b
    flarespec spec diff shop/v1 specs/shop/v2.yaml
    flarespec spec diff --base origin/main --format markdown specs/
    flarespec spec diff --base origin/main --fail-on loosening --ack specs/acks.yaml
    flarespec spec diff --base origin/main --fail-on loosening --format sarif > diff.sarif

    Both sides are linted first, each file as `spec lint` lints it: an error on either side is
    reported on stderr under the side it is on, and nothing is compared (exit 2); the
    report's title says "both sides lint clean" when they do. Every change is located at
    the line of the file that made it (a child's constant, shape member, rule or drop
    entry), with the parent's place it lands on as context. Every change has a
    fingerprint (shown in every format) to put in the --ack file. With --fail-on, every
    format ends by saying what the gate decided: the unacknowledged changes of its class
    (subject and fingerprint) and the acknowledgements used. Exit 0: no gate hit; 1:
    --fail-on found a change of its class; 2: a spec that does not lint, an unreadable
    --ack file, a git error or a wrong command line.
    """
    from flarespec.authoring.lint import lint_one
    from flarespec.review.render import acknowledge, diff_report, read_acks
    from flarespec.review.compare import compared
    from flarespec.compiler.errors import SpecInvalid

    if base is None and len(refs) != 2:
        raise click.UsageError("give OLD and NEW specs, or --base REV [PATH...]")
    try:
        acks = read_acks(ack_file) if ack_file else None  # before any git work
        results, linted = compared(refs, base, lint_one)
        stale = acknowledge(results, acks) if acks is not None else []
    except SpecInvalid as problem:
        click.echo(str(problem), err=True)
        sys.exit(USAGE_OR_SPEC_ERROR)
    for fingerprint in stale:
        click.echo(f"flarespec: acknowledgement {fingerprint} matches no change", err=True)
    report = diff_report(results, fail_on, ack_file, linted)
    emit(report, fmt, root=root)
    sys.exit(0 if report.ok else GATE_FAILED)


@click.command("impact")
@click.argument("old_ref", metavar="OLD")
@click.argument("new_ref", metavar="NEW")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--entry", "entry_name", metavar="NAME",
              help="In a directory INPUT, every file with this name is an input's entry "
                   "file (e.g. packet.json).")
@format_options(intro="Each flipped input is a finding at its entry file. ")
@click.option("--fail-on", type=click.Choice(IMPACT_FAIL_ON), default=None,
              help=f"Exit {GATE_FAILED} when an input's verdict flips (flip), when the "
                   "diff's classes and the data disagree (finding), or either (any).")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
def impact(old_ref, new_ref, inputs, entry_name, fmt, root, fail_on, quiet):
    """Run OLD and NEW over stored inputs and show whose verdict flips, and why.

    \b
    flarespec spec impact shop/v1 next.yaml captured/ --entry packet.json
    flarespec spec impact shop/v1 next.yaml captured/ --entry packet.json --fail-on flip

    Per input: verdict and metric old -> new and the rules responsible for a flip; per rule:
    how many inputs it newly rejects, newly accepts, or rejects for other reasons. Findings
    check the diff's classes against the data: a neutral change that flips a verdict, a
    change whose direction a flip contradicts, a tightening that rejects nothing it
    accepted before. Inputs run in parallel on every core; progress goes to stderr. Exit 0
    (a report), 1 when --fail-on found what it names, 2 on a spec that does not lint or a
    wrong command line.
    """
    from flarespec.output.progress import progress
    from flarespec.review.impact import entries, impact as run, impact_report
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import is_path

    try:
        found = entries(list(inputs), entry_name)
    except ValueError as problem:
        raise click.UsageError(str(problem)) from None
    try:
        with progress(len(found), f"spec impact {old_ref} -> {new_ref}", quiet=quiet,
                      unit="inputs") as step:
            result = run(old_ref, new_ref, found, on_input=lambda done: step(done.input))
    except SpecInvalid as problem:
        click.echo(str(problem), err=True)
        sys.exit(USAGE_OR_SPEC_ERROR)
    report = impact_report(result, fail_on, anchor=new_ref if is_path(new_ref) else None)
    emit(report, fmt, root=root)
    sys.exit(0 if report.ok else GATE_FAILED)
