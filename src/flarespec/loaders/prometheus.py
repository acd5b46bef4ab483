"""Prometheus text exposition format 0.0.4, sample by sample, with line numbers.

An own parser rather than prometheus_client: its family parser renames counter samples (adds
or strips ``_total``), keeps duplicates silently and does not say which line a sample came
from, and its label parser takes quadratic time on a label value of many escaped quotes. So
each line is classified here (blank, comment, HELP, TYPE, sample) and a sample line is read
left to right -- name, label block one label at a time, value, timestamp -- by anchored
regular expressions whose repetitions never backtrack, so the work is linear in the line.
Exposed names are kept exactly as written.
"""

from __future__ import annotations

import math
import re
import sys
from itertools import chain

from ._text import UTF8_BOM, decode_utf8
from .errors import LoadError
from .limits import MAX_DOCUMENT_BYTES, MAX_SAMPLES, check_document_size, gc_paused

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_BLANKS = re.compile(r"[ \t]*")
_SEPARATOR = re.compile(r"[ \t]+")
_LINE_BLANKS = " \t\r"  # stripped from both ends of a line (CRLF line ends are tolerated)
# One label: name = "value", then an optional comma. A value holds anything but a bare quote
# or backslash; the only escapes are \\ \" \n (others are errors, as in Prometheus itself).
# Possessive repetitions: a value is consumed once, never re-tried from inside.
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"((?:[^"\\]++|\\[\\"n])*+)"[ \t]*(,?)[ \t]*')
_LABEL_ESCAPE = re.compile(r"\\(.)")
_UNESCAPED = {"\\": "\\", '"': '"', "n": "\n"}
# The value and the optional timestamp after the name or label block.
_VALUE_FIELDS = re.compile(r"[ \t]*([^ \t]+)(?:[ \t]+([^ \t]+))?")
# Exactly the exposition format's numbers: ASCII digits, sign, point, exponent, and the
# three spellings NaN, +Inf, -Inf (not Go ParseFloat's wider, case-insensitive set).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|NaN|[+-]Inf")
_TIMESTAMP = re.compile(r"-?[0-9]{1,19}")  # an int64 of milliseconds has at most 19 digits
_INT64 = range(-(1 << 63), 1 << 63)
_HELP_ESCAPE = re.compile(r"\\[\\n]")  # HELP text escapes only backslash and newline
_TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
# Sample names a family of each type owns besides its own name (0.0.4 has no _total rule).
_SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}


@gc_paused
def parse_prometheus(data: bytes, *, limit: int = MAX_DOCUMENT_BYTES) -> dict:
    """Parse an exposition; see docs/loaders.md for the result's shape. Raises LoadError."""
    check_document_size(data, "exposition", limit)
    if data.startswith(UTF8_BOM):
        raise LoadError("bom", "exposition starts with a UTF-8 byte order mark", line=1)
    text = decode_utf8(data, "exposition")

    families: dict[str, dict] = {}
    samples: list[dict] = []
    unlabelled: dict[str, list[float]] = {}
    first_line: dict[tuple, int] = {}          # _identity(sample) -> line of its first sample
    duplicate_lines: dict[tuple, list[int]] = {}

    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip(_LINE_BLANKS)
        if not line:
            continue
        if line.startswith("#"):
            _read_comment(line, number, families)
            continue
        if len(samples) == MAX_SAMPLES:
            raise LoadError("too-large", f"more than {MAX_SAMPLES} samples (the limit for one exposition)",
                            line=number)
        sample = _read_sample(line, number)
        samples.append(sample)
        name = sample["name"]
        if _family_of(name, families) is None:
            families[name] = {"name": name, "type": "unknown", "help": None, "line": number}
        if not sample["labels"]:
            unlabelled.setdefault(name, []).append(sample["value"])
        key = _identity(name, sample["labels"])
        seen = first_line.setdefault(key, number)
        if seen != number:
            duplicate_lines.setdefault(key, [seen]).append(number)

    duplicates = [{"name": key[0], "labels": dict(zip(key[1::2], key[2::2])), "lines": lines}
                  for key, lines in duplicate_lines.items()]
    return {"families": list(families.values()), "samples": samples,
            "unlabelled": unlabelled, "duplicates": duplicates}


def _identity(name: str, labels: dict) -> tuple:
    """What makes two samples the same series: the name and the label set, in label order.
    One flat tuple (name, label, value, label, value...): the smallest key there is, as one
    is kept per sample."""
    return (name, *chain.from_iterable(sorted(labels.items()))) if labels else (name,)


