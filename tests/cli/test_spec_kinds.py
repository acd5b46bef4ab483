"""`flarespec spec kinds`: the kinds' own documentation, read from the registry."""

from __future__ import annotations

import json

from flarespec.engine.kinds import KINDS
from cli_run import run


def test_every_kind_is_listed_with_its_first_paragraph():
    result = run("spec", "kinds")
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.output.splitlines() if not line.startswith(" ")]
    assert listed == sorted(KINDS)
    assert "count  (collective, accepts an empty selection)" in result.output
    assert "With ``where``" not in result.output  # the first paragraph only


def test_one_kind_whole_and_as_json():
    result = run("spec", "kinds", "count")
    assert result.exit_code == 0 and "With ``where``" in result.output
    [entry] = [k for k in json.loads(run("spec", "kinds", "--json").output) if k["name"] == "count"]
    assert entry == {"name": "count", "collective": True, "accepts_empty": True,
                     "doc": KINDS["count"].doc}


def test_an_unknown_kind_exits_2_with_a_suggestion():
    result = run("spec", "kinds", "rang")
    assert result.exit_code == 2
    assert "unknown assertion kind 'rang' (did you mean 'range'?)" in result.output
