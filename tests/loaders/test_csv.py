"""The `csv` loader: RFC 4180 through the csv module, a header required, rows as objects;
numbers only where the document's shape says so, converted as the JSON loader reads them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_run import run as cli
from records_specs import found, records_spec, run

from flarespec.loaders import LoadError, get_loader, load_document, locate_line
from flarespec.loaders import limits
from flarespec.loaders.csv_loader import load_csv

AIPERF = Path(__file__).parents[2] / "fixtures" / "aiperf" / "run1" / "profile_export_aiperf.csv"


def shape(**columns) -> dict:
    """The expanded shape node of a table whose named columns have these types."""
    return {"type": "array", "items": {"type": "object", "members": {
        name: {"type": declared} for name, declared in columns.items()}}}


def rows(data: bytes, node: dict | None = None) -> list:
    return load_csv(data, shape=node)[0]


def refused(data: bytes) -> LoadError:
    with pytest.raises(LoadError) as info:
        load_csv(data)
    return info.value


# --------------------------------------------------------------------------- the table

def test_rows_are_objects_keyed_by_the_header_and_cells_are_text():
    data = b'id,n,note\r\na,1,"x, y"\r\nb,2,"say ""hi"""\r\n'
    assert rows(data) == [{"id": "a", "n": "1", "note": "x, y"},
                          {"id": "b", "n": "2", "note": 'say "hi"'}]
    assert get_loader("csv")(data, {}) == rows(data)  # no shape: text


@pytest.mark.parametrize("data", [
    b"a,b\r\n1,2\r\n3,4\r\n", b"a,b\n1,2\n3,4\n", b"a,b\r1,2\r3,4\r", b"a,b\n1,2\n3,4",
])
def test_crlf_lf_cr_and_no_final_line_end(data):
    records, lines = load_csv(data)
    assert records == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}] and list(lines) == [2, 3]


def test_a_record_is_on_the_line_it_begins_on_even_after_a_quoted_line_end():
    records, lines = load_csv(b'a,b\n"x\ny\r\nz",1\n2,3\n')
    assert records[0] == {"a": "x\ny\r\nz", "b": "1"} and list(lines) == [2, 5]


def test_a_blank_line_is_one_empty_field():
    assert rows(b"a\n1\n\n2\n") == [{"a": "1"}, {"a": ""}, {"a": "2"}]
    error = refused(b"a,b\n1,2\n\n3,4\n")
    assert (error.code, error.line, error.location) == ("ragged-row", 3, "$[1]")
    assert error.message == "the record on line 3 is blank; the header has 2 columns"


def test_a_ragged_row_names_its_line():
    error = refused(b'a,b,c\n1,2,3\n"4\n4",5\n')
    assert (error.code, error.line, error.location) == ("ragged-row", 3, "$[1]")
    assert error.message == "the record on line 3 has 2 fields; the header has 3 columns"
    assert refused(b"a,b\n1,2,3\n").message == \
        "the record on line 2 has 3 fields; the header has 2 columns"


@pytest.mark.parametrize("data, message", [
    (b"", "CSV text is empty: a CSV document starts with a header naming its columns"),
    (b"\n1,2\n", "CSV text starts with a blank line: a CSV document starts with a header "
                 "naming its columns"),
])
def test_a_header_is_required(data, message):
    error = refused(data)
    assert (error.code, error.line, error.message) == ("no-header", 1, message)


def test_a_header_name_twice_is_an_error():
    error = refused(b"id,n,id\n1,2,3\n")
    assert (error.code, error.line) == ("duplicate-column", 1)
    assert error.message == "the header names column 'id' twice (columns 1 and 3)"


