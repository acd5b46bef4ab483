"""``flarespec report``: render a stored receipt in any format, without re-running."""

from __future__ import annotations

import sys

import click

from flarespec.cli.formats import emit, format_options


@click.command("report")
@click.argument("receipt_path", metavar="RECEIPT", type=click.Path(dir_okay=False))
@format_options()
@click.option("--verbose", "-v", is_flag=True,
              help="text and markdown: every violation, expected and actual in full.")
def report(receipt_path, fmt, root, verbose):
    """Render a receipt (pass or rejection) as text, json, github, junit, markdown or sarif.

    RECEIPT is written by `measure` or `validate-pair`; rendering it again lets a CI job
    that ran the runner commands annotate the packet files that broke without running
    them again.

    \b
    flarespec report R/a.json                          # the summary the command printed
    flarespec report R/a.json --format sarif > a.sarif # GitHub code scanning upload
    flarespec report R/a.json --format github          # annotations in an Actions log
    flarespec report R/pair.json --format junit > pair.xml

    Each violation is placed at its packet file (the packet's directory joined with the
    receipt's file), relative to --root; a violation of no single file (a pair rule) at
    the packet's packet.json. Exit 0 when the receipt says pass, 1 when it says
    rejected, 2 when RECEIPT is not a receipt this version reads (every member the report
    reads is checked for its type first, and a pass with violations or without its metric
    is refused, never shown as a pass).
    """
    from flarespec.adapter.receipt_report import ReceiptUnreadable, read_receipt, \
        receipt_report

    try:
        view = read_receipt(receipt_path)
    except ReceiptUnreadable as problem:
        click.echo(f"error: {problem}", err=True)
        sys.exit(2)
    try:
        report = receipt_report(view, receipt_path)
    except Exception as bug:  # a receipt that checks and still cannot be shown: a bug
        click.echo(f"error: internal error rendering {receipt_path}: {type(bug).__name__}: "
                   f"{bug}", err=True)
        sys.exit(2)
    emit(report, fmt, root=root, verbose=verbose)
    sys.exit(0 if view.passed else 1)
