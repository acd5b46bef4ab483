"""A child that renames the derived field (restates ``derived_field`` with a new ``key``,
nothing else) just works (issue 25): the observation shape declares the member by the
constant (``"${derived_field.key}"``), so the child lints clean, its writer's pair carries
the new name and ``measure --spec CHILD`` accepts it. Before, the parent's literal member
made three ``spec.undeclared-member`` errors at the parent's lines."""

from __future__ import annotations

import json

import pytest
import yaml

from cli_run import run
from flarespec.authoring.lint import lint_one
from flarespec.compiler.load import SpecLibrary, bundled_spec_dir
from flarespec.compiler.resolve import resolve

PARENT = "flare/bce032c0"
NEW_KEY = "analysis.prefill_tokens_per_second_v2"


@pytest.fixture(scope="module")
def child(tmp_path_factory):
    library = SpecLibrary([bundled_spec_dir()])
    constants = resolve(library.get(PARENT), library).plain()["constants"]
    source = dict(constants["source"], revision="3" * 40)
    spec = {"flarespec": 1, "id": "flare/renamed-derived", "extends": PARENT,
            "title": "The derived field renamed",
            "applies_to": {"given": "packet:$.source.revision", "equals": "${source.revision}"},
            "constants": {"source": source,
                          "derived_field": dict(constants["derived_field"], key=NEW_KEY)}}
    path = tmp_path_factory.mktemp("child") / "renamed.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path, constants["derived_field"]


def test_the_child_lints_clean(child):
    path, _ = child
    result = lint_one(str(path))
    assert [str(issue) for issue in result.errors] == []
    assert [str(issue) for issue in result.warnings] == []


def test_the_childs_pair_has_the_new_name_and_measures(child, tmp_path):
    path, derived = child
    written = run("fixture", "write", tmp_path / "pair", "--spec", path, "--pair")
    assert written.exit_code == 0, written.output
    old_member, new_member = derived["key"].split(".")[-1], NEW_KEY.split(".")[-1]
    measurements = json.loads((tmp_path / "pair" / "baseline" / "run" / "measurements.json")
                              .read_text())
    carried = [observation["analysis"] for group in measurements["groups"]
               if group["kind"] in derived["kinds"] for observation in group["observations"]]
    assert carried and all(new_member in analysis and old_member not in analysis
                           for analysis in carried)
    pair = tmp_path / "pair"
    outcome = run("measure", "--spec", path, "--packet", pair / "baseline" / "packet.json",
                  "--peer", pair / "candidate" / "packet.json", "--output", tmp_path / "receipt.json")
    assert outcome.exit_code == 0, outcome.output[-2000:]
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    assert receipt["status"] == "pass" and receipt["violations"] == []


def test_a_rename_into_an_undeclared_member_is_told_at_the_childs_line(child, tmp_path):
    """One cause, one error: the rules reading the new path are not told again as
    undeclared members (lint leaves out a read of a member path no member holds)."""
    path, _ = child
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(path.read_text().replace(NEW_KEY, "stats.rate"))
    result = lint_one(str(wrong))
    assert [(issue.code, issue.mark.file) for issue in result.errors] == \
        [("spec.document-shape", str(wrong))]
    assert "declare no member 'stats'" in result.errors[0].message
