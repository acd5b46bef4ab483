"""``marked_strings``: the one walk over the strings of a spec value (lint, its placeholder
check and spec diff read it)."""

from __future__ import annotations

from flarespec.compiler.yamlmarks import load_marked, marked_strings


def test_strings_come_in_document_order_with_the_nearest_mark():
    data = load_marked("a: x\nb:\n  - y\n  - {c: z, d: 1}\ne: w\n", "f.yaml")
    found = [(text, (mark.line, mark.column)) for text, mark in marked_strings(data, data.mark)]
    assert found == [("x", (1, 1)), ("y", (3, 5)), ("z", (4, 6)), ("w", (5, 1))]


def test_a_plain_value_gives_the_outer_mark_and_any_depth_is_walked():
    deep: list = ["bottom"]
    for _ in range(5000):
        deep = [deep, "side"]
    texts = [text for text, mark in marked_strings(deep) if mark is None]
    assert texts[0] == "bottom" and texts.count("side") == 5000
