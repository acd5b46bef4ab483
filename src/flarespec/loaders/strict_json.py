"""Strict JSON: the stdlib parser plus the checks RFC 8259 interoperability needs.

Python's ``json`` silently keeps the last of duplicate object keys, accepts ``NaN``,
``Infinity`` and ``-Infinity``, turns a float too large for a double into ``inf`` and raises a
bare ``ValueError`` for an integer longer than the interpreter's digit limit. All four are
rejected here through the parser's own hooks (``object_pairs_hook``, ``parse_constant``,
``parse_float``) and handlers, so a valid document costs one C-speed parse.

Where the problem is, is worked out only on the failure path, by a regular-expression
tokenizer over the text the parser has already accepted (see docs/loaders.md): linear, at
C speed per token, never a second pure-Python parse.

A text is first offered to jiter (pydantic's compiled JSON parser: duplicate keys, ``NaN``
and ``Infinity`` refused by its own options, no Python call per object), and only what it
refuses goes through the stdlib path above, which then decides and words every problem
exactly as it always did. jiter's value is taken only where it is the stdlib parser's: it
refuses everything the stdlib path refuses except numbers out of a double's range and
integers longer than the interpreter's digit limit, so a text that could hold one of those
(an exponent of 100 or more, or a run of 200 digits: ``might_overflow``) skips it. Where it
refuses more (a lone surrogate escape, nesting deeper than 200) the stdlib path accepts as
before. ``tests/loaders/test_strict_json_fast.py`` compares the two on generated texts.
"""

from __future__ import annotations

import json
import json.decoder
import math
import re
import sys

from ._text import UTF8_BOM, decode_utf8, line_of_char
from .errors import LoadError
from .limits import MAX_DOCUMENT_BYTES, check_document_size, gc_paused

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One JSON string (possessive: a string is consumed whole, never re-tried from inside).
_STRING = r'"(?:[^"\\]++|\\.)*+"'
# Strings, and the scalar tokens the failure messages need, outside strings. Every locator
# runs on text the parser already accepted up to the failure, so these simple patterns
# cannot be fooled there.
_SCALAR_TOKEN = re.compile(
    _STRING + r'|(?P<constant>-?Infinity|NaN)|(?P<number>-?(?P<digits>[0-9]+)(?P<fraction>(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?))',
    re.DOTALL)
# For duplicate keys: each match is any run of uninteresting text (value strings, numbers,
# literals, blanks, colons) followed by one interesting token: a key with its colon and the
# comma before it, if any (group 1), or one of { } [ ] and an array's comma (group 2). So
# an object's commas cost nothing, and there is one Python step per key or bracket.
_BLANK = r"[ \t\n\r]*"
_KEY_OR_PUNCT = re.compile(
    r'(?:[^"{}\[\],]++|' + _STRING + r'(?!' + _BLANK + r':))*+'
    r'(?:(?:,' + _BLANK + r')?(' + _STRING + r')' + _BLANK + r':|([{}\[\],]))',
    re.DOTALL)


class _DuplicateKeySeen(Exception):
    pass


class _NonJsonLiteralSeen(Exception):
    pass


class _FloatOutOfRange(Exception):
    pass


def _unique_keys_object(pairs: list) -> dict:
    """An object from its members; a key seen twice raises. Keys are interned: the parser
    shares one string per distinct key only within one parse (its memo), and every SSE
    event's data is a parse of its own (so is every file), so a stream of similar chunks
    would repeat the same few keys hundreds of thousands of times. One shared string per
    distinct key took an R=20 packet's parsed SSE payloads from 36 to 23 MiB (and building
    the objects with dict(), uninterned, costs 2.4 MiB more peak RSS for an R=20 pair's
    documents alone). A loop, not a comprehension: a comprehension is a call of its own."""
    obj = {}
    for key, value in pairs:
        obj[_intern(key)] = value
    if len(obj) != len(pairs):
        raise _DuplicateKeySeen
    return obj


_intern = sys.intern


def _reject_constant(name: str):
    raise _NonJsonLiteralSeen(name)


def _finite_float(token: str) -> float:
    """Called by the parser for numbers with a fraction or exponent only (integers never
    overflow); costs one Python call per such number."""
    value = float(token)
    if value == math.inf or value == -math.inf:
        raise _FloatOutOfRange(token)
    return value


# One decoder for every document: json.loads with hooks would build a new one per call,
# which dominates the cost of parsing a million small SSE event payloads.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys_object, parse_constant=_reject_constant,
                            parse_float=_finite_float)
_JSON_BLANKS = " \t\n\r"
_skip_blanks = json.decoder.WHITESPACE.match


