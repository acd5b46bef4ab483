"""Documents parsed from a string member of another (``from``, engine/documents.py): a raw
JSON response or an SSE body kept as text inside an export is read as a document with its
own loader and shape, located in its container's file at the member's place, never a file
of its own (not in report.files, bound through its container's digest)."""

from __future__ import annotations

import copy
import hashlib
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from flarespec.engine.documents import DocumentStore
from flarespec.engine.evaluate import Evaluation
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

SPEC = """\
flarespec: 1
id: toy/embedded
title: Documents inside strings
shapes:
  export:
    type: object
    members:
      records:
        type: array
        items: {type: object, members: {id: string, raw: {optional: true}}}
      stream: string
  response: {type: object, members: {usage: {type: object, members: {tokens: integer}}}}
documents:
  export: {loader: json, entry: true, rule: toy.export, shape: export}
  response:
    loader: json
    each: record
    from: "record:$.raw"
    rule: toy.response
    shape: response
  stream: {loader: sse, from: "export:$.stream", options: {data_json: true}, rule: toy.stream}
iterations:
  record: {over: "export:$.records[*]", label: "{record.id}"}
rules:
  - id: toy.response.tokens
    description: Every response used a token.
    for_each: record
    given: "response:$.usage.tokens"
    assert: {range: {min: 1}}
  - id: toy.stream.numbers
    description: Every event of the stream carries a number.
    given: "stream:$.events[*].json.n"
    assert: {type: integer}
"""


def raw(value) -> str:
    return json.dumps(value, indent=1)


EXPORT = {
    "records": [{"id": "r0", "raw": raw({"usage": {"tokens": 3}})},
                {"id": "r1", "raw": raw({"usage": {"tokens": 5}})}],
    "stream": 'data: {"n": 1}\n\ndata: {"n": 2}\n\n',
}


def spec_of(tmp_path, text: str = SPEC):
    directory = tmp_path / "spec"
    directory.mkdir(exist_ok=True)
    (directory / "case.yaml").write_text(text)
    library = SpecLibrary([directory])
    return compile_spec(resolve(library.get("toy/embedded"), library))


def export_file(tmp_path: Path, change=None, *, text: str | None = None) -> Path:
    export = copy.deepcopy(EXPORT)
    if change:
        change(export)
    path = tmp_path / "run" / "export.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text if text is not None else json.dumps(export, indent=1))
    return path


def run(tmp_path, change=None, *, spec_text: str = SPEC, streaming: bool = True):
    return Evaluation(spec_of(tmp_path, spec_text), export_file(tmp_path, change),
                      streaming=streaming).run()


def found(report) -> list[tuple]:
    return [(v.rule, v.file, v.location) for v in report.violations]


# --------------------------------------------------------------------------- passing

def test_strings_holding_json_and_an_event_stream_are_read_as_documents(tmp_path):
    report = run(tmp_path)
    assert report.ok, found(report)
    # no file of its own: only the container is bound, by its digest
    data = (tmp_path / "run" / "export.json").read_bytes()
    assert report.files == {"export.json": hashlib.sha256(data).hexdigest()}


def test_a_rule_failing_inside_a_string_names_the_container_and_continues_the_member(
        tmp_path):
    def zero(export):
        export["records"][1]["raw"] = raw({"usage": {"tokens": 0}})
        export["stream"] = 'data: {"n": 1}\n\ndata: {"n": "two"}\n\n'
    report = run(tmp_path, zero)
    assert found(report) == [
        ("toy.response.tokens", "export.json", "$.records[1].raw.usage.tokens"),
        ("toy.stream.numbers", "export.json", "$.stream.events[1].json.n")]
    assert report.violations[0].binding == "r1"


