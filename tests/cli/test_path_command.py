"""`flarespec path QUERY FILE`: what a rule's given selects from a file, as JSON on stdout."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from cli_run import run

from flarespec.engine.paths import CompiledJsonPath
from flarespec.loaders.by_name import load_file

DOCUMENT = {"groups": [{"id": "a", "kind": "warmup", "n": 1},
                       {"id": "b", "kind": "timed", "n": 2.5}], "name": "x y"}


@pytest.fixture
def document(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOCUMENT))
    return path


def printed(result) -> list:
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return json.loads(result.stdout)


@pytest.mark.parametrize("query, expected", [
    ("$", [DOCUMENT]),
    ("$.groups[*].id", ["a", "b"]),
    ("$.groups[?@.kind == 'warmup'].id", ["a"]),
    ('$.groups[?(@.n > 1)].id', ["b"]),
    ("$..id", ["a", "b"]),
    ("$.groups[-1:].n", [2.5]),
    ("$.missing", []),
])
def test_prints_the_selected_values_as_a_json_array(document, query, expected):
    assert printed(run("path", query, document)) == expected


def test_the_values_are_what_the_engine_selects(document):
    query = "$.groups[*]['id','n']"
    assert printed(run("path", query, document)) == \
        CompiledJsonPath(query).values(load_file(str(document), "json"))


def test_locations(document):
    assert printed(run("path", "--locations", "$..['id','kind']", document)) == [
        {"location": "$.groups[0].id", "value": "a"},
        {"location": "$.groups[0].kind", "value": "warmup"},
        {"location": "$.groups[1].id", "value": "b"},
        {"location": "$.groups[1].kind", "value": "timed"}]


def test_prometheus_numbers_print_exactly(tmp_path):
    metrics = tmp_path / "m.prom"
    metrics.write_text("# TYPE a gauge\na 0.1\nb 12345678901234567890.000000001\nc 7\n"
                       "d NaN\n")
    assert load_file(str(metrics), "prometheus")["unlabelled"]["a"] == [Decimal("0.1")]
    result = run("path", "$.samples[*].value", metrics)
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["[", "0.1,", "12345678901234567890.000000001,", "7,",
                                     '"NaN"', "]"]
    assert json.loads(result.stdout, parse_float=Decimal) == [
        Decimal("0.1"), Decimal("12345678901234567890.000000001"), 7, "NaN"]


def test_sse_with_loader_options(tmp_path):
    stream = tmp_path / "r.sse"
    stream.write_text('data: {"t": "a"}\n\ndata: {"t": "b"}\n\ndata: [DONE]\n\n')
    assert printed(run("path", "$.events[*].json.t", stream, "-o", "data_json=true",
                       "-o", "terminator=[DONE]")) == ["a", "b"]
    assert printed(run("path", "$.terminated", stream, "-o", "data_json=true",
                       "-o", "terminator=[DONE]")) == [True]


def test_as_overrides_the_extension(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text('{"a": 1}')
    assert printed(run("path", "$.a", text, "--as", "json")) == [1]
    assert printed(run("path", "$.text", text, "--as", "text")) == ['{"a": 1}']


def refused(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    return result.stderr


def test_an_unknown_extension_is_a_clear_error(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("{}")
    message = refused(run("path", "$", text))
    assert "cannot tell how to load" in message and "'.txt' names no loader" in message
    assert "--as json|jsonl|csv|sse|prometheus|text" in message


@pytest.mark.parametrize("query, named", [
    ("$[?match(@.id, 'a')]", "function extension match() is not supported by flarespec's "
                             "JSONPath"),
    ("$[?@.id =~ 'a']", "regex operator '=~'"),
    ("$.groups[?kind == 'warmup']", "write @.kind, not the bare name kind"),
    ("$[01]", "an index 01 has a leading zero"),
    ("groups", "a JSONPath starts with '$'"),
])
def test_a_refused_query_exits_2_with_the_lint_message(document, query, named):
    message = refused(run("path", query, document))
    assert named in message and message.rstrip().endswith("[spec.path-syntax]")


def test_the_query_is_refused_before_the_file_is_read(tmp_path):
    assert "leading zero" in refused(run("path", "$[01]", tmp_path / "absent.json"))


@pytest.mark.parametrize("content, named", [
    (b'{"a": 1, "a": 2}', "duplicate"),
    (b'{"a": ', "invalid JSON"),
    (b"\xff", "UTF-8"),
])
def test_a_file_that_does_not_load_exits_2_with_the_loader_message(tmp_path, content, named):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    message = refused(run("path", "$", path))
    assert str(path) in message and named in message


def test_a_missing_file(tmp_path):
    assert "does not exist" in refused(run("path", "$", tmp_path / "absent.json"))


def test_a_bad_option_is_a_usage_error(document):
    result = run("path", "$", document, "-o", "data_json")
    assert result.exit_code == 2 and "is not KEY=VALUE" in result.output


def test_deep_documents_print(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 800 + "]" * 800)
    result = run("path", "$", path)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.replace("\n", "").replace(" ", "")) == \
        json.loads("[" + "[" * 800 + "]" * 800 + "]")


def test_help_teaches_with_an_example():
    result = run("path", "--help")
    assert result.exit_code == 0
    assert "flarespec path '$.orders[?@.status == \"open\"].id' orders.json" in result.output
    assert "path " in run("--help").output