@pytest.mark.parametrize("data, line, why", [
    (b'a,b\n1,x"y\n', 2, "a quote inside a field that is not quoted"),
    (b'a,b\n1, "y"\n', 2, "a quote inside a field that is not quoted"),
    (b'a,b\n1,"y"z\n', 2, "text follows a quoted field's closing quote"),
    (b'a,b\n1,2\r\n3,"open\n\n', 3, "a quoted field is not closed"),
    (b'"a,b\n', 1, "a quoted field is not closed"),
])
def test_what_rfc_4180_refuses_the_loader_refuses_with_its_line(data, line, why):
    error = refused(data)
    assert (error.code, error.line) == ("invalid-csv", line)
    assert error.message.startswith(f"CSV text is not RFC 4180 CSV: {why}")


def test_encoding_is_strict_utf8_without_a_bom():
    error = refused(b"a\nok\n\xff\n")
    assert (error.code, error.line) == ("invalid-utf8", 3)
    error = refused(b"\xef\xbb\xbfa\n1\n")
    assert (error.code, error.line) == ("bom", 1)
    assert rows("name\ncaf\u00e9\n".encode()) == [{"name": "caf\u00e9"}]


def test_a_field_longer_than_the_csv_modules_default_limit(tmp_path):
    long = "x" * 200_000  # csv.field_size_limit() is 131072 by default
    assert rows(f"a\n{long}\n".encode()) == [{"a": long}]
    import csv
    assert csv.field_size_limit() == 131072  # the module's setting is left as it was


def test_records_beyond_the_limit_are_refused(monkeypatch):
    from flarespec.loaders import csv_loader

    monkeypatch.setattr(csv_loader, "MAX_CSV_ROWS", 3)
    assert len(rows(b"a\n1\n2\n3\n")) == 3
    error = refused(b"a\n1\n2\n3\n4\n")
    assert (error.code, error.line) == ("too-large", 5)
    assert limits.MAX_CSV_ROWS == 1 << 20


# --------------------------------------------------------------------------- numbers by shape

def test_numbers_only_where_the_shape_says_so():
    data = b"id,count,ttft,label\nA7,12,0.25,3\nB8,-3,1e3,4\n"
    node = shape(id="string", count="integer", ttft="number", label="string")
    assert rows(data, node) == [{"id": "A7", "count": 12, "ttft": 0.25, "label": "3"},
                                {"id": "B8", "count": -3, "ttft": 1000.0, "label": "4"}]
    assert rows(data, None)[0]["count"] == "12"


@pytest.mark.parametrize("cell", ["0", "-0", "17", "9007199254740993", "1" * 400, "0.1",
                                  "-2.5e-3", "1E+2", "3.0", "6.02214076e23", "1e-400"])
def test_a_number_is_the_value_the_json_loader_gives_the_same_digits(cell):
    (row,) = rows(f"v\n{cell}\n".encode(), shape(v="number"))
    expected = json.loads(cell)
    assert type(row["v"]) is type(expected) and repr(row["v"]) == repr(expected)


@pytest.mark.parametrize("cell", ["", " 1", "1 ", "+1", "01", "1_000", "1,5", "0x10", "\uff11",
                                  "\u0661\u0662", "NaN", "nan", "Infinity", "inf", "1e999",
                                  ".5", "5.", "1e", "--1", "9" * 5000])
def test_a_cell_that_is_no_json_number_stays_text(cell):
    quoted = cell.replace('"', '""')
    (row,) = rows(f'v,w\n"{quoted}",0\n'.encode(), shape(v="number", w="number"))
    assert row == {"v": cell, "w": 0}


@pytest.mark.parametrize("cell", ["1.0", "1e2", "2.5"])
def test_an_integer_column_takes_integer_spellings_only(cell):
    (row,) = rows(f"v\n{cell}\n".encode(), shape(v="integer"))
    assert row["v"] == cell  # as the JSON loader: 1.0 is no integer


@pytest.mark.parametrize("declared, converted", [
    (["integer", "null"], True), (["number", "boolean"], True), (["string", "integer"], False),
    ("any", False), ("string", False), ("boolean", False),
])
def test_a_column_converts_when_its_types_allow_a_number_and_not_text(declared, converted):
    (row,) = rows(b"v\n7\n", shape(v=declared))
    assert row["v"] == (7 if converted else "7")


