"""Issue 14 item 2: a name used in two places and changed in one is a lint error.

The worked child (tests/flare/data/d00dfeed.yaml) renames the reused-token counter in both
``idle_metrics`` (which the snapshot rules require) and ``counters`` (which the hooks read).
Renaming it in only one of them leaves a hook reading a name nothing requires."""

from __future__ import annotations

from pathlib import Path

import pytest

from flarespec.authoring.lint import lint_one

CHILD = Path(__file__).parents[1] / "flare" / "data" / "d00dfeed.yaml"
RENAMED, OLD = "flare_prefix_tokens_reused_total", "flare_prompt_tokens_reused_total"
HOOK_RULES = {"snapshot.delta.reused-tokens", "snapshot.counters.monotonic",
              "snapshot.counters.continuity"}


def lint_variant(tmp_path, old_line: str, new_line: str):
    text = CHILD.read_text()
    assert old_line in text
    path = tmp_path / "child.yaml"
    path.write_text(text.replace(old_line, new_line, 1))
    return [issue for issue in lint_one(str(path)).issues if issue.severity == "error"]


def test_the_child_renaming_both_places_is_clean():
    assert lint_one(str(CHILD)).errors == []


@pytest.mark.parametrize("old_line, new_line, read", [
    # counters renamed, idle_metrics kept: the hooks read a counter no rule requires
    (f"    - {{name: {RENAMED}, type: counter, idle: null}}",
     f"    - {{name: {OLD}, type: counter, idle: null}}", RENAMED),
    # idle_metrics renamed, counters kept
    (f"    reused_tokens: {RENAMED}", f"    reused_tokens: {OLD}", OLD),
])
def test_a_name_changed_in_one_place_only_is_an_error(tmp_path, old_line, new_line, read):
    errors = lint_variant(tmp_path, old_line, new_line)
    assert {issue.code for issue in errors} == {"spec.name-not-required"}
    assert {issue.message.split("'")[1] for issue in errors} == HOOK_RULES
    assert all(f"'{read}' is read from snapshot:$.unlabelled, but no rule or shape of the "
               f"spec requires it there" in issue.message for issue in errors)
    # pointed at the child's constants (what changed), not into the installed parent
    assert {issue.mark.file for issue in errors} == {str(tmp_path / "child.yaml")}
