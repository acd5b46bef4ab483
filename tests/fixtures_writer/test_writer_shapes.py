"""Issue 14 item 4: the writer follows the spec's shapes. A child that adds a required member
to documents (with an ``example``) gets packets that have it, and its own spec accepts them,
with no change to the writer."""

from __future__ import annotations

import json
import textwrap

import pytest

from flarespec.adapter.commands import measure
from flarespec.fixtures.writers import conform, write_packet
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import open_compiled

CHILD = """\
flarespec: 1
id: flare/with-members
title: A revision whose sidecar and SSE usage carry more
extends: flare/bce032c0
shapes:
  usage:
    members:
      reasoning_tokens: {type: integer, min: 0, example: 0}
  observation:
    members:
      transport: {type: object, example: {protocol: "http/1.1"},
                  members: {protocol: {type: string, example: "http/1.1"}}}
  memory_report:
    members:
      kv_pages_reserved: {type: integer, example: 16}
"""


def test_conform_fills_required_members_with_examples_at_every_depth():
    node = {"type": "object", "members": {
        "a": {"type": "integer", "example": 1},
        "b": {"type": "object", "members": {"c": {"type": "string", "example": "x"}}},
        "d": {"type": "integer", "optional": True, "example": 5},
        "e": {"type": "array", "items": {"type": "object", "members": {
            "f": {"type": "null", "example": None}}}}}}
    value = {"b": {}, "e": [{}, {"f": None, "g": 1}]}
    assert conform(node, value) == {"b": {"c": "x"}, "e": [{"f": None}, {"f": None, "g": 1}],
                                    "a": 1}


def test_a_child_adding_required_members_gets_valid_packets(tmp_path):
    spec_path = tmp_path / "with-members.yaml"
    spec_path.write_text(CHILD)
    spec = open_compiled(str(spec_path))
    entry = write_packet(tmp_path / "packet", spec)
    root = entry.parent
    sidecar = json.loads(next(root.rglob("observation.json")).read_text())
    assert sidecar["transport"] == {"protocol": "http/1.1"}
    assert sidecar["usage"]["reasoning_tokens"] == 0
    terminal = [line for line in next(root.rglob("response.sse")).read_text().splitlines()
                if line.startswith("data: {") and '"usage": {' in line]
    assert terminal and json.loads(terminal[-1][6:])["usage"]["reasoning_tokens"] == 0
    memory_report = json.loads(entry.read_text())["memory_report"]
    assert json.loads((root / memory_report).read_text())["kv_pages_reserved"] == 16
    outcome = measure(entry, entry, tmp_path / "out" / "r.json", spec_path=spec_path)
    assert outcome.exit_code == 0, outcome.receipt["violations"][:3]
    # the parent does not require them and ignores members it does not name
    parent = measure(entry, entry, tmp_path / "out" / "p.json", spec_path="flare/bce032c0")
    assert parent.exit_code == 0, parent.receipt["violations"][:3]


def test_without_an_example_the_member_is_missing_and_its_own_spec_says_so(tmp_path):
    spec_path = tmp_path / "bare.yaml"
    spec_path.write_text(CHILD.replace(", example: 16", ""))
    entry = write_packet(tmp_path / "packet", open_compiled(str(spec_path)))
    outcome = measure(entry, entry, tmp_path / "out" / "r.json", spec_path=spec_path)
    assert outcome.exit_code == 2
    assert {(v["rule"], v["location"]) for v in outcome.receipt["violations"]} == {
        ("memory-report.file.shape", "$.kv_pages_reserved")}


def test_an_example_without_its_own_shape_is_a_spec_error(tmp_path):
    spec_path = tmp_path / "bad.yaml"
    spec_path.write_text(CHILD.replace("example: 16", "example: 1.5"))
    with pytest.raises(SpecInvalid) as raised:
        open_compiled(str(spec_path))
    [issue] = raised.value.issues
    assert issue.code == "spec.document-shape" and issue.mark.line == 15
    assert "example 1.5 does not have its own shape: $ is number, expected integer" in \
        issue.message
