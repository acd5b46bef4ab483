"""A path flarespec's JSONPath refuses is a spec error at its file:line:column, shown by
`flarespec spec lint` with the construct named (spec.path-syntax), never a traceback."""

from __future__ import annotations

import pytest
from cli_run import run

SPEC = """\
flarespec: 1
id: toy/paths
title: Paths
documents:
  doc: {{loader: json, entry: true}}
rules:
  - id: toy.path
    description: A rule whose path is refused.
    given: "{given}"
    assert: {{present: true}}
"""


@pytest.mark.parametrize("given, named", [
    ("doc:$.items[?match(@.sku, 'a.*')]", "function extension match() is not supported by "
                                          "flarespec's JSONPath"),
    ("doc:$.items[?search(@.sku, 'a')]", "function extension search() is not supported"),
    ("doc:$.items[?sku == 'a']", "write @.sku, not the bare name sku"),
    ("doc:$.items[01]", "an index 01 has a leading zero"),
    ("doc:$.items[?length(@.sku)]", "length() gives a value, which is no test"),
])
def test_lint_names_the_refused_construct_at_its_line(tmp_path, given, named):
    spec = tmp_path / "paths.yaml"
    spec.write_text(SPEC.format(given=given))
    result = run("spec", "lint", spec)
    assert result.exit_code == 2, result.output
    [line] = [line for line in result.output.splitlines() if "[spec.path-syntax]" in line]
    assert line.startswith(f"{spec}:9:") or line.startswith(f"{spec.resolve()}:9:"), line
    assert named in line


def test_an_rfc_path_lints(tmp_path):
    spec = tmp_path / "paths.yaml"
    spec.write_text(SPEC.format(given="doc:$.items[?@.count > 0 && length(@.sku) == 1].sku"))
    result = run("spec", "lint", spec)
    assert "[spec.path-syntax]" not in result.output, result.output
