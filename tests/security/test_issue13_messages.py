"""Issue 13, "Messages": each of these said something wrong or crashed.

* an output path under a regular file said "File exists": now "<parent> is not a directory";
* a packet path holding a lone surrogate was ``engine.internal-error``: now a path
  violation of the document's rule (``<rule>.path-surrogate``) or of the entry
  (``packet.json.path-invalid``);
* ``--packet /proc/self/fd/0`` on a pipe said "does not exist": now not a regular file;
* ``spec lint`` accepted ``rel_tol: -1`` and ``rel_tol: "x"`` for ``formula``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from packet_tree import tree_digest

from flarespec.adapter.commands import OutputRefused, measure
from flarespec.cli import main

CLI = (sys.executable, "-m", "flarespec")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# ----------------------------------------------------------- output under a regular file

@pytest.mark.parametrize("below", ["receipt.json", "a/b/receipt.json"])
def test_an_output_under_a_regular_file_names_the_file_that_is_no_directory(
        packet_pair, tmp_path, below):
    a, b = packet_pair
    blocker = tmp_path / "file.txt"
    blocker.write_text("keep\n")
    before = (tree_digest(a.parent), tree_digest(b.parent), sorted(tmp_path.iterdir()))
    result = invoke("measure", "--packet", a, "--peer", b, "--output", blocker / below)
    assert result.exit_code == 2
    assert f"{blocker} is not a directory" in result.output, result.output
    assert "File exists" not in result.output and "nothing was written" in result.output
    assert blocker.read_text() == "keep\n"
    assert (tree_digest(a.parent), tree_digest(b.parent), sorted(tmp_path.iterdir())) == before


def test_an_output_under_etc_passwd_is_refused_with_that_reason(packet_pair):
    a, b = packet_pair
    with pytest.raises(OutputRefused, match="/etc/passwd is not a directory"):
        measure(a, b, "/etc/passwd/x")


# ----------------------------------------------------------- lone surrogates in paths

def test_a_member_path_with_a_lone_surrogate_is_a_path_violation(packet_pair, tmp_path):
    a, b = packet_pair
    text = a.read_text()
    assert '"corpus": "corpus.json"' in text
    a.write_text(text.replace('"corpus": "corpus.json"', '"corpus": "corpus\\ud800.json"'))
    before = tree_digest(a.parent)
    outcome = measure(a, b, tmp_path / "r.json")
    assert outcome.exit_code == 2
    rules = {v["rule"]: v for v in outcome.receipt["violations"] if v["packet"] == "packet"}
    assert "engine.internal-error" not in rules, rules
    [rule] = [r for r in rules if r.endswith(".path-surrogate")]
    assert "lone surrogate (U+D800)" in rules[rule]["message"]
    assert "corpus\\ud800.json" in rules[rule]["message"]
    assert tree_digest(a.parent) == before


def test_an_entry_path_with_a_lone_surrogate_is_a_violation(packet_pair, tmp_path):
    _, b = packet_pair
    outcome = measure("x\ud800/packet.json", b, tmp_path / "r.json")
    assert outcome.exit_code == 2
    rules = {v["rule"] for v in outcome.receipt["violations"] if v["packet"] == "packet"}
    assert rules == {"packet.json.path-invalid"}, outcome.receipt["violations"]


def test_a_path_argument_with_invalid_utf8_is_read_as_bytes(packet_pair, tmp_path):
    """``--packet`` with a raw 0xff byte (surrogateescape in Python) names a real folder."""
    import os
    import shutil

    a, b = packet_pair
    odd = os.fsencode(tmp_path) + b"/odd\xff"
    shutil.copytree(a.parent, os.fsdecode(odd))
    output = tmp_path / "r.json"
    done = subprocess.run([*CLI, "measure", "--packet", os.fsdecode(odd) + "/packet.json",
                           "--peer", str(b), "--output", str(output), "--quiet"],
                          capture_output=True, timeout=120)
    assert b"Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert json.loads(output.read_text())["status"] == "pass"


# ----------------------------------------------------------- /proc/self/fd/0 on a pipe

def test_a_pipe_as_the_packet_is_not_a_regular_file(packet_pair, tmp_path):
    _, b = packet_pair
    output = tmp_path / "r.json"
    done = subprocess.run([*CLI, "measure", "--packet", "/proc/self/fd/0", "--peer", str(b),
                           "--output", str(output), "--quiet"], input=b"{}\n",
                          capture_output=True, timeout=120)
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    [violation] = [v for v in json.loads(output.read_text())["violations"]
                   if v["packet"] == "packet"]
    # no spec declares an entry named "0" (file_name), so none is tried; the refusal still
    # says what the file is (issue 24 made selection go by the entry's file name)
    assert violation["rule"] == "spec.unsupported", violation
    assert "is not a regular file (a FIFO)" in violation["message"]
    assert "does not exist" not in violation["message"]


# ----------------------------------------------------------- formula tolerances

FORMULA_SPEC = """\
flarespec: 1
id: tol/spec
title: t
documents:
  doc: {{loader: json, entry: true}}
rules:
  - id: tol.direct
    description: d
    given: "doc:$"
    assert:
      formula: {{expr: "a == b", {key}: {value}}}
  - id: tol.nested
    description: d
    given: "doc:$"
    assert:
      not: {{formula: {{expr: "a == b", {key}: {value}}}}}
"""


@pytest.mark.parametrize("key", ["rel_tol", "abs_tol"])
@pytest.mark.parametrize("value, shown", [("-1", "-1"), ('"x"', '"x"'), ("true", "true"),
                                          ("1e-9", '"1e-9"'), ("[1]", "[1]")])
def test_spec_lint_refuses_a_bad_formula_tolerance(tmp_path, key, value, shown):
    spec = tmp_path / "tol.yaml"
    spec.write_text(FORMULA_SPEC.format(key=key, value=value))
    before = spec.read_bytes()
    result = invoke("spec", "lint", spec)
    assert result.exit_code == 2, result.output
    found = [line for line in result.output.splitlines() if "[spec.kind-argument]" in line]
    assert len(found) == 2, result.output
    assert found[0].startswith(f"{spec}:11:") and found[1].startswith(f"{spec}:16:"), found
    assert all(f"{key} is a tolerance" in line and f"got {shown}" in line for line in found)
    assert spec.read_bytes() == before


@pytest.mark.parametrize("value", ["0", "0.5", "1.0e-9", "3"])
def test_good_formula_tolerances_still_lint(tmp_path, value):
    spec = tmp_path / "tol.yaml"
    spec.write_text(FORMULA_SPEC.format(key="rel_tol", value=value))
    result = invoke("spec", "lint", spec)
    assert "[spec.kind-argument]" not in result.output, result.output


def test_a_bad_formula_tolerance_is_refused_when_the_spec_is_compiled(tmp_path):
    """Not only lint: compiling (what measure --spec does) refuses it at the key's line."""
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import open_compiled

    spec = tmp_path / "tol.yaml"
    spec.write_text(FORMULA_SPEC.format(key="rel_tol", value="-1"))
    with pytest.raises(SpecInvalid) as raised:
        open_compiled(str(spec))
    assert [(i.code, i.mark.line) for i in raised.value.issues] == [
        ("spec.kind-argument", 11), ("spec.kind-argument", 16)]
