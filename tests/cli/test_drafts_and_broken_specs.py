"""Issue 14 item 6: a draft in specs/ is not live, a broken file there is not fatal.

The bundled spec directory is replaced by a temporary copy (as an editable install's
``specs/`` would hold a draft next to the released spec); the compiled-spec cache is off.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from flarespec.compiler import load as spec_load
from flarespec.compiler import open as spec_open

RELEASED = spec_load.bundled_spec_dir() / "flare" / "bce032c0.yaml"
OTHER_REVISION = "c0ffee15a1b2c3d4e5f60718293a4b5c6d7e8f90"
DRAFT = f"""\
flarespec: 1
id: flare/c0ffee15
title: Flare delivery packet, a revision still being written
draft: true
extends: flare/bce032c0
applies_to: {{given: "packet:$.source.revision", equals: "${{source.revision}}"}}
constants:
  source:
    repository: NVIDIA/flare-local-inference
    revision: {OTHER_REVISION}
    readset:
      - path: qualify/performance.py
        symbols: [validate_corpus, stream_request, analyze_events, idle_metrics, run]
      - path: qualify/provenance.py
        symbols: [digest, file_record]
"""


@pytest.fixture
def specs_dir(tmp_path, monkeypatch):
    directory = tmp_path / "specs"
    (directory / "flare").mkdir(parents=True)
    shutil.copy(RELEASED, directory / "flare" / "bce032c0.yaml")
    monkeypatch.setattr(spec_load, "bundled_spec_dir", lambda: directory)
    monkeypatch.setattr(spec_open, "bundled_spec_dir", lambda: directory)
    monkeypatch.setenv("FLARESPEC_CACHE", "0")
    fresh(monkeypatch)
    return directory


def fresh(monkeypatch) -> None:
    """A new process's view of the bundled specs (each command is one process)."""
    for name, empty in (("_bundled_library", None), ("_bundled_specs", None),
                        ("_bundled_partial", None), ("_compiled", {})):
        monkeypatch.setattr(spec_open, name, empty)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def write_packet(tmp_path: Path, *extra) -> Path:
    result = run("fixture", "write", *extra, tmp_path / "packet")
    assert result.exit_code == 0, result.output + result.stderr
    return tmp_path / "packet" / "packet.json"


def measure(tmp_path: Path, packet: Path):
    output = tmp_path / "out" / f"{packet.parent.name}.json"
    result = run("measure", "--packet", packet, "--peer", packet, "--output", output)
    assert "Traceback" not in result.output + result.stderr
    return result, json.loads(output.read_text())


@pytest.mark.parametrize("broken", [
    "flarespec: 1\nid: flare/half\ntitle: [unclosed\n",            # not YAML
    "flarespec: 1\nid: flare/half\ntitle: t\nrules: [{id: a.b}]\n",  # not a spec
    "flarespec: 1\nid: flare/half\ntitle: t\nextends: flare/bce032c0\n"
    "applies_to: {given: 'packet:$.x', equals: 1}\n"
    "rules: [{id: a.b, description: d, given: 'packet:$.x', assert: {equls: 1}}]\n",  # no compile
])
def test_a_broken_file_in_specs_changes_no_verdict_and_is_named(tmp_path, specs_dir, broken,
                                                                monkeypatch):
    packet = write_packet(tmp_path)
    (specs_dir / "flare" / "half.yaml").write_text(broken)
    fresh(monkeypatch)
    result, receipt = measure(tmp_path, packet)
    assert result.exit_code == 0 and receipt["status"] == "pass", receipt["violations"]
    fresh(monkeypatch)
    listed = run("spec", "list")
    assert listed.exit_code == 2 and "Traceback" not in listed.output + listed.stderr
    assert "flare/bce032c0" in listed.output
    assert "half.yaml" in listed.stderr and "is skipped" in listed.stderr


def test_spec_test_names_a_broken_file_and_tests_the_others(tmp_path, specs_dir):
    (specs_dir / "flare" / "half.yaml").write_text("flarespec: 1\nid: [x\n")
    result = run("spec", "test", "-k", "valid-own-peer")
    assert result.exit_code == 2, result.output
    assert "half.yaml" in result.stderr and "is not tested" in result.stderr
    assert "flare/bce032c0: 1 passed, 0 failed" in result.output
    assert "Traceback" not in result.output + result.stderr


def test_a_draft_is_never_chosen_nor_written_by_default(tmp_path, specs_dir):
    (specs_dir / "flare" / "c0ffee15.yaml").write_text(DRAFT)
    # the default writer spec is still the released one ...
    packet = write_packet(tmp_path)
    assert json.loads(packet.read_text())["source"]["revision"].startswith("bce032c0")
    # ... a released packet still passes ...
    result, receipt = measure(tmp_path, packet)
    assert result.exit_code == 0, receipt["violations"]
    # ... and a packet of the draft's revision is unsupported: the draft is not live
    drafted = write_packet(tmp_path / "d", "--spec", specs_dir / "flare" / "c0ffee15.yaml")
    result, receipt = measure(tmp_path / "d", drafted)
    assert result.exit_code == 2
    assert [v["rule"] for v in receipt["violations"]] == ["spec.unsupported"]
    # ... and the refusal names the draft that would apply (issue 25)
    assert "spec flare/c0ffee15 would apply but is a draft: name it with --spec flare/c0ffee15" \
        in receipt["violations"][0]["message"]
    # named explicitly, the draft is used
    named = run("measure", "--spec", specs_dir / "flare" / "c0ffee15.yaml", "--packet", drafted,
                "--peer", drafted, "--output", tmp_path / "named.json")
    assert named.exit_code == 0, named.output + named.stderr
    listed = run("spec", "list")
    assert "flare/c0ffee15" in listed.output and "(draft" in listed.output
    assert listed.exit_code == 0


def test_a_scaffold_in_specs_is_a_draft_until_released(tmp_path, specs_dir, monkeypatch):
    """Issue 25: ``spec new`` writes ``draft: true``, so a child scaffolded into specs/ is
    not live while it is edited (the refusal of its revision's packet names it); with the
    draft lines removed, as the releasing pull request does, it is selected."""
    from flarespec.authoring.scaffold import DRAFT_LINES

    child = specs_dir / "flare" / "c0ffee15.yaml"
    made = run("spec", "new", "--from", "flare/bce032c0", "--revision", OTHER_REVISION,
               "--out", child)
    assert made.exit_code == 0, made.output
    fresh(monkeypatch)
    drafted = write_packet(tmp_path / "d", "--spec", child)
    result, receipt = measure(tmp_path / "d", drafted)
    assert result.exit_code == 2 and [v["rule"] for v in receipt["violations"]] == \
        ["spec.unsupported"]
    assert "spec flare/c0ffee15 would apply but is a draft" in receipt["violations"][0]["message"]
    child.write_text(child.read_text().replace("\n".join(DRAFT_LINES) + "\n", ""))
    fresh(monkeypatch)
    result, receipt = measure(tmp_path / "d", drafted)
    assert result.exit_code == 0, receipt["violations"]
    assert receipt["packet"]["spec"] == "flare/c0ffee15"
