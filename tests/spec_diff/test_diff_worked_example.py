"""The worked example of issues 7 and 8, in markdown: a child of the bundled Flare spec that
renames a counter, changes the prefix from 4096 to 8192 tokens, drops request.json (a
document) and renames a rule (data/flare-next.yaml)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from flarespec.cli import main

CHILD = Path(__file__).parent / "data" / "flare-next.yaml"


def markdown_tables() -> dict[str, list[str]]:
    """class -> the rows of its table in ``spec diff --format markdown``."""
    result = CliRunner().invoke(main, ["spec", "diff", "flare/bce032c0", str(CHILD),
                                       "--format", "markdown"], catch_exceptions=False)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "### spec diff `flare/bce032c0` → `flare/next-example`"
    assert lines[2] == "**1 tightening, 10 loosening, 12 review, 6 neutral**"
    tables: dict[str, list[str]] = {}
    current = None
    for line in lines:
        if line.startswith("#### "):
            current = tables.setdefault(line[5:].split()[0], [])
        elif current is not None and line.startswith("| `"):
            current.append(line)
    return tables


def row(tables, cls: str, change: str) -> str:
    found = [line for line in tables[cls] if line.startswith(f"| `{change}` |")]
    assert len(found) == 1, (cls, change, tables)
    return found[0]


def test_the_counter_rename_is_shown_field_by_field_and_reviewed():
    tables = markdown_tables()
    # idle_metrics is matched by name: the renamed entry is named by its old name
    idle = row(tables, "review",
               "constant idle_metrics[name=flare_prompt_tokens_reused_total].name")
    assert '`"flare_prompt_tokens_reused_total"` | `"flare_prefix_tokens_reused_total"`' in idle
    assert "rule snapshot.idle" in idle  # the rules iterating over idle_metrics are listed
    counter = row(tables, "review", "constant counters.reused_tokens")
    assert "rule snapshot.delta.reused-tokens" in counter
    assert "a hook argument changed" in row(tables, "review",
                                             "rule snapshot.delta.reused-tokens args.counter")


def test_the_prefix_change_is_reviewed_in_every_rule_that_reads_it():
    tables = markdown_tables()
    assert "| `4096` | `8192` |" in row(tables, "review", "constant prefix.tokens")
    assert "| `4096` | `8192` |" in row(tables, "review",
                                        "constant group_matrix[kind=prefix-hit].reused_tokens")
    assert "| `4096` | `8192` |" in row(tables, "review",
                                        "rule corpus.request.prefix-seed assert.includes.tokens")


def test_the_dropped_document_loosens_and_its_manifest_entries_move_both_ways():
    tables = markdown_tables()
    assert "| removed |" in row(tables, "loosening", "document request_body")
    for dropped in ("request.sha256.corpus", "request.sha256.observation", "request.max-tokens",
                    "request.stream"):
        assert "| removed |" in row(tables, "loosening", f"rule {dropped}")
    assert "allowed entries narrowed" in row(
        tables, "tightening", "rule packet.files.extra-entry assert.manifest_lists_only")
    assert "required entries narrowed" in row(
        tables, "loosening", "rule packet.files.missing-entry assert.manifest_lists_all")


def test_the_renamed_rule_is_a_rename_not_a_removal_and_an_addition():
    tables = markdown_tables()
    assert "renamed from observation.error" in row(tables, "neutral",
                                                   "rule observation.no-client-error id")
    every_row = "\n".join(line for rows in tables.values() for line in rows)
    assert "`rule observation.error`" not in every_row
    assert "`rule observation.no-client-error`" not in every_row
