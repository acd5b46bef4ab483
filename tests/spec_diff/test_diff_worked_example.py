"""The worked example of issues 7 and 8, in markdown: a child of the bundled Flare spec that
renames a counter, changes the prefix from 4096 to 8192 tokens, drops request.json (a
document) and renames a rule (data/flare-next.yaml).

Since issue 16 the markdown is the report's: one table for the compared pair whose rows are
``| class | rule | where | message |``, the message ``label: what: old → new`` (long
values folded onto lines of their own) followed by ``(reason; read by …)  [fingerprint]``;
there are no per-class tables, so the rows are grouped here by their first column."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from flarespec.cli import main

CHILD = Path(__file__).parent / "data" / "flare-next.yaml"
CELL = re.compile(r"(?<!\\)\|")  # a cell boundary: a pipe markdown did not escape


def diff(fmt: str) -> str:
    result = CliRunner().invoke(main, ["spec", "diff", "flare/bce032c0", str(CHILD),
                                       "--format", fmt], catch_exceptions=False)
    assert result.exit_code == 0
    return result.stdout


def markdown_tables() -> dict[str, list[str]]:
    """class -> the message cells of its rows in ``spec diff --format markdown``."""
    lines = diff("markdown").splitlines()
    # the title says the sides lint (the bundled parent's warnings, if any, are counted)
    assert lines[0].startswith("### spec diff: 1 spec compared, 1 changed; both sides lint")
    assert lines[2] == ("#### spec diff flare/bce032c0 -> flare/next-example: "
                        "1 tightening, 10 loosening, 12 review, 6 neutral")
    tables: dict[str, list[str]] = {}
    for line in lines:
        if line.startswith("| ") and not line.startswith("| class |"):
            cls, where, message = [cell.strip() for cell in CELL.split(line)[1:-1]]
            assert where.startswith("`"), line  # the file:line of the change
            tables.setdefault(cls, []).append(message)
    assert {cls: len(rows) for cls, rows in tables.items()} == {
        "tightening": 1, "loosening": 10, "review": 12, "neutral": 6}
    return tables


def row(tables, cls: str, change: str) -> str:
    """The message of the one change labelled ``change`` in class ``cls``."""
    found = [message for message in tables[cls] if message.startswith(f"{change}: ")]
    assert len(found) == 1, (cls, change, tables)
    return found[0]


def json_changes() -> dict[str, dict]:
    """label -> its change, from ``--format json`` (the finding located at the label has
    the change's fingerprint)."""
    document = json.loads(diff("json"))
    (spec,) = document["specs"]
    by_fingerprint = {c["fingerprint"]: c for c in spec["changes"]}
    return {f["location"]: by_fingerprint[f["fingerprint"]] for f in document["findings"]}


def test_the_counter_rename_is_shown_field_by_field_and_reviewed():
    tables = markdown_tables()
    # idle_metrics is matched by name: the renamed entry is named by its old name
    idle = row(tables, "review",
               "constant idle_metrics[name=flare_prompt_tokens_reused_total].name")
    assert ': "flare_prompt_tokens_reused_total" → "flare_prefix_tokens_reused_total"<br>' \
        in idle
    assert "rule snapshot.idle" in idle  # the rules iterating over idle_metrics are listed
    counter = row(tables, "review", "constant counters.reused_tokens")
    assert "rule snapshot.delta.reused-tokens" in counter
    assert "a hook argument changed" in row(tables, "review",
                                             "rule snapshot.delta.reused-tokens args.counter")


def test_the_prefix_change_is_reviewed_in_every_rule_that_reads_it():
    tables = markdown_tables()
    changes = json_changes()
    for change in ("constant prefix.tokens",
                   "constant group_matrix[kind=prefix-hit].reused_tokens",
                   "rule corpus.request.prefix-seed assert.includes.tokens"):
        assert ": 4096 → 8192<br>" in row(tables, "review", change)  # the values shown
        found = changes[change]  # and as data
        assert (found["class"], found["old"], found["new"]) == ("review", 4096, 8192)


def test_the_dropped_document_loosens_and_its_manifest_entries_move_both_ways():
    tables = markdown_tables()
    assert row(tables, "loosening", "document request_body").startswith(
        "document request_body: removed<br>")
    for dropped in ("request.sha256.corpus", "request.sha256.observation", "request.max-tokens",
                    "request.stream"):
        assert row(tables, "loosening", f"rule {dropped}").startswith(
            f"rule {dropped}: removed<br>")
    assert "allowed entries narrowed" in row(
        tables, "tightening", "rule packet.files.extra-entry assert.manifest_lists_only")
    assert "required entries narrowed" in row(
        tables, "loosening", "rule packet.files.missing-entry assert.manifest_lists_all")


def test_the_renamed_rule_is_a_rename_not_a_removal_and_an_addition():
    tables = markdown_tables()
    assert "renamed from observation.error" in row(tables, "neutral",
                                                   "rule observation.no-client-error id")
    # no change of the whole rule (a removal of the old id, an addition of the new one)
    every_row = [message for rows in tables.values() for message in rows]
    assert not [m for m in every_row if m.startswith("rule observation.error: ")]
    assert not [m for m in every_row if m.startswith("rule observation.no-client-error: ")]
