"""The `jsonl` loader: one strict JSON value per non-blank line, the document their array;
every problem at the file's line, and a record's violations at its line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_run import run as cli
from records_specs import found, records_spec, run

from flarespec.loaders import LoadError, get_loader, load_document, locate_line, locates_lines
from flarespec.loaders.jsonl import load_jsonl

AIPERF = Path(__file__).parents[2] / "fixtures" / "aiperf" / "run1" / "profile_export.jsonl"
ROWS = "{type: array, items: {type: object, members: {id: string, ttft: number}}}"
TTFT_RULE = """
- id: toy.rows.ttft
  description: Every ttft is at least 0.
  for_each: row
  given: "row:$.ttft"
  assert: {range: {min: 0}}
"""


def refused(data: bytes) -> LoadError:
    with pytest.raises(LoadError) as info:
        load_jsonl(data)
    return info.value


def test_records_and_the_line_each_begins_on():
    data = b'{"a": 1}\r\n\n   \n\t\r\n[2, 3]\n"x"'  # CRLF, blank lines, no final LF
    records, lines = load_jsonl(data)
    assert records == [{"a": 1}, [2, 3], "x"]
    assert list(lines) == [1, 5, 6]
    assert get_loader("jsonl")(data, {}) == records  # the registry's value alone


def test_an_empty_file_and_blank_lines_only_are_the_empty_array():
    for data in (b"", b"\n \n\t\n"):
        records, lines = load_jsonl(data)
        assert records == [] and list(lines) == []


def test_a_lone_cr_is_a_line_end_for_the_count_as_in_every_loader():
    # CR is JSON whitespace inside a record, and a line end for line numbers (loaders/_text.py)
    error = refused(b'{"a":\r1}\n[')
    assert (error.code, error.line) == ("invalid-json", 3)


@pytest.mark.parametrize("data, code, line", [
    (b'{"a": 1}\n\n{"a": }\n', "invalid-json", 3),
    (b'1\n2\n3 4\n', "invalid-json", 3),
    (b'{"a": 1}\n{"a": 1, "a": 2}\n', "duplicate-key", 2),
    (b'{"a": 1}\n\n\n[NaN]\n', "non-json-literal", 4),
    (b'1\n[1e999]\n', "number-out-of-range", 2),
    (b'1\n' + b"9" * 5000 + b"\n", "number-too-long", 2),
    (b'1\n"ok"\n"\xff"\n', "invalid-utf8", 3),
    (b"\xef\xbb\xbf{}\n", "bom", 1),
    (b'{}\n{"a":\n1}\n', "invalid-json", 2),  # a record is one line: no value across two
])
def test_a_broken_line_is_the_strict_json_code_at_the_files_line(data, code, line):
    error = refused(data)
    assert (error.code, error.line) == (code, line)


def test_a_duplicate_key_names_the_object_inside_the_array():
    error = refused(b'{}\n\n{"u": {"x": 1, "x": 2}}\n')
    assert (error.code, error.line, error.location) == ("duplicate-key", 3, "$[1].u")
    assert error.message.startswith("record 1: object at $.u has the key 'x' more than once")


def test_invalid_utf8_is_worded_for_the_whole_file():
    error = refused(b'"ab"\n"\xff"\n')
    assert error.message == ("JSON Lines text is not valid UTF-8: invalid start byte at byte "
                             "offset 6")


def test_the_size_limit_applies_to_the_whole_file():
    data = b"1\n" + b"2" + b" " * 1_200_000 + b"\n"  # 1.2 MB
    assert get_loader("jsonl")(data, {"max_mib": 2}) == [1, 2]
    with pytest.raises(LoadError) as info:
        get_loader("jsonl")(data, {"max_mib": 1})
    assert info.value.code == "too-large" and "JSON Lines text" in info.value.message


def test_a_location_inside_a_record_is_on_its_line():
    value, lines = load_document("jsonl", b'{"a": [1]}\n\n{"a": [2, 3]}\n', {})
    assert locates_lines("jsonl")
    assert locate_line("jsonl", value, "$[1].a[1]", lines) == 3
    assert locate_line("jsonl", value, "$[0]", lines) == 1
    assert locate_line("jsonl", value, "rows:$[*].a", lines) == 1  # a reference's text
    assert locate_line("jsonl", value, "$[7]", lines) is None
    assert locate_line("jsonl", value, "$", lines) is None
    assert locate_line("jsonl", value, "$[1]") is None  # no lines: nothing to tell


def test_a_rules_violation_names_the_records_file_line(tmp_path):
    spec = records_spec(tmp_path, "jsonl", ROWS, TTFT_RULE)
    data = b'{"id": "a", "ttft": 1}\n\n{"id": "b", "ttft": -2}\r\n'
    assert found(run(tmp_path, spec, "rows.jsonl", data)) == [
        ("toy.rows.ttft", "rows.jsonl", "$[1].ttft", 3)]


def test_a_shape_violation_names_the_records_file_line(tmp_path):
    spec = records_spec(tmp_path, "jsonl", ROWS, TTFT_RULE)
    report = run(tmp_path, spec, "rows.jsonl", b'{"id": "a", "ttft": 1}\n \n{"id": "b"}\n')
    assert found(report) == [("toy.rows.shape", "rows.jsonl", "$[1].ttft", 3)]


def test_a_broken_line_is_the_documents_invalid_json_at_file_line(tmp_path):
    spec = records_spec(tmp_path, "jsonl", ROWS, TTFT_RULE)
    report = run(tmp_path, spec, "rows.jsonl", b'{"id": "a", "ttft": 1}\n\n{"id": "b",}\n')
    assert found(report) == [("toy.rows.invalid-json", "rows.jsonl", "line 3", 3)]
    assert report.metric is None


def test_the_receipt_binds_the_files_bytes(tmp_path):
    spec = records_spec(tmp_path, "jsonl", ROWS, TTFT_RULE)
    data = b'{"id": "a", "ttft": 1}\r\n{"id": "b", "ttft": 2}'
    report = run(tmp_path, spec, "rows.jsonl", data)
    assert report.violations == []
    assert report.files == {"rows.jsonl": hashlib.sha256(data).hexdigest()}


def test_flarespec_path_reads_jsonl_by_extension_and_by_name(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"id": "a"}\n\n{"id": "b"}\n')
    for extra in ((), ("--as", "jsonl")):
        result = cli("path", "$[*].id", path, *extra)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == ["a", "b"]
    other = tmp_path / "rows.log"
    other.write_bytes(b'{"id": "a"}\n{"id": \n')
    result = cli("path", "$", other, "--as", "jsonl")
    assert result.exit_code == 2 and "[invalid-json]" in result.stderr and "line 2" in result.stderr


@pytest.mark.skipif(not AIPERF.exists(), reason="the AIPerf capture is not in this checkout")
def test_a_real_aiperf_profile_export():
    data = AIPERF.read_bytes()
    records, lines = load_jsonl(data)
    assert len(records) == data.count(b"\n") == 100
    assert list(lines) == list(range(1, 101))
    assert records == [json.loads(line) for line in data.splitlines()]
