"""Issue 13: an output naming a file the command reads replaced it.

``measure --output`` and ``validate-pair --output`` naming the ``--spec`` file, a parent
spec file beside it or a hard link to one; ``spec test --output`` naming the spec or a
catalog; ``spec new --out`` naming the spec it drafts from (even with ``--force``). Each
is refused with exit 2 and a message naming the file; nothing is written, every input is
byte-identical afterwards.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from packet_tree import tree_digest

from flarespec.cli import main
from flarespec.compiler.load import bundled_spec_dir

CHILD = "flarespec: 1\nid: flare/child13\ntitle: c\nextends: flare/bce032c0\n"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def specs(tmp_path) -> Path:
    """child.yaml extending bce032c0.yaml beside it (a copy of the bundled spec)."""
    folder = tmp_path / "specs"
    folder.mkdir()
    shutil.copy(bundled_spec_dir() / "flare" / "bce032c0.yaml", folder / "bce032c0.yaml")
    (folder / "child.yaml").write_text(CHILD)
    return folder


@pytest.mark.parametrize("command", ["measure", "validate-pair"])
@pytest.mark.parametrize("target, what", [("child.yaml", "the --spec file"),
                                          ("bce032c0.yaml", "a parent spec file"),
                                          ("hardlink.yaml", "the --spec file")])
def test_a_receipt_never_replaces_a_spec_file_it_reads(packet_pair, specs, command, target,
                                                       what):
    a, b = packet_pair
    os.link(specs / "child.yaml", specs / "hardlink.yaml")
    before, packets = snapshot(specs), (tree_digest(a.parent), tree_digest(b.parent))
    roles = ("--packet", "--peer") if command == "measure" else ("--baseline", "--candidate")
    result = invoke(command, roles[0], a, roles[1], b, "--spec", specs / "child.yaml",
                    "--output", specs / target)
    assert result.exit_code == 2, result.output
    assert f"names {what}" in result.output and "this command reads" in result.output
    assert "nothing was written" in result.output and "Traceback" not in result.output
    assert snapshot(specs) == before
    assert (tree_digest(a.parent), tree_digest(b.parent)) == packets


def test_a_relative_spelling_of_the_spec_is_refused_too(packet_pair, specs, monkeypatch):
    a, b = packet_pair
    monkeypatch.chdir(specs)
    before = snapshot(specs)
    result = invoke("measure", "--packet", a, "--peer", b, "--spec", "child.yaml",
                    "--output", "../specs/./child.yaml")
    assert result.exit_code == 2 and "the --spec file" in result.output
    assert snapshot(specs) == before


def test_a_receipt_never_replaces_a_hook_module_it_runs(packet_pair, tmp_path, monkeypatch):
    """The hook module's source is a file measure reads (its digest goes in the receipt)."""
    import flarespec.hooks.flare as hook

    a, b = packet_pair
    source = Path(hook.__file__)
    before = source.read_bytes()
    from flarespec.adapter import receipt
    from flarespec.adapter.commands import OutputRefused, measure

    # never risk the real source: point the check at a copy standing in for it
    stand_in = tmp_path / "flare.py"
    stand_in.write_bytes(before)
    real = receipt.spec_inputs
    monkeypatch.setattr(receipt, "spec_inputs", lambda spec: [
        (str(stand_in) if path == str(source) else path, what) for path, what in real(spec)])
    with pytest.raises(OutputRefused, match="the source of the hook module"):
        measure(a, b, stand_in)
    assert stand_in.read_bytes() == before and source.read_bytes() == before


@pytest.mark.parametrize("target", ["child.yaml", "bce032c0.yaml", "catalog.yaml"])
def test_spec_test_output_never_replaces_what_it_reads(specs, target):
    shutil.copy(Path(__file__).parents[2] / "fixtures" / "flare" / "catalog.yaml",
                specs / "catalog.yaml")
    before = snapshot(specs)
    result = invoke("spec", "test", specs / "child.yaml", "--catalog", specs / "catalog.yaml",
                    "-k", "valid-own-peer", "--format", "junit", "--output", specs / target)
    assert result.exit_code == 2, result.output
    assert "--output refused" in result.output and "this command reads" in result.output
    assert "nothing was written" in result.output
    assert snapshot(specs) == before


@pytest.mark.parametrize("spelling", ["bce032c0.yaml", "./x/../bce032c0.yaml"])
def test_spec_new_out_never_replaces_the_spec_it_drafts_from(specs, spelling):
    (specs / "x").mkdir()
    before = snapshot(specs)
    result = invoke("spec", "new", "--from", specs / "bce032c0.yaml", "--revision", "ab" * 20,
                    "--out", f"{specs}/{spelling}", "--force")
    assert result.exit_code == 2, result.output
    assert "--out refused" in result.output and "spec file (FROM or a parent)" in result.output
    assert snapshot(specs) == before


def test_spec_new_out_elsewhere_still_works(specs, tmp_path):
    out = tmp_path / "new.yaml"
    result = invoke("spec", "new", "--from", specs / "bce032c0.yaml", "--revision", "ab" * 20,
                    "--out", out)
    assert result.exit_code == 0, result.output and out.is_file()
