"""JSON Lines: one strict JSON value per line; the document is the array of them.

Each line is read as the strict JSON loader reads a document (loaders/strict_json.py: jiter
first unless the file may hold a number out of its range, the stdlib path for what it
refuses, as the SSE loader reads its payloads), so a record is refused for exactly what a
JSON document is refused for, with the same codes; the line and the location are the file's (``line`` the
file line of the problem, ``location`` rebased onto the array: ``$[3].usage``). Lines end
with LF (a CR before it is JSON whitespace, so CRLF files read the same); a line of JSON
whitespace only (space, tab, CR) holds no record and is skipped; the last line needs no LF.
A UTF-8 byte order mark at the start is ``bom``, as for a JSON document. Line numbers count
CRLF, CR and LF each as one line end (loaders/_text.py), as every loader's do.
"""

from __future__ import annotations

import re
from array import array

from ._text import UTF8_BOM, decode_utf8
from .errors import LoadError
from .limits import MAX_DOCUMENT_BYTES, check_document_size, gc_paused
from .strict_json import _UNDECIDED, fast_value, load_json_text, might_overflow

_BLANK = re.compile(rb"[ \t\r]*")
_SLICE = 1 << 20  # lines are split a slice of about 1 MiB at a time (as the SSE loader does)
WHAT = "JSON Lines text"


@gc_paused
def load_jsonl(data: bytes, *, limit: int = MAX_DOCUMENT_BYTES) -> tuple[list, array]:
    """``(records, lines)``: the value of every non-blank line, and the file line of each.
    Raises LoadError (the strict JSON loader's codes, at the file's line)."""
    check_document_size(data, WHAT, limit)
    if data.startswith(UTF8_BOM):
        raise LoadError("bom", f"{WHAT} starts with a UTF-8 byte order mark (RFC 8259 forbids "
                               f"it)", line=1)
    records: list = []
    lines = array("q")
    fast, crs, line = not might_overflow(data), b"\r" in data, 1
    for pieces, ended in _line_slices(data):
        for record in pieces:
            # JSON whitespace only is no record (isspace() also takes \v and \f: not blank)
            if record and not (record.isspace() and _BLANK.fullmatch(record)):
                value = fast_value(record) if fast else _UNDECIDED
                if value is _UNDECIDED:  # refused by jiter, or not offered: the stdlib decides
                    try:
                        value = load_json_text(decode_utf8(record, WHAT))
                    except LoadError as problem:
                        raise _at(problem, data, line, len(records)) from None
                records.append(value)
                lines.append(line)
            # a lone CR is a line end for the count too (a CR before the LF is not)
            line += 1 + (record.count(b"\r") - (ended and record.endswith(b"\r")) if crs else 0)
    return records, lines


def _line_slices(data: bytes):
    """(the lines of a slice of about 1 MiB without their LF, whether its last line has an
    LF) for consecutive slices ending just after an LF, or at the end of ``data``; a file
    split whole would hold every line's bytes object at once."""
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", start + _SLICE)
        end = size if end < 0 else end + 1
        pieces = data[start:end].split(b"\n")
        if end == size and not data.endswith(b"\n"):
            yield pieces[:-1], True
            yield pieces[-1:], False
        else:
            yield pieces[:-1], True  # the empty piece after the slice's last LF
        start = end


def _at(problem: LoadError, data: bytes, line: int, index: int) -> LoadError:
    """The record's problem at the file's line and location."""
    if problem.code == "invalid-utf8":  # worded for the whole file: its byte offset
        try:
            decode_utf8(data, WHAT)
        except LoadError as whole:
            return whole
    location = f"$[{index}]{problem.location[1:]}" if problem.location else None
    at = line + problem.line - 1 if problem.line else line
    return LoadError(problem.code, f"record {index}: {problem.message}", line=at,
                     location=location)