def test_values_gives_every_column_not_named_in_members_its_type():
    node = {"type": "array", "items": {"type": "object", "members": {"id": {"type": "string"}},
                                       "values": {"type": "integer"}}}
    assert rows(b"id,a,b\n1,2,3\n", node) == [{"id": "1", "a": 2, "b": 3}]


# --------------------------------------------------------------------------- through the engine

TABLE = ("{type: array, items: {type: object, closed: true, "
         "members: {id: string, count: integer, ttft: number}}}")
TTFT_RULE = """
- id: toy.rows.ttft
  description: Every ttft is at least 0.
  for_each: row
  given: "row:$.ttft"
  assert: {range: {min: 0}}
"""


def test_a_cell_that_does_not_convert_is_a_shape_violation_at_its_line_and_column(tmp_path):
    spec = records_spec(tmp_path, "csv", TABLE, TTFT_RULE)
    data = b'id,count,ttft\r\na,1,0.5\r\n"b\nb",2,2\r\nc,x,1\r\nd,3.0,1e999\r\n'
    report = run(tmp_path, spec, "rows.csv", data)
    assert found(report) == [("toy.rows.shape", "rows.csv", "$[2].count", 5),
                             ("toy.rows.shape", "rows.csv", "$[3].count", 6),
                             ("toy.rows.shape", "rows.csv", "$[3].ttft", 6)]
    assert [(v.message, v.actual) for v in report.violations] == [
        ("is string, expected integer", 'string "x"'),
        ("is string, expected integer", 'string "3.0"'),
        ("is string, expected number", 'string "1e999"')]


def test_rules_read_the_converted_numbers_and_name_the_records_line(tmp_path):
    spec = records_spec(tmp_path, "csv", TABLE, TTFT_RULE)
    data = b'id,count,ttft\na,1,0.5\n"b\nb",2,-2\nc,3,1e1\n'
    report = run(tmp_path, spec, "rows.csv", data)
    assert found(report) == [("toy.rows.ttft", "rows.csv", "$[1].ttft", 3)]
    assert report.violations[0].actual == -2


def test_a_load_problem_is_the_documents_rule_with_its_line(tmp_path):
    spec = records_spec(tmp_path, "csv", TABLE, TTFT_RULE)
    report = run(tmp_path, spec, "rows.csv", b"id,count,ttft\na,1,2\nb,2\n")
    assert found(report) == [("toy.rows.ragged-row", "rows.csv", "line 3, $[1]", 3)]


def test_the_receipt_binds_the_files_bytes(tmp_path):
    spec = records_spec(tmp_path, "csv", TABLE, TTFT_RULE)
    data = b"id,count,ttft\r\na,1,0.5\r\n"
    report = run(tmp_path, spec, "rows.csv", data)
    assert report.violations == []
    assert report.files == {"rows.csv": hashlib.sha256(data).hexdigest()}


def test_a_location_in_a_row_is_on_the_line_the_record_begins():
    value, lines = load_document("csv", b'a,b\n"1\n1",2\n3,4\n', {})
    assert locate_line("csv", value, "$[1].b", lines) == 4
    assert locate_line("csv", value, "$[0]", lines) == 2


def test_flarespec_path_reads_csv_cells_as_text(tmp_path):
    path = tmp_path / "table.csv"
    path.write_bytes(b"id,n\na,1\nb,2\n")
    for extra in ((), ("--as", "csv")):
        result = cli("path", "$[*].n", path, *extra)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == ["1", "2"]  # no spec, no shape: text
    path.write_bytes(b"id,id\n")
    result = cli("path", "$", path)
    assert result.exit_code == 2 and "[duplicate-column]" in result.stderr


@pytest.mark.skipif(not AIPERF.exists(), reason="the AIPerf capture is not in this checkout")
def test_the_aiperf_aggregate_csv_is_two_tables_and_refused_at_the_second():
    error = refused(AIPERF.read_bytes())
    assert (error.code, error.line) == ("ragged-row", 12)
    assert error.message == "the record on line 12 is blank; the header has 13 columns"
