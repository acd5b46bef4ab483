"""Issue 14 item 2: a name used in two places and changed in one is a lint error.

The worked child (tests/flare/data/d00dfeed.yaml) renames the reused-token counter in both
``idle_metrics`` (which the snapshot rules require) and ``counters`` (which the hooks read).
Renaming it in only one of them leaves a hook reading a name nothing requires."""

from __future__ import annotations

import re
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
    """One error per name, naming every rule reading it, at the two lines that disagree:
    the constant entry spelling the name read, and (related) the one spelling the name
    required, both in the child (what changed), not in the installed parent."""
    errors = lint_variant(tmp_path, old_line, new_line)
    [error] = errors
    assert error.code == "spec.name-not-required"
    assert error.message.startswith(f"'{read}' is read from snapshot:$.unlabelled by rules ")
    assert set(re.findall(r"'(snapshot\.[a-z.-]+)' \(counters?\)", error.message)) == HOOK_RULES
    assert "but no rule or shape of the spec requires it there" in error.message
    lines = (tmp_path / "child.yaml").read_text().splitlines()
    [(counter_line, counter)] = [(n, text) for n, text in enumerate(lines, 1)
                                 if text.startswith("    reused_tokens: ")]
    [(metric_line, metric)] = [(n, text) for n, text in enumerate(lines, 1)
                               if "type: counter" in text and "reused_total" in text]
    assert (error.mark.file, error.mark.line) == (str(tmp_path / "child.yaml"), counter_line)
    assert read in counter
    [related] = error.related
    assert (related.file, related.line) == (str(tmp_path / "child.yaml"), metric_line)
    assert f"did you mean {metric.split('name: ')[1].split(',')[0]!r} (at {related})?" \
        in error.message