def test_a_defaulted_pointer_into_a_string_names_the_place_it_looked(tmp_path):
    text = SPEC + textwrap.indent(textwrap.dedent("""\
        - id: toy.response.budget
          description: A response used its budget, 3 unless it says otherwise.
          for_each: record
          given: "response:$.usage.tokens"
          assert: {equals: {ref: "response:/usage/budget", default: 3}}
        """), "  ")
    report = run(tmp_path, spec_text=text)
    assert found(report) == [("toy.response.budget", "export.json",
                              "$.records[1].raw.usage.tokens")]
    assert report.violations[0].expected_from == {
        "file": "export.json", "location": "$.records[1].raw.usage.budget"}


# --------------------------------------------------------------------------- failures

def test_broken_json_in_a_string_is_the_documents_invalid_json_at_the_member(tmp_path):
    def broken(export):
        export["records"][1]["raw"] = '{"usage":\n {"tokens": 3,,}}'
    report = run(tmp_path, broken)
    assert found(report) == [("toy.response.invalid-json", "export.json", "$.records[1].raw")]
    message = report.violations[0].message
    assert "the string at $.records[1].raw, read as json (line 2 of the string)" in message
    assert "invalid JSON" in message and "column" in message


def test_a_duplicate_key_inside_the_string_is_located_inside_the_member(tmp_path):
    def duplicate(export):
        export["records"][0]["raw"] = '{"usage": {"tokens": 1, "tokens": 2}}'
    report = run(tmp_path, duplicate)
    assert found(report) == [("toy.response.duplicate-key", "export.json",
                              "$.records[0].raw.usage")]


def test_a_member_that_is_no_string_is_from_not_string(tmp_path):
    def parsed_already(export):
        export["records"][0]["raw"] = {"usage": {"tokens": 3}}
    report = run(tmp_path, parsed_already)
    assert found(report) == [("toy.response.from-not-string", "export.json",
                              "$.records[0].raw")]
    violation = report.violations[0]
    assert (violation.expected, violation.actual) == ("string", "object")
    assert "parsed from a string, but this is object" in violation.message


def test_a_member_that_is_not_there_is_from_unresolved(tmp_path):
    report = run(tmp_path, lambda export: export["records"][1].pop("raw"))
    assert [v.rule for v in report.violations] == ["toy.response.from-unresolved"]
    assert report.violations[0].file == "export.json"
    assert "matched nothing" in report.violations[0].message
    # the rules reading it are skipped for that binding only
    assert report.violations[0].binding == "r1"


def test_a_shape_violation_inside_the_string_is_the_documents_shape_rule(tmp_path):
    def untyped(export):
        export["records"][0]["raw"] = raw({"usage": {"tokens": "3"}})
    report = run(tmp_path, untyped)
    assert found(report) == [("toy.response.shape", "export.json",
                              "$.records[0].raw.usage.tokens")]


def test_a_broken_event_stream_in_a_string_is_the_stream_documents_violation(tmp_path):
    report = run(tmp_path, lambda export: export.__setitem__("stream", "data: {n\n\n"))
    assert found(report) == [("toy.stream.invalid-json", "export.json", "$.stream")]
    assert "(line 1 of the string)" in report.violations[0].message


def test_a_lone_surrogate_has_no_utf8_bytes_to_parse(tmp_path):
    text = json.dumps(EXPORT).replace('"r1", "raw": "', '"r1", "raw": "\\ud800')
    path = export_file(tmp_path, text=text)
    report = Evaluation(spec_of(tmp_path), path).run()
    assert found(report) == [("toy.response.invalid-utf8", "export.json", "$.records[1].raw")]
    assert "lone surrogate (U+D800 at character 0)" in report.violations[0].message


def test_a_broken_container_is_its_own_violation_and_nothing_else(tmp_path):
    path = export_file(tmp_path, text='{"records": [')
    report = Evaluation(spec_of(tmp_path), path).run()
    assert [v.rule for v in report.violations] == ["toy.export.invalid-json"]


# --------------------------------------------------------------------------- lines

