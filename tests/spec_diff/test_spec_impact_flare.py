"""``spec impact`` over packets written by the Flare writer: a child of the bundled spec that
adds one error rule and drops another flips exactly the packets it should, for exactly
those rules, and the flips agree with the diff's classes (no findings)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flarespec.fixtures.mutations import apply_mutation, refresh_digests
from flarespec.fixtures.writers import write_packet
from flarespec.review.impact import entries, impact

PARENT = "flare/bce032c0"
CHILD = """\
flarespec: 1
id: flare/impact-child
title: A child that requires synthetic packets and no longer checks the tokenizer fingerprint's form
extends: flare/bce032c0
applies_to:
  given: "packet:$.source.revision"
  equals: "0000000000000000000000000000000000000000"
shapes:
  corpus: {members: {tokenizer_fingerprint: string}}
rules:
  - id: packet.synthetic.required
    clause: "2"
    description: Only synthetic packets are accepted.
    given: "packet:$.synthetic"
    assert: {equals: true}
"""
ENTRY = "packet.json"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    """Three packets: as written; written unlabelled (synthetic false: valid for the parent,
    refused by the child's new rule); and one whose tokenizer fingerprint ends in a newline
    (refused by the parent's corpus shape alone, sha256, which the child relaxes to a
    string)."""
    base = tmp_path_factory.mktemp("impact")
    (base / "child.yaml").write_text(CHILD)
    inputs = base / "inputs"
    write_packet(inputs / "same", PARENT)
    write_packet(inputs / "unlabelled", PARENT, synthetic=False)
    shutil.copytree(inputs / "same", inputs / "fingerprint")
    root = inputs / "fingerprint"
    for step in ({"op": "set_json", "file": "corpus.json", "path": "$.tokenizer_fingerprint",
                  "value": "0123456789abcdef" * 4 + "\n"},
                 {"op": "set_json_sha256", "file": "run/measurements.json",
                  "path": "$.corpus.sha256", "of": "corpus.json"}):
        apply_mutation(root, step)
    refresh_digests(root)
    return base / "child.yaml", inputs


def test_exactly_the_expected_packets_flip_for_the_expected_rules(corpus):
    child, inputs = corpus
    result = impact(PARENT, str(child), entries([str(inputs)], ENTRY), workers=2)
    flips = {Path(r.input).parent.name: (r.flip, r.responsible) for r in result.inputs}
    assert flips == {"same": (None, []),
                     "unlabelled": ("pass→fail", ["packet.synthetic.required"]),
                     "fingerprint": ("fail→pass", ["corpus.file.shape"])}
    passing = {Path(r.input).parent.name: r.new.metric for r in result.inputs if r.new.ok}
    assert set(passing) == {"same", "fingerprint"}
    assert all(isinstance(value, (int, float)) for value in passing.values())
    same = next(r for r in result.inputs if Path(r.input).parent.name == "same")
    assert same.old.metric == same.new.metric  # nothing about the metric changed
    assert result.per_rule() == {
        "corpus.file.shape": {"pass→fail": 0, "fail→pass": 1, "reasons changed": 0},
        "packet.synthetic.required": {"pass→fail": 1, "fail→pass": 0, "reasons changed": 0}}
    assert result.findings == []  # the added rule tightens, the relaxed shape loosens: as seen
