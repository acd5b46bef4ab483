"""Issue 23 item 9: every document option is checked, when the spec loads, against what its
loader declares beside it (loaders/options.py): an option the loader does not take
(``data_jsn: true`` was silently ignored) or a value it cannot (``head_bytes:
1000000000000`` was a MemoryError, ``-1`` and ``lots`` a ValueError, once a packet was
validated) is ``spec.document-option`` at the option's file:line:column."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from flarespec.engine.evaluate import evaluate
from flarespec.loaders import KNOWN_LOADERS, Option, register_loader
from flarespec.loaders.limits import MAX_HEAD_BYTES
from flarespec.loaders.options import ENGINE_LOADERS, declared_options, option_problems
from flarespec.loaders.registry import FORMATS, LOADERS
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

SPEC = """\
flarespec: 1
id: toy/case
title: Toy case
documents:
  doc: {loader: json, entry: true}
  blob:
    loader: %s
    path: blob.bin
    options: {%s}
rules:
  - id: toy.blob
    description: The blob is there.
    given: "blob:$"
    assert: {present: true}
"""  # the option is on line 9, from column 15


def compile_case(tmp_path, loader: str, options: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "case.yaml").write_text(SPEC % (loader, options))
    library = SpecLibrary([tmp_path])
    return compile_spec(resolve(library.get("toy/case"), library))


def issues(tmp_path, loader: str, options: str) -> list[tuple[int, int, str, str]]:
    with pytest.raises(SpecInvalid) as caught:
        compile_case(tmp_path, loader, options)
    for issue in caught.value.issues:
        assert str(issue).startswith(f"{tmp_path / 'case.yaml'}:{issue.mark.line}:"
                                     f"{issue.mark.column}: ")
    return [(i.mark.line, i.mark.column, i.code, i.message) for i in caught.value.issues]


@pytest.mark.parametrize("value, shown", [("1000000000000", "1000000000000"), ("-1", "-1"),
                                          ("lots", '"lots"'), ("true", "true"),
                                          (str(MAX_HEAD_BYTES + 1), str(MAX_HEAD_BYTES + 1))])
def test_head_bytes_out_of_bounds_is_refused_at_its_line(tmp_path, value, shown):
    assert issues(tmp_path, "bytes", f"head_bytes: {value}") == [
        (9, 15, "spec.document-option", f"head_bytes must be a whole number of bytes from 0 "
                                        f"to {MAX_HEAD_BYTES}; got {shown}")]


@pytest.mark.parametrize("value", [0, 64, MAX_HEAD_BYTES])
def test_head_bytes_within_bounds_reads_that_head(tmp_path, value):
    spec = compile_case(tmp_path / "spec", "bytes", f"head_bytes: {value}")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "doc.json").write_text("{}")
    (tmp_path / "docs" / "blob.bin").write_bytes(b"x" * (MAX_HEAD_BYTES + 5))
    report = evaluate(spec, tmp_path / "docs" / "doc.json")
    assert report.violations == []


def test_a_misspelt_option_is_refused_with_a_suggestion(tmp_path):
    assert issues(tmp_path, "sse", "data_jsn: true") == [
        (9, 15, "spec.document-option", "a sse document has no option 'data_jsn' (did you "
                                        "mean 'data_json'?); its options: max_mib, data_json, "
                                        "terminator")]


@pytest.mark.parametrize("loader, options, message", [
    ("sse", "data_json: 'yes'", 'data_json must be true or false; got "yes"'),
    ("sse", "terminator: 5", "terminator must be a string; got 5"),
    ("json", "head_bytes: 64", "a json document has no option 'head_bytes'; its options: "
                               "max_mib"),
    ("text", "data_json: true", "a text document has no option 'data_json'; its options: "
                                "max_mib"),
    ("directory", "x: 1", "a directory document has no option 'x'; its options: none"),
])
def test_an_option_its_loader_does_not_take_is_refused(tmp_path, loader, options, message):
    [(line, column, code, found)] = issues(tmp_path, loader, options)
    assert (line, column, code) == (9, 15, "spec.document-option")
    assert found == message


def test_spec_lint_names_the_option_and_exits_2(tmp_path):
    (tmp_path / "case.yaml").write_text(SPEC % ("bytes", "head_bytes: lots"))
    result = CliRunner().invoke(main, ["spec", "lint", str(tmp_path / "case.yaml")])
    assert result.exit_code == 2
    assert (f"{tmp_path / 'case.yaml'}:9:15: head_bytes must be a whole number of bytes from 0 "
            f"to {MAX_HEAD_BYTES}; got \"lots\" [spec.document-option]") in result.output
    assert "Traceback" not in result.output


def test_flarespec_path_checks_its_options_alike(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"a": 1}))
    result = CliRunner().invoke(main, ["path", "$.a", str(tmp_path / "a.json"),
                                       "-o", "max_mib=0"])
    assert result.exit_code == 2
    assert "max_mib must be a whole number of MiB from 1 to 256; got 0" in result.output
    result = CliRunner().invoke(main, ["path", "$.a", str(tmp_path / "a.json"),
                                       "-o", "data_json=true"])
    assert result.exit_code == 2 and "a json document has no option 'data_json'" in \
        result.output


def test_every_loader_declares_its_options():
    """Each built-in format and the engine's own loaders declare what they take; a format
    read whole takes max_mib first."""
    for name in KNOWN_LOADERS | set(ENGINE_LOADERS):
        declared = declared_options(name)
        assert declared is not None, name
        assert all(isinstance(option, Option) for option in declared)
        if name not in ENGINE_LOADERS:
            assert declared[0].name == "max_mib"
    assert [o.name for o in declared_options("sse")] == ["max_mib", "data_json", "terminator"]
    assert [o.name for o in declared_options("bytes")] == ["head_bytes"]
    assert declared_options("nowhere") is None and option_problems("nowhere", {"x": 1}) == []


def test_a_plugin_declares_its_options_beside_its_function():
    @register_loader("toy-options", options=(Option("sep", "a string", lambda v: isinstance(
        v, str), {"type": "string"}, "the separator"),))
    def load_toy(data: bytes, options: dict):
        return data.decode().split(options.get("sep", ","))
    try:
        assert option_problems("toy-options", {"sep": ";", "max_mib": 2}) == []
        assert option_problems("toy-options", {"sep": 1}) == [
            ("sep", "sep must be a string; got 1")]
        assert option_problems("toy-options", {"sepp": ";"})[0][1] == (
            "a toy-options document has no option 'sepp' (did you mean 'sep'?); its options: "
            "max_mib, sep")
    finally:
        FORMATS.pop("toy-options", None)
        LOADERS.pop("toy-options", None)
