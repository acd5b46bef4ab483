"""``flarespec spec impact``: both specs replayed over written inputs; exactly the expected
inputs flip, for the expected rules, and the diff's classes are checked against the data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from flarespec.review.impact import entries, impact

TOY = Path(__file__).resolve().parents[1] / "engine" / "toy"
CHILD = """\
flarespec: 1
id: toy/child
extends: toy/base
title: Toy inventory, a child with a fourth colour and two new rules
constants:
  colours: [red, green, blue, yellow]
rules:
  - id: toy.item.sku
    description: A sku is one lower-case letter.
    for_each: item
    given: "item:$.sku"
    assert: {regex: "^[a-z]$"}
  - id: toy.item.positive
    description: Counts are positive.
    for_each: item
    given: "item:$.count"
    assert: {range: {min: 1}}
"""


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.fixture
def corpus(tmp_path) -> tuple[Path, Path, Path]:
    """base.yaml and its child, and four inventories: unchanged, a yellow item (rejected by
    the old colours only), an upper-case sku (rejected by the new sku rule only), and a
    count that both reject."""
    shutil.copy(TOY / "base.yaml", tmp_path / "base.yaml")
    (tmp_path / "child.yaml").write_text(CHILD)
    inputs = tmp_path / "inputs"
    for name in ("same", "yellow", "upper", "broken"):
        shutil.copytree(TOY / "inventory", inputs / name)
    edit_json(inputs / "yellow/shelves/s1.json", lambda d: d["items"][0].update(colour="yellow"))

    def upper_sku(data):
        data["items"][0]["sku"] = "A"
    edit_json(inputs / "upper/shelves/s0.json", upper_sku)
    edit_json(inputs / "upper/stock.json", lambda d: d.update(counts={"A": 1, "b": 2, "c": 3}))
    edit_json(inputs / "broken/stock.json", lambda d: d["counts"].update(c=4))
    return tmp_path / "base.yaml", tmp_path / "child.yaml", inputs


def test_exactly_the_expected_inputs_flip_for_the_expected_rules(corpus):
    old, new, inputs = corpus
    result = impact(str(old), str(new), entries([str(inputs)], "index.json"), workers=2)
    flips = {Path(r.input).parent.name: (r.flip, r.responsible) for r in result.inputs}
    assert flips == {"same": (None, []), "broken": (None, []),
                     "yellow": ("fail→pass", ["toy.item.colour"]),
                     "upper": ("pass→fail", ["toy.item.sku"])}
    assert result.per_rule() == {
        "toy.item.colour": {"pass→fail": 0, "fail→pass": 1, "reasons changed": 0},
        "toy.item.sku": {"pass→fail": 1, "fail→pass": 0, "reasons changed": 0}}
    # the new counts rule rejects nothing the old spec accepted: the corpus does not cover it
    assert result.findings == [
        "tightening rule toy.item.positive (added) rejects no input given that was accepted "
        "before"]


def test_the_command_reports_per_input_and_per_rule_in_every_format(corpus):
    """Since issue 16: a flipped input is a finding of the ``inputs`` section, written
    ``TAG  message`` in text (the tag is the flip); the per-rule table is the ``rules``
    section's; the diff/data disagreements are the report's ``impact.finding`` findings
    (json: in ``findings``, which replaced impact's own list of strings of that name)."""
    old, new, inputs = corpus
    runner = CliRunner()
    args = ["spec", "impact", str(old), str(new), str(inputs), "--entry", "index.json"]
    text = runner.invoke(main, args, catch_exceptions=False)
    assert text.exit_code == 0
    assert text.stdout.splitlines()[0] == \
        "spec impact toy/base -> toy/child: 4 inputs, 2 verdicts flipped, 1 findings"
    assert f"      pass→fail  {inputs / 'upper' / 'index.json'}: pass → fail, metric - → - " \
        "(pass→fail by toy.item.sku)" in text.stdout.splitlines()
    markdown = runner.invoke(main, args + ["--format", "markdown"]).stdout
    assert "#### rules\n\n| rule | pass→fail | fail→pass | reasons changed |" in markdown
    assert "| toy.item.colour | 0 | 1 | 0 |" in markdown.splitlines()
    document = json.loads(runner.invoke(main, args + ["--format", "json"]).stdout)
    assert {i["flip"] for i in document["inputs"]} == {None, "pass→fail", "fail→pass"}
    assert document["rules"]["toy.item.colour"] == {"pass→fail": 0, "fail→pass": 1,
                                                    "reasons changed": 0}
    assert [f["message"] for f in document["findings"] if f["rule"] == "impact.finding"] == [
        "tightening rule toy.item.positive (added) rejects no input given that was accepted "
        "before"]


def test_a_directory_needs_entry_and_a_broken_spec_is_an_error(corpus, tmp_path):
    old, new, inputs = corpus
    runner = CliRunner()
    result = runner.invoke(main, ["spec", "impact", str(old), str(new), str(inputs)])
    assert result.exit_code == 2 and "--entry NAME" in result.output
    broken = tmp_path / "broken.yaml"
    broken.write_text(CHILD.replace("regex:", "regx:"))
    result = runner.invoke(main, ["spec", "impact", str(old), str(broken),
                                  str(inputs / "same" / "index.json")])
    assert result.exit_code == 2 and "[spec.unknown-kind]" in result.output
