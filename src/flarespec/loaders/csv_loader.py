"""CSV (RFC 4180): a header, then records; the document is an array of objects keyed by it.

The standard library's ``csv`` module splits the records (strict mode: the excel dialect,
``,`` and ``"``, doubled quotes); before it, one regular expression checks the text is RFC
4180's grammar, which the module alone does not hold (it keeps a quote inside an unquoted
field, ``a"b``, and a field's leading blank before its quote, ``a, "b"``). Records end with
CRLF, LF or CR; a field may hold any of them quoted. The first record is the header: every
column has a name, and no name twice. Every other record has as many fields as the header
(a blank line is one empty field: a record of a one-column table, else a ragged row).

Cells are text. A column whose declared shape (the document's ``shape``: ``items`` and its
``members``, or ``values`` for every column) allows ``integer`` or ``number`` and not
``string`` holds numbers: a cell spelt as a JSON number (``-12``, ``0.5``, ``1e3``; no ``+``,
no leading zero, no blank) becomes the value the strict JSON loader gives the same digits
(an integer an ``int``, any other a ``float``; an ``integer`` column takes integers only).
A cell that does not convert stays text, so the document's shape refuses it under
``<document rule>.shape`` at its place (``$[4].count``) and line: every bad cell is
listed, as for a JSON document, and nothing is guessed.
"""

from __future__ import annotations

import csv
import io
import math
import re
from array import array

from ._text import UTF8_BOM, decode_utf8, line_of_char
from .errors import LoadError
from .limits import MAX_CSV_ROWS, MAX_DOCUMENT_BYTES, check_document_size, gc_paused

WHAT = "CSV text"
_FIELD = r'(?:"(?:[^"]|"")*+"|[^",\r\n]*+)'
_RFC_4180 = re.compile(_FIELD + r"(?:(?:,|\r\n?|\n)" + _FIELD + r")*+")
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_CHUNK = 1 << 20  # the text is handed to the csv module a slice of about 1 MiB at a time


@gc_paused
def load_csv(data: bytes, *, limit: int = MAX_DOCUMENT_BYTES, shape: dict | None = None
             ) -> tuple[list, array]:
    """``(rows, lines)``: an object per record after the header (cells converted where
    ``shape`` says numbers), and the file line each record begins on. Raises LoadError."""
    check_document_size(data, WHAT, limit)
    if data.startswith(UTF8_BOM):
        raise LoadError("bom", f"{WHAT} starts with a UTF-8 byte order mark (the first column's "
                               f"name would begin with it)", line=1)
    text = decode_utf8(data, WHAT)
    if '"' in text and _RFC_4180.fullmatch(text) is None:
        raise _not_rfc_4180(text)
    reader = csv.reader(_lines(text), strict=True)
    old_limit = csv.field_size_limit(max(len(text), 1))
    try:
        return _rows(reader, _conversions(shape))
    except csv.Error as problem:  # not expected once the grammar holds
        raise LoadError("invalid-csv", f"{WHAT} is not RFC 4180 CSV: {problem}",
                        line=reader.line_num) from None
    finally:
        csv.field_size_limit(old_limit)


def _rows(reader, conversions) -> tuple[list, array]:
    header = next(reader, None)
    if not header:
        why = "is empty" if header is None else "starts with a blank line"
        raise LoadError("no-header", f"{WHAT} {why}: a CSV document starts with a header "
                                     f"naming its columns", line=1)
    names = _column_names(header)
    converted = [(index, convert) for index, name in enumerate(names)
                 if (convert := conversions(name)) is not None]
    rows: list = []
    lines = array("q")
    width, line = len(names), reader.line_num + 1
    for fields in reader:
        if len(fields) != width:
            if not fields and width == 1:  # a blank line: one empty field (RFC 4180)
                fields = [""]
            else:
                raise _ragged(fields, width, line, len(rows))
        if len(rows) == MAX_CSV_ROWS:
            raise LoadError("too-large", f"{WHAT} has more than {MAX_CSV_ROWS} records",
                            line=line)
        for index, convert in converted:
            fields[index] = convert(fields[index])
        rows.append(dict(zip(names, fields)))
        lines.append(line)
        line = reader.line_num + 1
    return rows, lines


def _column_names(header: list) -> list:
    seen: dict[str, int] = {}
    for number, name in enumerate(header, 1):
        if name in seen:
            raise LoadError("duplicate-column", f"the header names column {name!r} twice "
                                                f"(columns {seen[name]} and {number})", line=1)
        seen[name] = number
    return header


def _ragged(fields: list, width: int, line: int, index: int) -> LoadError:
    has = "is blank" if not fields else \
        f"has {len(fields)} field{'s' if len(fields) != 1 else ''}"
    return LoadError("ragged-row", f"the record on line {line} {has}; the header has {width} "
                                   f"column{'s' if width != 1 else ''}", line=line,
                     location=f"$[{index}]")


def _lines(text: str):
    """The lines of ``text`` with their line ends (CRLF, LF, CR), a slice at a time: a
    whole-text StringIO would hold a copy of four bytes per character."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start + _CHUNK)
        end = size if end < 0 else end + 1
        yield from io.StringIO(text[start:end], newline="")
        start = end


def _not_rfc_4180(text: str) -> LoadError:
    """Where and how a text the grammar refuses leaves it."""
    end = _RFC_4180.match(text).end()  # the longest prefix that is RFC 4180: not the whole
    if text[end] != '"':
        why = "text follows a quoted field's closing quote"
    elif end == 0 or text[end - 1] in ",\r\n":
        why = "a quoted field is not closed"
    else:
        why = "a quote inside a field that is not quoted (quote the field and double the quote)"
    return LoadError("invalid-csv", f"{WHAT} is not RFC 4180 CSV: {why}",
                     line=line_of_char(text, end))


# ------------------------------------------------------------------ numbers, by the shape

def _conversions(shape: dict | None):
    """``column name -> convert(cell) or None`` from the document's shape node."""
    items = shape.get("items") if isinstance(shape, dict) else None
    if not isinstance(items, dict):
        return lambda name: None
    members = items.get("members") or {}
    every = _converter(items["values"]) if "values" in items else None
    return lambda name: _converter(members[name]) if name in members else every


def _converter(node: dict):
    declared = node.get("type", "any")
    types = [declared] if isinstance(declared, str) else declared
    if "string" in types or "any" in types:
        return None
    if "number" in types:
        return _number
    return _integer if "integer" in types else None


def _integer(cell: str):
    if _INTEGER.fullmatch(cell) is None:
        return cell
    try:
        return int(cell)
    except ValueError:  # more digits than the interpreter converts: stays text
        return cell


def _number(cell: str):
    spelt = _NUMBER.fullmatch(cell)
    if spelt is None:
        return cell
    if spelt.group(1) is None and spelt.group(2) is None:
        return _integer(cell)
    value = float(cell)
    return value if math.isfinite(value) else cell