def _invalid(number: int, message: str) -> LoadError:
    return LoadError("invalid-exposition", message, line=number)


def _read_comment(line: str, number: int, families: dict) -> None:
    words = _SEPARATOR.split(line[1:].lstrip(" \t"), maxsplit=2)
    if words[0] not in ("HELP", "TYPE"):
        return  # an ordinary comment
    keyword = words[0]
    if len(words) < 2 or not _METRIC_NAME.fullmatch(words[1]):
        raise _invalid(number, f"# {keyword} line without a valid metric name")
    name = words[1]
    family = families.setdefault(name, {"name": name, "type": "unknown", "help": None, "line": number})
    if keyword == "HELP":
        if family["help"] is not None:
            raise _invalid(number, f"second # HELP line for {name}")
        text = words[2] if len(words) > 2 else ""
        family["help"] = _HELP_ESCAPE.sub(lambda m: "\n" if m.group() == "\\n" else "\\", text)
        return
    if len(words) < 3 or words[2] not in _TYPES:
        raise _invalid(number, f"# TYPE {name} needs one of {', '.join(sorted(_TYPES))}")
    if family["type"] != "unknown":
        raise _invalid(number, f"second # TYPE line for {name}")
    family["type"] = words[2]


def _read_sample(line: str, number: int) -> dict:
    """``name[{labels}] value [timestamp]``, read left to right."""
    match = _METRIC_NAME.match(line)
    if match is None:
        raise _invalid(number, f"not a sample line: {_shown(line)}")
    name, position = sys.intern(match.group()), match.end()  # names repeat: one string each
    position = _BLANKS.match(line, position).end()
    labels = {}
    if line.startswith("{", position):
        labels, position = _read_labels(line, position + 1, number)
    elif position == match.end() and position < len(line):  # the name runs into other text
        raise _invalid(number, f"invalid metric name in {_shown(line)}")
    fields = _VALUE_FIELDS.fullmatch(line, position)
    if fields is None:
        raise _invalid(number, f"expected a value and an optional timestamp after {name}, "
                               f"got {_shown(line[position:])}")
    value_text, timestamp_text = fields.groups()
    timestamp = None if timestamp_text is None else _parse_timestamp(timestamp_text, number)
    return {"name": name, "labels": labels, "value": _parse_value(value_text, number),
            "timestamp": timestamp, "line": number}


def _read_labels(line: str, position: int, number: int) -> tuple[dict, int]:
    """The labels after ``{`` at ``position``; returns them and the position after ``}``."""
    labels: dict[str, str] = {}
    position = _BLANKS.match(line, position).end()
    while not line.startswith("}", position):
        match = _LABEL.match(line, position)
        if match is None:
            raise _invalid(number, f"malformed label block at column {position + 1} in {_shown(line)}")
        label, value, comma = match.groups()
        if label == "__name__":  # it would rename the sample
            raise _invalid(number, "the label name __name__ is not allowed in a label block")
        if label in labels:
            raise _invalid(number, f"label {label!r} is given twice")
        labels[sys.intern(label)] = _LABEL_ESCAPE.sub(lambda m: _UNESCAPED[m[1]], value) if "\\" in value else value
        position = match.end()
        if not comma and not line.startswith("}", position):
            raise _invalid(number, f"expected ',' or '}}' at column {position + 1} in {_shown(line)}")
    return labels, position + 1


def _parse_value(token: str, number: int) -> float:
    if not _NUMBER.fullmatch(token):
        raise _invalid(number, f"sample value {_shown(token)} is not a number "
                               "(digits, '.', exponent, NaN, +Inf or -Inf)")
    value = float(token)
    if math.isinf(value) and not token.endswith("Inf"):
        raise _invalid(number, f"sample value {_shown(token)} is too large for a double-precision float")
    return value


def _parse_timestamp(token: str, number: int) -> float:
    if not _TIMESTAMP.fullmatch(token) or int(token) not in _INT64:
        raise _invalid(number, f"timestamp {_shown(token)} is not a 64-bit integer (milliseconds)")
    return float(token)


def _shown(text: str) -> str:
    """A line or token in a message: quoted, at most 80 characters of it."""
    return repr(text[:80]) + ("..." if len(text) > 80 else "")


def _family_of(sample_name: str, families: dict) -> dict | None:
    family = families.get(sample_name)
    if family is not None:
        return family
    for suffix in ("_bucket", "_sum", "_count"):
        if sample_name.endswith(suffix):
            family = families.get(sample_name[: -len(suffix)])
            if family is not None and suffix in _SUFFIXES.get(family["type"], ()):
                return family
    return None
