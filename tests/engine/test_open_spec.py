"""One way to open a spec: a bundled id or a file path, for every command (library and CLI)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from flarespec.adapter.select import select_spec
from flarespec.cli import main
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import UNKNOWN_SPEC, bundled_compiled, open_compiled, open_spec

BUNDLED = "flare/bce032c0"
ALL_BUNDLED = "aiperf/profile-export, flare/bce032c0"  # every bundled id, sorted
CHILD = f"""\
flarespec: 1
id: flare/child
title: A child without applies_to
extends: {BUNDLED}
"""


def test_a_bundled_id_and_its_file_open_to_the_same_spec(tmp_path):
    by_id = open_spec(BUNDLED)
    by_path = open_spec(by_id.chain[0].path)
    assert by_id.id == by_path.id == BUNDLED
    assert by_id.digest() == by_path.digest()


def test_compiled_specs_are_cached_per_file_and_per_bundled_id(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text(CHILD)
    assert open_compiled(child) is open_compiled(str(child))
    assert open_compiled(BUNDLED) is open_compiled(BUNDLED)
    assert open_compiled(BUNDLED) in bundled_compiled()


def test_neither_file_nor_id_lists_bundled_ids_and_the_closest(tmp_path):
    with pytest.raises(SpecInvalid) as caught:
        open_spec("flare/bce032c")
    [issue] = caught.value.issues
    assert issue.code == UNKNOWN_SPEC
    assert issue.message == (f"'flare/bce032c' is neither a spec file nor a bundled spec id "
                             f"(did you mean '{BUNDLED}'?); bundled: {ALL_BUNDLED}")


@pytest.mark.parametrize("command", ["measure", "validate-pair"])
def test_runner_spec_option_refuses_an_unknown_reference_before_any_work(command, tmp_path):
    roles = {"measure": ["--packet", "a/packet.json", "--peer", "b/packet.json"],
             "validate-pair": ["--baseline", "a/packet.json", "--candidate", "b/packet.json"]}
    result = CliRunner().invoke(main, [command, *roles[command], "--output",
                                       str(tmp_path / "r.json"), "--spec", "flare/nope"])
    assert result.exit_code == 2
    assert "Invalid value for --spec" in result.output
    assert "'flare/nope' is neither a spec file nor a bundled spec id" in result.output
    assert f"bundled: {ALL_BUNDLED} [spec.unknown]" in result.output
    assert not (tmp_path / "r.json").exists()


def test_measure_accepts_a_bundled_id(tmp_path):
    """A bundled id reaches the receipt: a missing packet is rejected under the named spec."""
    output = tmp_path / "r.json"
    packet = str(tmp_path / "packet" / "packet.json")
    result = CliRunner().invoke(main, ["measure", "--packet", packet, "--peer", packet,
                                       "--output",
                                       str(output), "--spec", BUNDLED, "--quiet"])
    assert result.exit_code == 2, result.output
    receipt = json.loads(output.read_text())
    assert receipt["status"] == "rejected"
    assert receipt["packet"]["spec"] == BUNDLED
    assert {v["rule"] for v in receipt["violations"]} == {"packet.json.missing"}


def test_spec_list_says_a_spec_without_applies_to_is_only_selected_by_name(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text(CHILD)
    from flarespec.adapter.select import describe_condition

    assert describe_condition(open_compiled(child)) == \
        "flare/child (selected only with --spec: no applies_to)"


def test_several_applicable_specs_are_refused_naming_both_and_the_fix(tmp_path):
    entry = tmp_path / "packet.json"
    entry.write_text('{"source": {"revision": "r1"}}')
    specs = []
    for name in ("one", "two"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"flarespec: 1\nid: toy/{name}\ntitle: {name}\n"
                        f"documents:\n  packet: {{loader: json, entry: true}}\n"
                        f"applies_to: {{given: 'packet:$.source.revision', equals: r1}}\n")
        specs.append(open_compiled(path))
    selection = select_spec(entry, specs)
    [violation] = selection.violations
    assert selection.spec is None and violation.rule == "spec.unsupported"
    assert "several specs apply to packet.json: toy/one (" in violation.message
    assert "; toy/two (" in violation.message
    assert "make them exclusive (`flarespec spec lint` names overlapping specs)" in \
        violation.message
