"""Issue 13: a regex inside a JSONPath (an ``=~`` filter, jsonpath-ng's ``sub()``) ran on
Python's backtracking ``re``: ``measure --spec`` hung on a 34-character string.

Such a path is now refused when the spec is compiled, as any invalid JSONPath is:
``spec.path-syntax`` at file:line:column, pointing to the RE2 ``regex`` assertion.
``split()`` splits on a literal (``str.split``) and stays allowed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from packet_tree import tree_digest

from flarespec.cli import main
from flarespec.engine.paths import CompiledJsonPath, PathSyntaxError
from flarespec.fixtures.mutations import MutationError, _compile

EVIL = "a" * 33 + "!"  # 34 characters: (a+)+$ backtracks 2^33 times before failing

CHILD = """\
flarespec: 1
id: hostile/regex-path
title: A spec whose JSONPath runs a regex
extends: flare/bce032c0
rules:
  - id: hostile.regex
    description: A path that would run a backtracking regex on the evidence.
    given: "{given}"
    optional: true
    assert: {{absent: true}}
"""
PATHS = {
    "filter": "packet:$[?(@ =~ '(a+)+$')]",
    "filter-in-conjunction": "packet:$[?(@ == 'x' || @ =~ '(a+)+$')]",
    "sub": "packet:$.x_note.`sub(/(a+)+$/, b)`",
    "sub-inside-a-filter": "packet:$[?(@.`sub(/(a+)+$/, b)` == 'b')]",
}


@pytest.mark.parametrize("source", [
    "$.items[?(@.id =~ '(a+)+$')]", "$.items[?(@.id =~ \"x\")].name",
    "$[?(@.a == 1 && @.b =~ 'x')]", "$.a.`sub(/(a+)+$/, x)`", "$..a.`sub(/a/, b)`",
    "$[?(@.x.`sub(/a/, b)` == 'b')]"])
def test_a_regex_in_a_jsonpath_is_refused_when_compiled(source):
    with pytest.raises(PathSyntaxError) as refused:
        CompiledJsonPath(source)
    message = str(refused.value)
    assert source in message and "backtracking" in message
    assert "`regex` assertion (RE2" in message
    assert ("'=~'" in message) != ("sub(" in message)


@pytest.mark.parametrize("source", ["$.a[?(@.b == 'x')]", "$..c", "$.a[?length(@.b) > 1]"])
def test_constructs_without_a_regex_still_compile(source):
    CompiledJsonPath(source)


@pytest.mark.parametrize("source", ["$.a.`split(',', *, -1)`", "$.a.`len`", "$.a.`sorted`",
                                    "$.a.`str()`"])
def test_jsonpath_ng_operators_are_refused_by_name(source):
    """Not RFC 9535 (docs/spec-language.md#path-language): refused, the operator named."""
    with pytest.raises(PathSyntaxError) as refused:
        CompiledJsonPath(source)
    assert "the jsonpath-ng operator `" in str(refused.value)


def test_a_catalog_mutation_path_with_a_regex_is_refused_too():
    with pytest.raises(MutationError, match="backtracking"):
        _compile("$[?(@ =~ '(a+)+$')]")


def write_child(tmp_path: Path, name: str) -> Path:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(CHILD.format(given=PATHS[name].replace("\\", "\\\\")))
    return spec


@pytest.mark.parametrize("name", PATHS)
def test_spec_lint_reports_it_at_its_line(tmp_path, name):
    spec = write_child(tmp_path, name)
    before = spec.read_bytes()
    result = CliRunner().invoke(main, ["spec", "lint", str(spec)], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    [line] = [line for line in result.output.splitlines() if "[spec.path-syntax]" in line]
    assert line.startswith(f"{spec.resolve()}:8:") or line.startswith(f"{spec}:8:"), line
    assert "backtracking" in line and "regex` assertion" in line
    assert spec.read_bytes() == before


@pytest.mark.parametrize("name", ["filter", "sub"])
def test_measure_with_such_a_spec_ends_quickly_with_a_spec_error(tmp_path, name, flare_spec):
    """Through the command line, bounded: the unfixed code never returned."""
    from flarespec.fixtures.writers import write_packet

    entry = write_packet(tmp_path / "p", flare_spec)
    packet = json.loads(entry.read_text())
    packet["x_note"] = EVIL
    entry.write_text(json.dumps(packet, indent=2))
    spec = write_child(tmp_path, name)
    before = tree_digest(entry.parent)
    output = tmp_path / "r.json"
    try:
        done = subprocess.run([sys.executable, "-m", "flarespec", "measure", "--packet",
                               str(entry), "--peer", str(entry), "--spec", str(spec),
                               "--output", str(output), "--quiet"],
                              capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("measure --spec ran a backtracking regex (no result after 30 s)")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    violations = json.loads(output.read_text())["violations"]
    assert {v["rule"] for v in violations} == {"spec.invalid"}, violations
    [message] = [v["message"] for v in violations]
    assert ":8:" in message and message.endswith("[spec.path-syntax]"), message
    assert tree_digest(entry.parent) == before