def _decode(scan, text: str) -> object:
    """``JSONDecoder.decode`` with its scanner called directly: the same value and the same
    errors (message and position), without two Python frames and two regular-expression
    matches per text when the text has no blanks around its value."""
    start = 0 if text[:1] not in _JSON_BLANKS else _skip_blanks(text, 0).end()
    try:
        value, end = scan(text, start)
    except StopIteration as stop:
        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    if end != len(text):
        end = _skip_blanks(text, end).end()
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    return value


_scan = _DECODER.scan_once


_UNDECIDED = object()
_compiled = []  # [jiter.from_json, RE2 searched over bytes, over str], imported on first use
# What could make a number out of a double's range or an integer longer than the digit
# limit: a number token (after the start, a blank, '[', ',' or ':'; before the end, a blank,
# ',', ']' or '}', as RFC 8259's grammar puts it) with an exponent of 100 or more (a
# negative one cannot overflow), or any run of 200 digits (so is every float whose integer
# part reaches 1e308 with a smaller exponent). A superset: a match only sends the text the
# stdlib way (a SHA-256's "1e464" is inside a word, no token). RE2 is linear; compiled on
# first use, so importing the loaders stays cheap.
_OVERFLOW_PATTERN = (r"(?:^|[\s\[,:])-?[0-9]+(?:\.[0-9]+)?[eE]\+?0*[1-9][0-9]{2}[0-9]*(?:$|[\s,\]}])"
                     r"|[0-9]{200}")


def _imported() -> list:
    if not _compiled:
        import jiter
        import re2

        from flarespec.loaders.linear import searcher
        _compiled.extend((jiter.from_json, searcher(re2.compile(_OVERFLOW_PATTERN.encode())),
                          searcher(re2.compile(_OVERFLOW_PATTERN))))
    return _compiled


def might_overflow(text: bytes | str) -> bool:
    """True when ``text`` may hold a number the stdlib path refuses and jiter does not."""
    return (_compiled or _imported())[1 if type(text) is bytes else 2](text)


# The outside-strings scan of might_overflow_json; False scans every text whole (the
# differential test, tests/loaders/test_fast_path_differential.py, compares the two).
FAST_PATH = True
# Strings are skipped only in a long text and while they are long: a string costs a Python
# step (two C-level finds and a slice), the whole-text scan some 17 instructions a byte, so
# a text of prompts (a quote per ~10^4 bytes) gains, and one of short keys and values (a
# quote per ~20) is scanned whole (after its first few strings, if it is long).
_OUTSIDE_STRINGS_BYTES = 1 << 16
_BYTES_PER_STRING = 256
_STRINGS_BEFORE_DENSITY = 16


def might_overflow_json(data: bytes) -> bool:
    """``might_overflow`` of a JSON text, scanning only outside its strings when it has no
    backslash (and long strings). Why that is enough: only a text jiter accepts is
    affected, and that is grammatical JSON, so without a backslash every quote opens or
    closes a string and what _outside_strings keeps is all the text outside strings. A
    number token lies within one kept piece, after a blank, ``[``, ``,`` or ``:`` of that
    piece (or at the start of the text) and before a blank, ``,``, ``]`` or ``}`` of it (or
    the end of the text), never next to a quote; the pieces are joined by a blank, which only
    adds places the pattern may match, and ends a run of digits where its piece ends."""
    if FAST_PATH and len(data) >= _OUTSIDE_STRINGS_BYTES and b"\\" not in data:
        outside = _outside_strings(data)
        if outside is not None:
            return might_overflow(outside)
    return might_overflow(data)


