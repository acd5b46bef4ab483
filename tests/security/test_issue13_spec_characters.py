"""Issue 13: a raw control character in a spec file.

PyYAML's reader refuses it with a ``ReaderError`` raised before the loader existed, so
``spec lint/show/diff/test`` printed a traceback and ``measure --spec`` reported
``engine.internal-error``. It is now a spec error at file:line:column,
``spec.yaml-character``, exit 2, everywhere.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from packet_tree import tree_digest

from flarespec.cli import main
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import read_spec_file

CODE = "spec.yaml-character"
# (text, line, column of the offending character)
CASES = {
    "soh-in-a-quoted-title": ('flarespec: 1\nid: x/y\ntitle: "a\x01b"\n', 3, 10),
    "nul-in-a-comment": ("flarespec: 1\nid: x/y\ntitle: t\n# \x00\n", 4, 3),
    "del-in-a-key": ("flarespec: 1\nid: x/y\nti\x7ftle: t\n", 3, 3),
    "escape-first": ("\x1bflarespec: 1\n", 1, 1),
    "non-character": ("flarespec: 1\nid: x/y\ntitle: \ufffe\n", 3, 8),
}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(params=CASES)
def bad_spec(request, tmp_path):
    text, line, column = CASES[request.param]
    path = tmp_path / "bad.yaml"
    path.write_bytes(text.encode("utf-8"))
    return path, f"{path}:{line}:{column}:"


def test_the_reader_refusal_is_a_spec_issue_at_its_place(bad_spec):
    path, where = bad_spec
    with pytest.raises(SpecInvalid) as problem:
        read_spec_file(path)
    [issue] = problem.value.issues
    assert issue.code == CODE and str(issue).startswith(where), str(issue)
    assert "not allowed in YAML" in str(issue)


@pytest.mark.parametrize("command", [("spec", "lint"), ("spec", "show"), ("spec", "test"),
                                     ("spec", "diff", "flare/bce032c0"),
                                     ("spec", "new", "--revision", "a" * 40, "--from")])
def test_spec_commands_report_it_without_a_traceback(bad_spec, command):
    path, where = bad_spec
    before = path.read_bytes()
    result = invoke(*command, path)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "ReaderError" not in result.output
    assert any(line.startswith(where) and line.endswith(f"[{CODE}]")
               for line in result.output.splitlines()), result.output
    assert path.read_bytes() == before


def test_measure_with_such_a_spec_is_a_spec_error_not_an_internal_error(bad_spec, packet_pair,
                                                                       tmp_path):
    path, where = bad_spec
    a, b = packet_pair
    before = (tree_digest(a.parent), tree_digest(b.parent), path.read_bytes())
    output = tmp_path / "r.json"
    result = invoke("measure", "--packet", a, "--peer", b, "--spec", path, "--output", output)
    assert result.exit_code == 2, result.output
    receipt = json.loads(output.read_text())
    rules = {v["rule"] for v in receipt["violations"]}
    assert "engine.internal-error" not in rules and "spec.invalid" in rules, rules
    messages = [v["message"] for v in receipt["violations"] if v["rule"] == "spec.invalid"]
    assert messages and all(m.startswith(where) and m.endswith(f"[{CODE}]") for m in messages)
    assert (tree_digest(a.parent), tree_digest(b.parent), path.read_bytes()) == before
