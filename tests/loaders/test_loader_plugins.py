"""Loader plug-ins: a package adds a format through the `flarespec.loaders` entry-point group,
without touching flarespec. Each test installs a toy distribution (a dist-info with its
entry_points.txt and a module) on sys.path and discovers it afresh."""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from cli_run import run as cli
from records_specs import found, records_spec, run

from flarespec.loaders import (
    LoadError,
    find_loader,
    get_loader,
    known_loaders,
    load_document,
    register_loader,
    registry,
)
from flarespec.compiler.errors import SpecInvalid

# The documented example (docs/loaders.md, "Plug-ins"): `name = value` lines, one record each.
TOY = '''
from flarespec.loaders import LoadError, register_loader


@register_loader("toy", records=True)
def load_toy(data: bytes, options: dict):
    """`name = value` lines; a value of digits is an integer."""
    records, lines = [], []
    for number, text in enumerate(data.decode("utf-8").splitlines(), 1):
        if not text.strip():
            continue
        name, equals, value = text.partition("=")
        if not equals:
            raise LoadError("invalid-toy", "a line without '='", line=number)
        value = value.strip()
        records.append({"name": name.strip(), "value": int(value) if value.isdigit() else value})
        lines.append(number)
    return records, lines
'''
ROWS = "{type: array, items: {type: object, members: {name: string, value: integer}}}"
VALUE_RULE = """
- id: toy.rows.value
  description: Every value is at least 1.
  for_each: row
  given: "row:$.value"
  assert: {range: {min: 1}}
"""


