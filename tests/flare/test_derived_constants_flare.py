"""Issue 25, "Derived constants" and "Derived, not restated", on the bundled Flare spec: the
prefix rows are computed from ``prefix`` (a child that changes ``prefix.tokens`` gets rows
that follow), lint cross-checks a child that writes the rows out, and the derived-input
rule reads its divisor from ``derived_field.formula`` (``derived_field.input`` is gone; an
old child that restates ``derived_field``, with ``input`` or without, works the same)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from flarespec.adapter.commands import measure
from flarespec.cli import main
from flarespec.fixtures.mutations import refresh_digests, set_json
from flarespec.fixtures.writers import write_packet
from flarespec.compiler.open import open_compiled

PARENT = "flare/bce032c0"
REVISION = "3" * 40


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def child(tmp_path: Path, flare_constants: dict, constants: dict, name: str = "child") -> Path:
    """A child of the bundled spec for another revision, restating ``constants``."""
    source = dict(flare_constants["source"], revision=REVISION)
    spec = {"flarespec": 1, "id": f"flare/{name}", "title": "a next revision",
            "extends": PARENT,
            "applies_to": {"given": "packet:$.source.revision", "equals": "${source.revision}"},
            "constants": {"source": source, **constants}}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def rows(constants: dict) -> dict:
    return {row["kind"]: (row["prompt_token_count"], row["reused_tokens"])
            for row in constants["group_matrix"] if row["kind"].startswith("prefix-")}


def lint_codes(path: Path) -> list[tuple]:
    from flarespec.authoring.lint import lint

    [result] = lint([str(path)])
    return [(i.code, i.severity, i.mark.line if i.mark else None) for i in result.issues]


def test_the_bundled_rows_are_computed_and_unchanged(flare_constants):
    assert rows(flare_constants) == {"prefix-seed": (4608, 0), "prefix-hit": (4608, 4096)}
    raw = open_compiled(PARENT).resolved.chain[0].data["constants"]["group_matrix"]
    assert raw[-1]["prompt_token_count"] == "${prefix.tokens + prefix_own_tokens}"
    assert raw[-1]["reused_tokens"] == "${prefix.tokens}"


def test_a_child_changing_only_the_prefix_gets_rows_that_follow(tmp_path, flare_constants):
    path = child(tmp_path, flare_constants, {"prefix": dict(flare_constants["prefix"], tokens=2048)})
    assert rows(open_compiled(path).constants) == {"prefix-seed": (2560, 0),
                                                   "prefix-hit": (2560, 2048)}
    assert lint_codes(path) == []
    assert invoke("spec", "lint", path).exit_code == 0
    written = invoke("fixture", "write", "--spec", path, "--pair", tmp_path / "pair")
    assert written.exit_code == 0, written.output
    pair = tmp_path / "pair"
    result = invoke("measure", "--spec", path, "--packet", pair / "candidate" / "packet.json",
                    "--peer", pair / "baseline" / "packet.json", "--output", tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    corpus = json.loads((pair / "candidate" / "corpus.json").read_text())
    seed = next(g for g in corpus["groups"] if g["kind"] == "prefix-seed")["requests"][0]
    assert (seed["prompt_token_count"], seed["prefix"]["tokens"]) == (2560, 2048)


def test_a_child_keeping_the_old_rows_is_told_where(tmp_path, flare_constants):
    """The issue's case: prefix.tokens 2048 with rows still at 4608/4096 linted clean."""
    matrix = copy.deepcopy(flare_constants["group_matrix"])  # computed: 4608 and 4096 written out
    path = child(tmp_path, flare_constants, {
        "group_matrix": matrix, "prefix": dict(flare_constants["prefix"], tokens=2048)})
    text = path.read_text().splitlines()
    seed_line = next(n for n, line in enumerate(text, 1) if "kind: prefix-seed" in line)
    found = [(code, line) for code, _, line in lint_codes(path) if code == "spec.constant-restated"]
    # each row is a block mapping: prompt_token_count stands 3 lines below its kind
    assert found == [("spec.constant-restated", seed_line + 3),
                     ("spec.constant-restated", seed_line + 10),
                     ("spec.constant-restated", seed_line + 13)]


@pytest.mark.parametrize("with_input", [False, True], ids=["without-input", "with-input"])
def test_an_old_child_restating_derived_field_lints_clean_and_runs_the_same(
        tmp_path, flare_constants, with_input):
    derived = {key: value for key, value in flare_constants["derived_field"].items()}
    assert "input" not in derived
    if with_input:  # written for the spec that had it: no longer read, ignored
        derived["input"] = "analysis.delivery_ttft_ns"
    path = child(tmp_path, flare_constants, {"derived_field": derived})
    assert lint_codes(path) == []
    (tmp_path / "ref").mkdir()
    reference = child(tmp_path / "ref", flare_constants, {}, name="reference")
    packet = write_packet(tmp_path / "packet", path)
    same = write_packet(tmp_path / "same", reference)
    for file in sorted(p for p in packet.parent.rglob("*") if p.is_file()):
        assert file.read_bytes() == (same.parent / file.relative_to(packet.parent)).read_bytes()
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=path)
    assert outcome.exit_code == 0, outcome.receipt["violations"][:3]


@pytest.mark.parametrize("ttft, value, rules", [
    (-5, -819200000000.0, {"measurements.observation.derived-input"}),
    # 0: the formula cannot be computed either
    (0, 1.0, {"measurements.observation.derived-input", "measurements.observation.derived-value"}),
], ids=["negative", "zero"])
def test_the_derived_input_rule_still_rejects_a_divisor_not_above_zero(tmp_path, ttft, value,
                                                                        rules):
    """Both copies carry the divisor, the derived value is consistent with it where it can
    be: only what the divisor breaks rejects the packet."""
    packet = write_packet(tmp_path / "packet", PARENT)
    root = packet.parent
    measurements = json.loads((root / "run" / "measurements.json").read_text())
    group = next(g for g in measurements["groups"] if g["kind"] == "ttft-4096")
    index = measurements["groups"].index(group)
    sidecar = f"run/{group['id']}/{group['observations'][0]['request_id']}/observation.json"
    observation = f"$.groups[{index}].observations[0].analysis"
    set_json(root, sidecar, "$.analysis.delivery_ttft_ns", ttft)
    set_json(root, "run/measurements.json", f"{observation}.delivery_ttft_ns", ttft)
    set_json(root, "run/measurements.json", f"{observation}.http_prefill_tokens_per_second", value)
    refresh_digests(root)
    outcome = measure(packet, packet, tmp_path / "r.json")
    assert outcome.exit_code == 2
    assert {v["rule"] for v in outcome.receipt["violations"]} == rules
    (at,) = [v for v in outcome.receipt["violations"]
             if v["rule"] == "measurements.observation.derived-input"]
    assert at["file"] == "run/measurements.json"