JSONL_SPEC = """\
flarespec: 1
id: toy/embedded
title: Documents inside the strings of a jsonl file
shapes:
  response: {type: object, members: {usage: {type: object, members: {tokens: integer}}}}
documents:
  index: {loader: json, entry: true, rule: toy.index}
  log: {loader: jsonl, path: log.jsonl, rule: toy.log}
  response:
    loader: json
    each: record
    from: "record:$.raw"
    rule: toy.response
    shape: response
iterations:
  record: {over: "log:$[*]"}
rules:
  - id: toy.response.tokens
    description: Every response used a token.
    for_each: record
    given: "response:$.usage.tokens"
    assert: {range: {min: 1}}
"""


def test_the_violation_names_the_containers_line_where_its_loader_knows_lines(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    (root / "index.json").write_text("{}")
    lines = [{"raw": raw({"usage": {"tokens": 1}})}, {"raw": "{"},
             {"raw": raw({"usage": {"tokens": 0}})}]
    (root / "log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = Evaluation(spec_of(tmp_path, JSONL_SPEC), root / "index.json").run()
    assert [(v.rule, v.file, v.location, v.line) for v in report.violations] == [
        ("toy.response.invalid-json", "log.jsonl", "$[1].raw", 2),
        ("toy.response.tokens", "log.jsonl", "$[2].raw.usage.tokens", 3)]


# --------------------------------------------------------------------------- streaming

@pytest.mark.parametrize("change", [
    None,
    lambda e: e["records"][1].__setitem__("raw", "{"),
    lambda e: e["records"][0].__setitem__("raw", 7),
    lambda e: e["records"][0].__setitem__("raw", raw({"usage": {"tokens": 0}})),
], ids=["valid", "broken", "not a string", "failing"])
def test_streamed_and_rule_by_rule_reports_are_the_same(tmp_path, change):
    streamed, one_by_one = (run(tmp_path, change, streaming=streaming)
                            for streaming in (True, False))
    assert [v.as_dict() for v in streamed.violations] == \
        [v.as_dict() for v in one_by_one.violations]
    assert streamed.files == one_by_one.files and streamed.ok == one_by_one.ok


def test_a_released_document_is_parsed_again_from_its_string(tmp_path, monkeypatch):
    """A rule after the stream (reading the previous record's response) asks for released
    documents: they are parsed again from their strings, with the same verdicts."""
    text = SPEC + textwrap.indent(textwrap.dedent("""\
        - id: toy.response.previous
          description: A response used no more tokens than the previous one plus ten.
          for_each: record
          severity: warning
          given: "response:$.usage.tokens"
          assert: {equals: {ref: "response:$.usage.tokens", at: {record: previous}}}
        """), "  ")
    released = []
    release = DocumentStore.release_element

    def counting(self, names):
        release(self, names)
        released.extend(key for key, loaded in self._documents.items()
                        if key[0] == "response" and loaded.released)
    monkeypatch.setattr(DocumentStore, "release_element", counting)
    report = run(tmp_path, spec_text=text)
    assert released, "the responses are released element by element"
    assert report.ok
    # r0 has no previous record; r1 used 5 tokens, r0 3: read where r0's string is
    assert [(w.rule, w.binding, w.location) for w in report.warnings] == [
        ("toy.response.previous", "r0", None),
        ("toy.response.previous", "r1", "$.records[1].raw.usage.tokens")]
    assert report.warnings[1].expected_from == {
        "file": "export.json", "location": "$.records[0].raw.usage.tokens"}
    one_by_one = run(tmp_path, spec_text=text, streaming=False)
    assert [w.as_dict() for w in report.warnings] == \
        [w.as_dict() for w in one_by_one.warnings]


# --------------------------------------------------------------------------- the spec

def issues(tmp_path, text: str) -> list[tuple[str, str]]:
    with pytest.raises(SpecInvalid) as raised:
        spec_of(tmp_path, text)
    return [(issue.code, issue.message) for issue in raised.value.issues]


def test_from_excludes_path_path_from_and_entry(tmp_path):
    text = SPEC.replace('from: "record:$.raw"', 'from: "record:$.raw"\n    path: x.json')
    assert [code for code, _ in issues(tmp_path, text)] == ["spec.shape"]


def test_a_document_parsed_from_itself_is_a_cycle_not_a_crash(tmp_path):
    text = SPEC.replace('from: "export:$.stream"', 'from: "stream:$.events[0].data"')
    assert issues(tmp_path, text) == [
        ("spec.document-cycle", "document 'stream' is read to find itself: stream -> stream")]


def test_documents_reading_each_other_are_a_cycle(tmp_path):
    text = SPEC.replace('from: "export:$.stream"', 'from: "other:$.stream"').replace(
        "  stream: {loader: sse,", '  other: {loader: json, from: "stream:$.events[0].data"}\n'
        "  stream: {loader: sse,")
    assert issues(tmp_path, text) == [
        ("spec.document-cycle", "document 'other' is read to find itself: other -> stream "
                                "-> other")]


def test_a_path_from_cycle_is_refused_too(tmp_path):
    text = SPEC.replace("  stream: {loader: sse,", "  other: {loader: json, path_from: "
                        "\"other:$.x\"}\n  stream: {loader: sse,")
    assert issues(tmp_path, text) == [
        ("spec.document-cycle", "document 'other' is read to find itself: other -> other")]


def test_a_bytes_document_cannot_be_parsed_from_a_string(tmp_path):
    text = SPEC.replace("{loader: sse, from:", "{loader: bytes, from:").replace(
        ", options: {data_json: true}", "")
    assert [code for code, _ in issues(tmp_path, text)] == ["spec.document-option"]


@pytest.mark.parametrize("meta", ["size", "sha256", "path"])
def test_file_metadata_of_a_document_parsed_from_a_string_is_refused(tmp_path, meta):
    text = SPEC + textwrap.indent(textwrap.dedent(f"""\
        - id: toy.stream.meta
          description: The stream's {meta}.
          given: "stream:@{meta}"
          assert: {{present: true}}
        """), "  ")
    found = issues(tmp_path, text)
    assert [code for code, _ in found] == ["spec.path-syntax"]
    assert "'stream' is parsed from a string (from)" in found[0][1]


def test_a_manifest_kind_cannot_name_a_document_parsed_from_a_string(tmp_path):
    text = SPEC + textwrap.indent(textwrap.dedent("""\
        - id: toy.export.manifest
          description: The export lists its files.
          given: "export:$.records[0]"
          assert: {manifest_lists_all: [export, stream]}
        """), "  ")
    found = issues(tmp_path, text)
    assert [code for code, _ in found] == ["spec.kind-argument"]
    assert "'stream': parsed from a string (from), not a file" in found[0][1]


# --------------------------------------------------------------------------- the CLI

def test_validate_pair_through_the_cli(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    good = export_file(tmp_path)
    out = tmp_path / "receipt.json"
    args = ["validate-pair", "--spec", str(spec), "--baseline", str(good), "--candidate",
            str(good), "--output", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    bad_root = tmp_path / "bad"
    bad_root.mkdir()
    bad = bad_root / "export.json"
    broken = copy.deepcopy(EXPORT)
    broken["records"][0]["raw"] = "{nope"
    bad.write_text(json.dumps(broken))
    args[args.index("--candidate") + 1] = str(bad)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    receipt = json.loads(out.read_text())
    text = json.dumps(receipt)
    assert "toy.response.invalid-json" in text and "$.records[0].raw" in text


def test_spec_lint_checks_the_from_reference_against_the_containers_shape(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace('from: "record:$.raw"', 'from: "record:$.body"'))
    result = CliRunner().invoke(main, ["spec", "lint", str(spec), "--root", str(tmp_path)])
    assert "'record:$.body' reads member 'body' of $, which its shape does not declare" \
        in result.output
    assert "[spec.undeclared-member]" in result.output