@pytest.fixture
def install(tmp_path, monkeypatch):
    """``install(source, name=...)``: a distribution whose entry point ``name`` is a module
    of that source; the registry discovers it afresh and forgets it after the test."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_discovered", False)
    monkeypatch.setattr(registry, "_broken", {})
    formats, loaders = dict(registry.FORMATS), dict(registry.LOADERS)
    modules = []

    def install(source: str, name: str = "toy", module: str | None = None) -> str:
        module = module or f"flarespec_test_plugin_{name}_{len(modules)}"
        (site / f"{module}.py").write_text(textwrap.dedent(source))
        dist = site / f"{module}-1.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
        (dist / "entry_points.txt").write_text(f"[flarespec.loaders]\n{name} = {module}\n")
        modules.append(module)
        return module

    yield install
    registry.FORMATS.clear()
    registry.FORMATS.update(formats)
    registry.LOADERS.clear()
    registry.LOADERS.update(loaders)
    for module in modules:
        sys.modules.pop(module, None)


def test_the_documented_example_is_the_one_tested():
    docs = (Path(__file__).parents[2] / "docs" / "loaders.md").read_text(encoding="utf-8")
    example = docs.split("# toy_format.py: `name = value` lines, one record each\n", 1)[1]
    assert example.split("```", 1)[0].strip() == TOY.strip()
    assert '[project.entry-points."flarespec.loaders"]\ntoy = "toy_format"' in docs


def test_an_entry_point_registers_a_format(install):
    module = install(TOY)
    assert "toy" not in registry.FORMATS  # not imported until a name not built in is asked
    fmt = find_loader("toy")
    assert (fmt.name, fmt.module, fmt.records, fmt.builtin) == ("toy", module, True, False)
    assert "toy" in known_loaders()
    assert get_loader("toy")(b"a = 1\n\nb = x\n", {}) == [{"name": "a", "value": 1},
                                                            {"name": "b", "value": "x"}]
    value, lines = load_document("toy", b"a = 1\n\nb = x\n", {})
    assert list(lines) == [1, 3]


def test_the_unknown_loader_message_lists_plugins_and_the_ones_that_did_not_load(install):
    install(TOY)
    install("import no_such_module_anywhere\n", name="broken")
    with pytest.raises(ValueError) as info:
        get_loader("yaml")
    message = str(info.value)
    assert message.startswith("unknown loader 'yaml'; known: csv, json, jsonl, prometheus, "
                              "sse, text, toy (plug-in); plug-ins that did not load: broken (")
    assert "ModuleNotFoundError: No module named 'no_such_module_anywhere'" in message


def test_a_spec_naming_an_unknown_loader_is_told_the_plugins_too(install, tmp_path):
    install(TOY)
    with pytest.raises(SpecInvalid) as info:
        records_spec(tmp_path, "yaml", ROWS, VALUE_RULE)
    (issue,) = info.value.issues
    assert issue.code == "spec.unknown-loader"
    assert "known: bytes, csv, directory, json, jsonl, prometheus, sse, text, toy (plug-in)" \
        in issue.message


def test_a_plugin_cannot_take_a_builtin_name(install):
    install(TOY.replace('"toy"', '"json"'), name="json")
    assert find_loader("json").builtin
    with pytest.raises(ValueError, match="loader 'json' is registered already"):
        register_loader("json")(lambda data, options: {})
    with pytest.raises(ValueError) as info:
        get_loader("toy")
    assert "plug-ins that did not load: json (" in str(info.value)
    assert "ValueError: loader 'json' is registered already" in str(info.value)


def test_a_spec_over_a_plugin_format_names_its_lines_and_binds_its_code(install, tmp_path):
    module = install(TOY)
    spec = records_spec(tmp_path, "toy", ROWS, VALUE_RULE)
    assert module in spec.hook_modules  # the receipt's validator.hooks; the cache's witness
    report = run(tmp_path, spec, "rows.toy", b"a = 1\n\n# = 0\nc = 2\n")
    assert found(report) == [("toy.rows.value", "rows.toy", "$[1].value", 3)]
    good = b"a = 1\nb = 2\n"
    report = run(tmp_path, spec, "rows.toy", good)
    assert report.violations == []
    assert report.files == {"rows.toy": hashlib.sha256(good).hexdigest()}
    report = run(tmp_path, spec, "rows.toy", b"a = 1\nb = x\n")
    assert found(report) == [("toy.rows.shape", "rows.toy", "$[1].value", 2)]


def test_a_plugins_load_error_is_the_documents_rule(install, tmp_path):
    install(TOY)
    spec = records_spec(tmp_path, "toy", ROWS, VALUE_RULE)
    report = run(tmp_path, spec, "rows.toy", b"a = 1\nno equals sign\n")
    assert found(report) == [("toy.rows.invalid-toy", "rows.toy", "line 2", 2)]


@pytest.mark.parametrize("body, code, where", [
    ("raise RuntimeError('boom')", "loader-failed",
     "the toy loader (plug-in {module}) failed: RuntimeError: boom"),
    ("return [{'a': {1, 2}}], [1]", "loader-output", "a value of type set"),
    ("return [{1: 'a'}], [1]", "loader-output", "a key of type int"),
    ("return [{'a': 1}], [0]", "loader-output", "its lines are not one line number"),
    ("return [{'a': 1}, {}], [1]", "loader-output", "its lines are not one line number"),
    ("return {'a': 1}", "loader-output", "a records loader returns (a list, its lines)"),
])
def test_what_a_plugin_breaks_rejects_the_document_never_the_run(install, tmp_path, body,
                                                                  code, where):
    module = install(f'''
        from flarespec.loaders import register_loader

        @register_loader("toy", records=True)
        def load(data, options):
            {body}
        ''')
    with pytest.raises(LoadError) as info:
        load_document("toy", b"", {})
    assert info.value.code == code and where.format(module=module) in info.value.message
    spec = records_spec(tmp_path, "toy", "{type: array}")
    report = run(tmp_path, spec, "rows.toy", b"")
    assert [v.rule for v in report.violations] == [f"toy.rows.{code}"]


def test_a_shaped_plugin_receives_the_documents_shape(install, tmp_path):
    install('''
        from flarespec.loaders import register_loader

        @register_loader("toy", shaped=True)
        def load(data, options, shape=None):
            return {"members": sorted((shape or {}).get("members", {}))}
        ''')
    spec = records_spec(tmp_path, "toy", "{type: object, members: {members: array, b: any, "
                                          "a: {type: any, optional: true}}}")
    report = run(tmp_path, spec, "doc.toy", b"")
    assert [v.message for v in report.violations] == ["required member 'b' is missing"]
    assert get_loader("toy")(b"", {}) == {"members": []}  # no spec, no shape


def test_flarespec_path_as_a_plugin(install, tmp_path):
    install(TOY)
    path = tmp_path / "rows.txt"
    path.write_bytes(b"a = 1\nb = 2\n")
    result = cli("path", "$[?@.value > 1].name", path, "--as", "toy")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == ["b"]
    result = cli("path", "$", path, "--as", "yaml")
    assert result.exit_code == 2
    assert "unknown loader 'yaml'" in result.stderr and "toy (plug-in)" in result.stderr
