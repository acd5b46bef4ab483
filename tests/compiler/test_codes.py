"""Spec issue codes are written once (compiler/codes.py): every code a source file writes is
there, and docs/spec-language.md "Spec errors" lists exactly them; spec lint's SARIF
describes each code it reports from there."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from flarespec.cli import main
from flarespec.compiler.codes import CODES

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "flarespec"
# codes of the receipt, not of a spec file (docs/receipt.md lists them)
RECEIPT_RULES = {"spec.unsupported"}


def written_codes() -> set[str]:
    found = set()
    for path in SOURCE.rglob("*.py"):
        if path.name != "codes.py":
            found.update(re.findall(r"\"(spec\.[a-z][a-z-]*)\"", path.read_text()))
    return found - RECEIPT_RULES


def documented_codes() -> set[str]:
    text = (ROOT / "docs" / "spec-language.md").read_text()
    table = text[text.index("| code | cause |"):text.index("## Caveats")]
    return {code for line in table.splitlines() if line.startswith("| `")
            for code in re.findall(r"`(spec\.[a-z-]+)`", line.split(" | ")[0])}


def test_every_code_the_sources_write_has_its_meaning():
    assert written_codes() - set(CODES) == set()


def test_no_meaning_is_left_for_a_code_nothing_writes():
    assert set(CODES) - written_codes() == set()


def test_the_docs_table_lists_exactly_the_codes():
    assert documented_codes() == set(CODES)


def test_spec_lint_sarif_describes_each_code_from_its_meaning(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("flarespec: 1\nid: toy/bad\ntitle: t\nbogus: 1\n")
    log = json.loads(CliRunner().invoke(main, ["spec", "lint", str(bad), "--format", "sarif",
                                               "--root", str(tmp_path)]).stdout)
    rules = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["spec.shape"]["shortDescription"]["text"].lower() == CODES["spec.shape"].lower()
    assert "docs/spec-language.md" in rules["spec.shape"]["help"]["text"]
