"""Lint's placeholder check reads a template as the engine does (engine/paths.py
``compile_template``, filled by engine/arguments.py): only ``{binding.field...}`` reads a
field; a reference (``:``) or the binding's metadata (``@``) reads none."""

from __future__ import annotations

from flarespec.authoring.placeholders import _placeholders

ITERATIONS = {"group": {}, "phase": {}}


def test_a_binding_field_is_the_first_member_after_the_binding():
    assert _placeholders("/g/[kind={group.kind}]/{phase.name.first}", ITERATIONS) == [
        ("group", "kind"), ("phase", "name")]
    assert _placeholders("{ group.kind }: {detail}", ITERATIONS) == [("group", "kind")]


def test_references_metadata_and_other_names_read_no_field():
    text = "{group@index} {group.kind@label} {group:$.kind} {other.kind} {group.}"
    assert _placeholders(text, ITERATIONS) == []


def test_a_text_with_unbalanced_braces_is_no_template():
    assert _placeholders("a { b {group.kind}", ITERATIONS) == []
    assert _placeholders("no braces at all", ITERATIONS) == []
