"""Child specs of the bundled Flare spec that rename a counter (issue 25).

The parent's ``idle_metrics`` name the four counters by ``${counters.*}`` (82d0fbc): a child
renaming a counter in ``counters`` alone is correct (idle_metrics follow). The edit that
disagrees restates ``idle_metrics`` with a literal name where the parent reads the counter,
and sets ``counters`` to another: the name the rules read is then one no rule or shape
requires. The parent's text is read, never copied here."""

from __future__ import annotations

from pathlib import Path

from flarespec.compiler.open import bundled_library

PARENT = "flare/bce032c0"


def parent_path() -> Path:
    return Path(bundled_library().get(PARENT).path)


def idle_metrics(**literal: str) -> str:
    """The parent's ``idle_metrics`` entry of ``constants`` restated (two-space indented),
    each ``${counters.KEY}`` named in ``literal`` written as that literal name instead."""
    lines = parent_path().read_text().splitlines()
    start = lines.index("  idle_metrics:")
    block = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("    - "):
            break
        for key, name in literal.items():
            line = line.replace(f'"${{counters.{key}}}"', name)
        block.append(line)
    text = "\n".join(block) + "\n"
    assert all(f"counters.{key}" not in text for key in literal), text
    return text


def counters(**renamed: str) -> str:
    """The ``counters`` entry of ``constants`` restated (two-space indented): the parent's
    names, those in ``renamed`` replaced."""
    names = dict(bundled_library().get(PARENT).data["constants"]["counters"], **renamed)
    return "  counters:\n" + "".join(f"    {key}: {name}\n" for key, name in names.items())


def disagreeing(read: str, required: str, key: str = "reused_tokens") -> str:
    """``constants`` entries where ``counters.KEY`` is ``read`` while the restated
    ``idle_metrics`` require ``required`` in its place."""
    return idle_metrics(**{key: required}) + counters(**{key: read})
