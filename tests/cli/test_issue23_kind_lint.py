"""Issue 23 items 4 and 14 at the command line: `spec lint` (and every command that loads a
spec) refuses a kind argument that is mistyped or can never hold, and an order_equals
format that is no template of the spec's grammar, at its file:line:column, exit 2, fast
(``{n:>999999999}`` took 76 s and 6.7 GB once a packet was checked)."""

from __future__ import annotations

import time

from click.testing import CliRunner

from flarespec.cli import main

SPEC = """\
flarespec: 1
id: toy/lint
title: Toy lint
documents:
  doc: {loader: json, entry: true, shape: doc}
rules:
  - id: toy.format
    description: A format Python would have run.
    given: "doc:$.v[*]"
    assert: {order_equals: {format: "s{n:>999999999}", product: {n: [1]}}}
  - id: toy.position
    description: A positional placeholder.
    given: "doc:$.v[*]"
    assert: {order_equals: {format: "s{0}", product: {n: [1]}}}
  - id: toy.range
    description: A bound that is text.
    given: "doc:$.n"
    assert: {range: {min: "x"}}
  - id: toy.never
    description: Bounds that leave nothing.
    given: "doc:$.n"
    assert: {range: {min: 3, max: 1}}
  - id: toy.count
    description: A negative count.
    given: "doc:$.v[*]"
    assert: {count: {equals: -1}}
  - id: toy.one-of
    description: Nothing allowed.
    given: "doc:$.n"
    assert: {one_of: []}
  - id: toy.keys
    description: Keys that are no names.
    given: "doc:$"
    assert: {keys: [1, 2]}
shapes:
  doc: {type: object, members: {v: {type: array, items: string}, n: number}}
"""  # the shape after the rules: each rule's line is where the expected errors place it


def test_spec_lint_refuses_each_argument_at_its_line_fast(tmp_path):
    path = tmp_path / "lint.yaml"
    path.write_text(SPEC)
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["spec", "lint", str(path)])
    assert time.perf_counter() - started < 30
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    expected = [
        '10:14: order_equals: format "s{n:>999999999}": placeholder {n:>999999999} names no '
        'axis of product (n)',
        '14:14: order_equals: format "s{0}": ',
        '18:14: range: min wants a number (not NaN), got string "x"',
        "22:14: range: min 3 and max 1 leave nothing that can hold",
        "26:14: count: equals wants a whole number >= 0, got integer -1",
        "30:14: one_of: wants a non-empty list, got array []",
        "34:14: keys: item 0 wants a string (a member name), got integer 1",
    ]
    lines = [line for line in result.output.splitlines()
             if line.startswith(str(path)) and ": warning: " not in line]
    assert len(lines) == len(expected), result.output
    for line, start in zip(lines, expected):
        assert line.startswith(f"{path}:{start}"), (line, start)
        assert line.endswith(" [spec.kind-argument]"), line


def test_measure_with_a_spec_that_does_not_load_runs_nothing(tmp_path):
    """measure loads the spec first: the same refusal, exit 2, no receipt of a verdict."""
    path = tmp_path / "lint.yaml"
    path.write_text(SPEC)
    (tmp_path / "p").mkdir()
    packet = tmp_path / "p" / "packet.json"
    packet.write_text('{"v": ["s1"], "n": 1}')
    result = CliRunner().invoke(main, ["measure", "--packet", str(packet), "--peer",
                                       str(packet), "--output", str(tmp_path / "out.json"),
                                       "--spec", str(path)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "[spec.kind-argument]" in result.output + (result.stderr or "")