def _outside_strings(data: bytes) -> bytes | None:
    """The text between strings (each quote pair's outside), joined by blanks; None for an
    odd number of quotes (not JSON) or once strings come denser than one per
    _BYTES_PER_STRING bytes (the whole-text scan is then cheaper)."""
    pieces, start, find = [], 0, data.find
    while (opening := find(b'"', start)) >= 0:
        closing = find(b'"', opening + 1)
        if closing < 0:
            return None
        pieces.append(data[start:opening])
        start = closing + 1
        if len(pieces) > (start // _BYTES_PER_STRING) + _STRINGS_BEFORE_DENSITY:
            return None
    pieces.append(data[start:])
    return b" ".join(pieces)


def fast_value(data: bytes) -> object:
    """jiter's value of UTF-8 JSON bytes whose numbers cannot overflow (the caller checked
    ``might_overflow``), or _UNDECIDED when jiter refuses them (the stdlib path decides)."""
    try:
        return (_compiled or _imported())[0](data, allow_inf_nan=False, catch_duplicate_keys=True,
                                             cache_mode="keys")
    except Exception:  # noqa: BLE001 - refused (or anything else): the stdlib path decides
        return _UNDECIDED


@gc_paused
def load_json(data: bytes, *, limit: int = MAX_DOCUMENT_BYTES) -> object:
    """Parse UTF-8 JSON bytes (no BOM) of at most ``limit`` bytes strictly; raises LoadError."""
    check_document_size(data, "JSON text", limit)
    if data.startswith(UTF8_BOM):
        raise LoadError("bom", "JSON text starts with a UTF-8 byte order mark (RFC 8259 forbids it)", line=1)
    if not might_overflow_json(data):
        value = fast_value(data)
        if value is not _UNDECIDED:
            return value
    return load_json_text(decode_utf8(data, "JSON text"))


def load_json_text(text: str) -> object:
    """Parse an already decoded JSON text strictly; raises LoadError."""
    try:
        return _decode(_scan, text)
    except _DuplicateKeySeen:
        raise _locate_duplicate_key(text) from None
    except _NonJsonLiteralSeen as exc:
        raise LoadError(
            "non-json-literal", f"{exc.args[0]} is not a JSON value",
            line=_line_of_first_scalar(text, lambda match: match.group("constant")),
        ) from None
    except _FloatOutOfRange as exc:
        raise _out_of_range(text, exc.args[0]) from None
    except json.JSONDecodeError as exc:
        raise LoadError(
            "invalid-json", f"invalid JSON: {exc.msg} (column {exc.colno})",
            line=line_of_char(text, exc.pos),
        ) from None
    except RecursionError:
        raise LoadError("invalid-json", "JSON nesting is too deep to parse") from None
    except ValueError:  # int(): more digits than sys.get_int_max_str_digits() allows
        raise _number_too_long(text) from None


# --------------------------------------------------------------------------- numbers

def _line_of_first_scalar(text: str, wanted) -> int | None:
    """Line of the first scalar token outside strings for which ``wanted(match)`` is true."""
    for match in _SCALAR_TOKEN.finditer(text):
        if match.lastindex is not None and wanted(match):
            return line_of_char(text, match.start())
    return None


def _number_too_long(text: str) -> LoadError:
    limit = sys.get_int_max_str_digits()

    def too_long(match) -> bool:
        digits = match.group("digits")
        return digits is not None and len(digits) > limit and not match.group("fraction")

    return LoadError(
        "number-too-long",
        f"an integer has more than {limit} digits (the interpreter's limit for converting digits to a number)",
        line=_line_of_first_scalar(text, too_long),
    )


def _out_of_range(text: str, token: str) -> LoadError:
    shown = token if len(token) <= 40 else f"{token[:20]}...{token[-10:]} ({len(token)} characters)"
    return LoadError(
        "number-out-of-range",
        f"the number {shown} is too large for a double-precision float (it would become infinity)",
        line=_line_of_first_scalar(text, lambda match: match.group("number") == token),
    )


# --------------------------------------------------------------------------- duplicate keys

def _locate_duplicate_key(text: str) -> LoadError:
    """The first key, in reading order, that repeats a key of its own object.

    The parser stopped at the first object (in closing order) that repeats a key, so the
    text up to there is valid JSON and holds that repetition. A stack of the open containers
    is kept -- for an object the keys seen so far and the current key, for an array the
    current index -- so memory is bounded by the keys of the objects open at one time.
    """
    stack: list[list] = []  # one [keys seen (a set) or None for an array, step: key or index]
    top: list = [None, None]
    for match in _KEY_OR_PUNCT.finditer(text):
        if match.lastindex == 1:
            raw_key = match[1]
            key = json.decoder.scanstring(raw_key, 1)[0] if "\\" in raw_key else raw_key[1:-1]
            if key in top[0]:
                stack.append(top)
                location = _location(stack)
                return LoadError("duplicate-key", f"object at {location} has the key {key!r} more than once",
                                 line=line_of_char(text, match.start(1)), location=location)
            top[0].add(key)
            top[1] = key
            continue
        punct = match[2]
        if punct == ",":
            top[1] += 1
        elif punct == "{":
            stack.append(top)
            top = [set(), None]
        elif punct == "[":
            stack.append(top)
            top = [None, 0]
        else:
            top = stack.pop()
    return LoadError("duplicate-key", "an object repeats a key")  # not reached on parser-accepted text


def _location(stack: list[list]) -> str:
    """JSONPath of the innermost open container; ``stack[0]`` is the sentinel above the root."""
    location = "$"
    for keys, step in stack[1:-1]:
        location = child_location(location, step) if keys is not None else f"{location}[{step}]"
    return location


def child_location(base: str, key: str) -> str:
    """JSONPath of member ``key`` of the object at ``base``: ``$.a`` or ``$['a.b']``."""
    if _IDENTIFIER.fullmatch(key):
        return f"{base}.{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{base}['{escaped}']"
