"""Strict JSON: the stdlib parser plus the checks RFC 8259 interoperability needs.

Python's ``json`` silently keeps the last of duplicate object keys and accepts ``NaN``,
``Infinity`` and ``-Infinity``. Both are rejected here through the parser's own hooks
(``object_pairs_hook``, ``parse_constant``), so a valid document costs one C-speed parse.
Only when a duplicate key was actually seen is the text parsed a second time, with the
pure-Python scanner, to report where it is.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re

from ._text import UTF8_BOM, decode_utf8, line_of_char
from .errors import LoadError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The first NaN/Infinity token outside a string. The parser reached it, so everything
# before it is valid JSON and this simple string pattern cannot be fooled.
_STRING_OR_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)', re.DOTALL)


class _DuplicateKeySeen(Exception):
    pass


class _NonJsonLiteralSeen(Exception):
    pass


def _unique_keys_object(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKeySeen
    return obj


def _reject_constant(name: str):
    raise _NonJsonLiteralSeen(name)


def load_json(data: bytes) -> object:
    """Parse UTF-8 JSON bytes (no BOM) strictly; raises LoadError."""
    if data.startswith(UTF8_BOM):
        raise LoadError("bom", "JSON text starts with a UTF-8 byte order mark (RFC 8259 forbids it)", line=1)
    return load_json_text(decode_utf8(data, "JSON text"))


def load_json_text(text: str) -> object:
    """Parse an already decoded JSON text strictly; raises LoadError."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys_object, parse_constant=_reject_constant)
    except _DuplicateKeySeen:
        raise _locate_duplicate_key(text) from None
    except _NonJsonLiteralSeen as exc:
        raise LoadError(
            "non-json-literal", f"{exc.args[0]} is not a JSON value",
            line=_line_of_first_constant(text),
        ) from None
    except json.JSONDecodeError as exc:
        raise LoadError(
            "invalid-json", f"invalid JSON: {exc.msg} (column {exc.colno})",
            line=line_of_char(text, exc.pos),
        ) from None
    except RecursionError:
        raise LoadError("invalid-json", "JSON nesting is too deep to parse") from None


def _line_of_first_constant(text: str) -> int | None:
    for match in _STRING_OR_CONSTANT.finditer(text):
        if match.group(1):
            return line_of_char(text, match.start(1))
    return None


# --------------------------------------------------------------------------- duplicate keys

class _ObjectWithDuplicates(dict):
    """Marks, in the slow second parse, an object that repeats a key; remembers where it starts."""

    start = -1


def _mark_duplicates(pairs: list) -> dict:
    obj = dict(pairs)
    return _ObjectWithDuplicates(obj) if len(obj) != len(pairs) else obj


def _locate_duplicate_key(text: str) -> LoadError:
    decoder = json.JSONDecoder(object_pairs_hook=_mark_duplicates)
    parse_object = decoder.parse_object

    def parse_object_noting_start(s_and_end, *args):
        obj, end = parse_object(s_and_end, *args)
        if isinstance(obj, _ObjectWithDuplicates):
            obj.start = s_and_end[1] - 1  # the scanner passes the index just after "{"
        return obj, end

    decoder.parse_object = parse_object_noting_start
    # The C scanner ignores parse_object; the Python one calls it for every object.
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        tree = decoder.decode(text)
    except RecursionError:
        return LoadError("duplicate-key", "an object repeats a key (nesting too deep to locate it)")
    location, holder = _first_marked_object(tree)
    key, offset = _first_repeated_key(text, holder.start, decoder.scan_once)
    return LoadError(
        "duplicate-key", f"object at {location} has the key {key!r} more than once",
        line=line_of_char(text, offset), location=location,
    )


def _first_marked_object(tree: object) -> tuple[str, _ObjectWithDuplicates]:
    """Pre-order walk; an outer object with duplicates is found before any object inside it."""
    stack = [("$", tree)]
    while stack:
        location, node = stack.pop()
        if isinstance(node, _ObjectWithDuplicates):
            return location, node
        if isinstance(node, dict):
            children = [(child_location(location, k), v) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(f"{location}[{i}]", v) for i, v in enumerate(node)]
        else:
            continue
        stack.extend(reversed(children))
    raise AssertionError("a duplicate key was seen but no object holding one was found")


def _first_repeated_key(text: str, start: int, scan_once) -> tuple[str, int]:
    """Walk the members of the (valid) object at ``text[start]``; return the first key that
    repeats an earlier one and the offset of its opening quote."""
    seen = set()
    index = _WHITESPACE.match(text, start + 1).end()
    while text[index] != "}":
        key_offset = index
        key, index = json.decoder.scanstring(text, index + 1)
        if key in seen:
            return key, key_offset
        seen.add(key)
        index = _WHITESPACE.match(text, index).end() + 1  # skip ":"
        index = _WHITESPACE.match(text, index).end()
        _, index = scan_once(text, index)
        index = _WHITESPACE.match(text, index).end()
        if text[index] == ",":
            index = _WHITESPACE.match(text, index + 1).end()
    raise AssertionError("object was marked as holding a duplicate key but none repeats")


def child_location(base: str, key: str) -> str:
    """JSONPath of member ``key`` of the object at ``base``: ``$.a`` or ``$['a.b']``."""
    if _IDENTIFIER.fullmatch(key):
        return f"{base}.{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{base}['{escaped}']"
