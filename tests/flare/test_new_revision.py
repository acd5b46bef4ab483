"""A spec for a new upstream revision needs no code: a child spec drives writer and validator."""

from __future__ import annotations

import copy
import json
import statistics

import yaml

from flarespec.adapter.commands import measure
from flarespec.compiler.open import open_compiled as compile_file
from flarespec.fixtures.writers import write_packet

NEW_REVISION = "1" * 40


def write_child_spec(tmp_path, flare_constants):
    matrix = copy.deepcopy(flare_constants["group_matrix"])
    for row in matrix:
        if row["kind"] == "ttft-512":
            row["requests"] = 5  # the new revision measures five requests
    source = dict(flare_constants["source"], revision=NEW_REVISION)
    child = {
        "flarespec": 1, "id": "flare/next", "title": "a hypothetical next revision",
        "extends": "flare/bce032c0",
        "applies_to": {"given": "packet:$.source.revision", "equals": NEW_REVISION},
        "constants": {"source": source, "group_matrix": matrix},
    }
    path = tmp_path / "next.yaml"
    path.write_text(yaml.safe_dump(child, sort_keys=False))
    return path


def test_child_spec_yields_valid_packets_and_validates_them(tmp_path, flare_constants):
    spec_path = write_child_spec(tmp_path, flare_constants)
    spec = compile_file(spec_path)
    packet = write_packet(tmp_path / "packet", spec)
    outcome = measure(packet, packet, tmp_path / "out" / "r.json", spec_path=spec_path)
    assert outcome.exit_code == 0, outcome.receipt["violations"][:5]
    samples = outcome.receipt["packet"]["metric"]["samples"]
    assert len(samples) == 5
    assert outcome.receipt["metrics"]["delivery_ttft_ns"] == statistics.median(
        s["arrival_ns"] for s in samples)
    corpus = json.loads((packet.parent / "corpus.json").read_text())
    assert [len(g["requests"]) for g in corpus["groups"] if g["kind"] == "ttft-512"] == [5]


def test_the_old_spec_rejects_the_new_revisions_packet(tmp_path, flare_constants, flare_spec):
    spec_path = write_child_spec(tmp_path, flare_constants)
    packet = write_packet(tmp_path / "packet", compile_file(spec_path))
    bundled_only = measure(packet, packet, tmp_path / "r.json")
    assert {v["rule"] for v in bundled_only.receipt["violations"]} == {"spec.unsupported"}
    forced = measure(packet, packet, tmp_path / "f.json",
                     spec_path=flare_spec.resolved.chain[0].path)
    rules = {v["rule"] for v in forced.receipt["violations"]}
    assert {"packet.source", "corpus.group.requests"} <= rules
