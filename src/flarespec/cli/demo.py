"""``flarespec demo``: the whole job on a fresh synthetic pair, end to end."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click


def run_demo(directory: str | None) -> int:
    from flarespec.adapter.commands import measure, validate_pair
    from flarespec.adapter.receipt_report import ReceiptView, metric_sentence
    from flarespec.cli.fixture_commands import open_for_writing
    from flarespec.fixtures.writers import write_pair

    spec = open_for_writing(None)  # linted first: one that does not lint, exit 2, nothing written
    base = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="flarespec-demo-"))
    packets, receipts = base / "packets", base / "receipts"
    baseline, candidate = write_pair(packets, spec)
    click.echo(f"Wrote a synthetic pair (synthetic: true, non-model package):\n"
               f"  baseline  {baseline}\n  candidate {candidate}")
    steps = [
        ("baseline measure", lambda: measure(baseline, candidate, receipts / "baseline.json")),
        ("candidate measure", lambda: measure(candidate, baseline, receipts / "candidate.json")),
        ("validate-pair", lambda: validate_pair(baseline, candidate, receipts / "pair.json")),
    ]
    worst = 0
    for title, step in steps:
        outcome = step()
        view = ReceiptView(outcome.receipt)
        worst = max(worst, outcome.exit_code)
        if view.passed and view.command == "measure":
            said = metric_sentence(view, "packet")
        elif view.passed:
            said = "comparable pair: " + ", ".join(
                f"{role} {(view.metric(role) or {}).get('value')}" for role in view.roles)
        else:
            said = f"{len(view.violations)} violations"
        status = "pass" if view.passed else "rejected"
        click.echo(f"{title:<18} exit {outcome.exit_code}  {status:<8} {said}\n"
                   f"{'':<18} receipt {outcome.output}")
    metric_key = spec.metric.key if spec.metric else "the metric"
    click.echo(f"\nThe runner reads {metric_key} from the two measure receipts.\n"
               "Limits: an offline contract check on synthetic evidence; it proves adapter\n"
               "behaviour only, not service quality, performance or model quality.")
    return worst
