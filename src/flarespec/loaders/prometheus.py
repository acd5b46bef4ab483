"""Prometheus text exposition format 0.0.4, sample by sample, with line numbers.

An own parser rather than prometheus_client: its family parser renames counter samples (adds
or strips ``_total``), keeps duplicates silently and does not say which line a sample came
from, and its label parser takes quadratic time on a label value of many escaped quotes. So
each line is classified here (blank, comment, HELP, TYPE, sample) and a sample line is read
left to right -- name, label block one item at a time, value, timestamp -- by anchored
regular expressions whose repetitions never backtrack, so the work is linear in the line.
Exposed names are kept exactly as written (quoted UTF-8 names with their escapes resolved).

The rules are the strict reading a validator needs (docs/loaders.md): the
file ends with a line feed, a family has at most one ``# HELP`` and one ``# TYPE`` line and
its ``# TYPE`` comes before its samples, timestamps are integers, any malformed line rejects,
and quoted metric and label names (the Prometheus 3 form ``{"a.b", "c.d"="x"} 1``) parse.
Values are spelled as prometheus/common's ``parseFloat`` takes them (Go's ``ParseFloat``
without hexadecimal or ``_``) and read exactly: an integral value is an ``int``, any other
finite value a ``decimal.Decimal`` of exactly the number its text spells, and only the
non-finite spellings (``NaN``, ``+Inf``, ``inf``, ``Infinity`` ... in any case) are floats. A
``# HELP`` or ``# TYPE`` name is mapped onto a family as a sample name is (``s_sum`` onto the
summary ``s``), as prometheus/common maps it. docs/loaders.md lists where this is stricter
than prometheus/common.
"""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal
from itertools import chain

from ._text import UTF8_BOM, decode_utf8
from .errors import LoadError
from .limits import MAX_DOCUMENT_BYTES, MAX_SAMPLES, check_document_size, gc_paused

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_BLANKS = re.compile(r"[ \t]*+")
_WORD = re.compile(r"[^ \t]*+")
_LEADING_BLANKS = " \t"  # skipped at the start of a line (as Prometheus does)
# A quoted name or value holds anything but a bare quote or backslash; the only escapes are
# \\ \" \n (others are errors, as in Prometheus itself). Possessive repetitions: a string is
# consumed once, never re-tried from inside.
_STRING = r'"((?:[^"\\]++|\\[\\"n])*+)"'
_QUOTED = re.compile(_STRING)
# One item of a label block: a label name (plain or quoted), then ``= "value"``, then an
# optional comma. Without ``= "value"`` it is a quoted metric name (``{"a.b", x="1"}``).
_ITEM = re.compile(r'(?:([a-zA-Z_][a-zA-Z0-9_]*+)|' + _STRING + r')[ \t]*+'
                   r'(?:(=)[ \t]*+' + _STRING + r')?[ \t]*+(,?)[ \t]*+')
_ESCAPE = re.compile(r"\\(.)")
_UNESCAPED = {"\\": "\\", '"': '"', "n": "\n"}
_HELP_TEXT = re.compile(r'(?:[^\\]++|\\[\\"n])*+')  # HELP escapes: \\ \n and \" (as Prometheus)
# The common lines in one match each (anything else is read step by step, with the same
# outcome for these): ``# HELP name text`` and ``# TYPE name type`` with a plain name (the
# line without trailing blanks), and ``name value [timestamp]`` without a label block (a
# value never starts with ``{``: that is a label block after blanks).
_SIMPLE_COMMENT = re.compile(r"#[ \t]*+(HELP|TYPE)[ \t]++([a-zA-Z_:][a-zA-Z0-9_:]*+)"
                             r"(?:[ \t]++(.*))?", re.DOTALL)
_SIMPLE_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*+)[ \t]++([^ \t{][^ \t]*+)"
                            r"(?:[ \t]++([^ \t]++))?")
# The value and the optional timestamp after the name or label block.
_VALUE_FIELDS = re.compile(r"[ \t]*+([^ \t]++)(?:[ \t]++([^ \t]++))?")
# What prometheus/common's parseFloat (Go's ParseFloat refusing 'p', 'P' and '_', so no
# hexadecimal float and no '_' separator) takes as a sample value and as the float of an
# ``le`` or ``quantile`` label: ASCII digits with a sign, point and exponent; Inf and
# Infinity in any case with an optional sign; NaN in any case without one (ParseFloat's
# special spellings). Python's float() takes all of these and more (non-ASCII digits, '_').
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    r"|[+-]?(?i:inf(?:inity)?)|(?i:nan)")
_SHORT_INTEGER = re.compile(r"[+-]?[0-9]{1,300}")  # an int at once: below 1e300, a double's range
# int64 milliseconds: a sign, leading zeros, at most 19 more digits (as Go's ParseInt, base 10)
_TIMESTAMP = re.compile(r"([+-]?)(?=[0-9])0*+([0-9]{0,19})")
_INT64 = range(-(1 << 63), 1 << 63)
# The common labelled sample, in one match (see _common_labelled): plain label names, quoted
# values without a backslash, commas without blanks (a trailing one allowed, as
# _read_labels allows it), then the value fields exactly as _VALUE_FIELDS reads them.
_LABEL_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*+)="([^"\\]*+)"')
_PAIR = r'[a-zA-Z_][a-zA-Z0-9_]*+="[^"\\]*+"'
_LABELLED_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*+)\{((?:" + _PAIR + "(?:," + _PAIR + r")*+,?+)?+)\}"
                              r"[ \t]*+([^ \t]++)(?:[ \t]++([^ \t]++))?")
_intern = sys.intern
# The common lines (a comment or sample in one match, a labelled sample in two) are read
# without the step-by-step reading, with the same result; False reads every line step by
# step (the differential test, tests/loaders/test_fast_path_differential.py, compares them).
FAST_PATH = True
_TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
# Sample names a family of each type owns besides its own name (0.0.4 has no _total rule).
_SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}
_OWNED_SUFFIXES = ("_bucket", "_sum", "_count")
# Common comment lines already read (_common_comment), at most _COMMENTS_KEPT of them: what
# a line says does not depend on the exposition; what it does to one is _apply_comment's.
_COMMENTS: dict[str, tuple] = {}
_COMMENTS_KEPT = 1 << 12


@gc_paused
def parse_prometheus(data: bytes, *, limit: int = MAX_DOCUMENT_BYTES) -> dict:
    """Parse an exposition; see docs/loaders.md for the result's shape. Raises LoadError."""
    check_document_size(data, "exposition", limit)
    if data.startswith(UTF8_BOM):
        raise LoadError("bom", "exposition starts with a UTF-8 byte order mark", line=1)
    text = decode_utf8(data, "exposition")
    if text and not text.endswith("\n"):  # an empty file has no line to end
        raise _invalid(text.count("\n") + 1, "the last line does not end with a line feed "
                                             "(a truncated capture?)")

    families: dict[str, dict] = {}
    sampled: set[str] = set()                  # families that have a sample: no # TYPE now
    samples: list[dict] = []
    unlabelled: dict[str, list] = {}
    first_line: dict[tuple, int] = {}          # _identity(sample) -> line of its first sample
    duplicate_lines: dict[tuple, list[int]] = {}

    carriage_returns = "\r" in text  # else no line can end with one
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.lstrip(_LEADING_BLANKS)
        if carriage_returns and line.endswith("\r"):
            raise _invalid(number, "the line ends with a carriage return: the text format ends "
                                   "every line with a line feed alone (CRLF line ends reject)")
        if not line:
            continue
        if line[0] == "#":
            line = line.rstrip(" \t")
            parts = (_COMMENTS.get(line) or _common_comment(line)) if FAST_PATH else None
            if parts is None:
                _read_comment(line, number, families, sampled)
            else:
                _apply_comment(parts, number, families, sampled)
            continue
        if line[-1] in " \t":
            raise _invalid(number, f"blanks after the last field of a sample line "
                                   f"{_shown(line)} (the text format ends a sample at its "
                                   f"value or timestamp)")
        if len(samples) == MAX_SAMPLES:
            raise LoadError("too-large", f"more than {MAX_SAMPLES} samples (the limit for one exposition)",
                            line=number)
        simple = _SIMPLE_SAMPLE.fullmatch(line) if FAST_PATH else None
        if simple is None:
            sample = (FAST_PATH and _common_labelled(line, number)) or _read_sample(line, number)
        else:  # ``name value [timestamp]``: what _read_sample reads, in one match
            name, value_text, timestamp_text = simple.groups()
            timestamp = None if timestamp_text is None else _parse_timestamp(timestamp_text, number)
            sample = {"name": sys.intern(name), "labels": {},  # the timestamp's error first
                      "value": _parse_value(value_text, number), "timestamp": timestamp,
                      "line": number}
        samples.append(sample)
        name, labels = sample["name"], sample["labels"]
        family = families.get(name) or _family_of(name, families)
        if family is None:
            family = families[name] = {"name": name, "type": "unknown", "help": None, "line": number}
        elif family["type"] in _SUFFIXES:
            _check_summary_or_histogram(sample, family, number)
        sampled.add(family["name"])
        if labels:
            key = _identity(name, labels)
        else:
            unlabelled.setdefault(name, []).append(sample["value"])
            key = (name,)  # _identity's key of an unlabelled sample
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


def _unescaped(text: str) -> str:
    return _ESCAPE.sub(lambda m: _UNESCAPED[m[1]], text) if "\\" in text else text


def _read_comment(line: str, number: int, families: dict, sampled: set) -> None:
    rest = line[1:].lstrip(" \t")
    keyword = _WORD.match(rest).group()
    if keyword not in ("HELP", "TYPE"):
        return  # an ordinary comment
    position = _BLANKS.match(rest, len(keyword)).end()
    name, position = _comment_name(rest, position, keyword, number)
    after = _BLANKS.match(rest, position).end()
    if after == position and position < len(rest):  # the name runs into other text
        raise _invalid(number, f"# {keyword} line without a valid metric name: {_shown(line)}")
    _apply_comment(_comment_parts(keyword, name, rest[after:]), number, families, sampled)


def _common_comment(line: str) -> tuple | None:
    """The parts of a ``# HELP name text`` or ``# TYPE name type`` line with a plain name
    (one match, what _read_comment reads), kept in _COMMENTS for the next exposition (an
    exporter writes the same comment lines into every exposition); None for any other."""
    simple = _SIMPLE_COMMENT.fullmatch(line)
    if simple is None:
        return None
    keyword, name, text = simple.groups()
    parts = _comment_parts(keyword, sys.intern(name), text or "")
    if len(_COMMENTS) < _COMMENTS_KEPT:
        _COMMENTS[line] = parts
    return parts


def _comment_parts(keyword: str, name: str, text: str) -> tuple:
    """(keyword, name, text, the HELP text unescaped or None when it holds another escape):
    what a comment line says, before the exposition it is in is asked."""
    help_text = None
    if keyword == "HELP" and _HELP_TEXT.fullmatch(text):
        help_text = _unescaped(text)
    return keyword, name, text, help_text


def _apply_comment(parts: tuple, number: int, families: dict, sampled: set) -> None:
    """A # HELP or # TYPE line's text (``_comment_parts``) for the family ``name``, or for
    the histogram or summary declared earlier that owns ``name`` as a sample name (``s_sum``
    of the summary ``s``): prometheus/common maps a comment's name onto a family as it maps
    a sample's."""
    keyword, name, text, help_text = parts
    family = _family_of(name, families)
    if keyword == "HELP":
        if family is not None and family["help"] is not None:
            raise _invalid(number, f"second # HELP line for {_shown_member(name, family)}")
        if help_text is None:
            raise _invalid(number, f"# HELP {_shown_name(name)}: an escape other than \\\\, \\n "
                                   "and \\\" in the text")
    elif text not in _TYPES:
        raise _invalid(number, f"# TYPE {_shown_name(name)} needs one of {', '.join(sorted(_TYPES))}")
    elif family is not None and family["type"] != "unknown":
        raise _invalid(number, f"second # TYPE line for {_shown_member(name, family)}")
    elif name in sampled or text in _SUFFIXES and any(name + suffix in sampled
                                                      for suffix in _SUFFIXES[text]):
        # a histogram's or summary's _bucket/_sum/_count samples seen before its # TYPE were
        # families of their own then: they are this family's samples, too early
        raise _invalid(number, f"# TYPE {_shown_name(name)} comes after samples of its family "
                               "(it must come before them)")
    if family is None:
        family = families[name] = {"name": name, "type": "unknown", "help": None, "line": number}
    if keyword == "HELP":
        family["help"] = help_text
    else:
        family["type"] = text


def _comment_name(rest: str, position: int, keyword: str, number: int) -> tuple[str, int]:
    """The metric name of a # HELP or # TYPE line (plain or quoted) and the position after it."""
    if rest.startswith('"', position):
        match = _QUOTED.match(rest, position)
        if match is None:
            raise _invalid(number, f"# {keyword}: malformed quoted metric name (unterminated, or an "
                                   "escape other than \\\\, \\\" and \\n)")
        if not match[1]:
            raise _invalid(number, f"# {keyword}: the quoted metric name is empty")
        return sys.intern(_unescaped(match[1])), match.end()
    match = _METRIC_NAME.match(rest, position)
    if match is None:
        raise _invalid(number, f"# {keyword} line without a valid metric name")
    return sys.intern(match.group()), match.end()


def _common_labelled(line: str, number: int) -> dict | None:
    """``name{a="x",b="y"} value [timestamp]`` (plain names, no blanks in the label block, no
    escapes), read in two matches; None for anything else, and for what _read_sample refuses
    in a label block (a label given twice, ``__name__``), which it then words. Why the same:
    without a backslash a quoted value ends at its next quote and is its own unescaped
    text, so the pairs are _read_labels' items in order; after ``}`` the value and timestamp
    are _VALUE_FIELDS' (the same pattern), read timestamp first as _read_sample does."""
    match = _LABELLED_SAMPLE.fullmatch(line)
    if match is None:
        return None
    name, block, value_text, timestamp_text = match.groups()
    pairs = _LABEL_PAIR.findall(block)
    labels = {_intern(label): value for label, value in pairs}
    if len(labels) != len(pairs) or "__name__" in labels:
        return None
    timestamp = None if timestamp_text is None else _parse_timestamp(timestamp_text, number)
    return {"name": _intern(name), "labels": labels, "value": _parse_value(value_text, number),
            "timestamp": timestamp, "line": number}


def _read_sample(line: str, number: int) -> dict:
    """``name[{labels}] value [timestamp]`` or ``{"name", labels} value [timestamp]``, read
    left to right."""
    if line.startswith("{"):  # the metric name is a quoted item of the label block
        name, labels, position = _read_labels(line, 1, number, braced_name=True)
        if name is None:
            raise _invalid(number, f"no metric name (a label block needs a name before it or a "
                                   f"quoted name in it): {_shown(line)}")
    else:
        match = _METRIC_NAME.match(line)
        if match is None:
            raise _invalid(number, f"not a sample line: {_shown(line)}")
        name, position = sys.intern(match.group()), match.end()  # names repeat: one string each
        position = _BLANKS.match(line, position).end()
        labels = {}
        if line.startswith("{", position):
            _, labels, position = _read_labels(line, position + 1, number, braced_name=False)
        elif position == match.end() and position < len(line):  # the name runs into other text
            raise _invalid(number, f"invalid metric name in {_shown(line)}")
    fields = _VALUE_FIELDS.fullmatch(line, position)
    if fields is None:
        raise _invalid(number, f"expected a value and an optional timestamp after {_shown_name(name)}, "
                               f"got {_shown(line[position:])}")
    value_text, timestamp_text = fields.groups()
    timestamp = None if timestamp_text is None else _parse_timestamp(timestamp_text, number)
    return {"name": name, "labels": labels, "value": _parse_value(value_text, number),
            "timestamp": timestamp, "line": number}


def _read_labels(line: str, position: int, number: int, *,
                 braced_name: bool) -> tuple[str | None, dict, int]:
    """The items after ``{`` at ``position``: the metric name when ``braced_name`` (a quoted
    item without ``=``), the labels, and the position after ``}``."""
    labels: dict[str, str] = {}
    name = None
    position = _BLANKS.match(line, position).end()
    while not line.startswith("}", position):
        match = _ITEM.match(line, position)
        if match is None:
            raise _invalid(number, f"malformed label block at column {position + 1} in {_shown(line)}")
        plain, quoted, equals, value, comma = match.groups()
        if equals is None:  # a bare name: the metric name, or a label without its value
            after_name = _BLANKS.match(line, match.end(2) + 1 if plain is None else match.end(1)).end()
            if line.startswith("=", after_name):
                raise _invalid(number, f"malformed label value after the '=' at column {after_name + 1} (not a "
                                       "terminated quoted string, or an escape other than \\\\, "
                                       f"\\\" and \\n) in {_shown(line)}")
            if not braced_name or plain is not None:
                raise _invalid(number, f"expected '=' and a quoted value after the label name at "
                                       f"column {position + 1} in {_shown(line)}")
            if name is not None:
                raise _invalid(number, f"a second metric name in the label block: {_shown(line)}")
            if not quoted:
                raise _invalid(number, "the quoted metric name is empty")
            name = sys.intern(_unescaped(quoted))
        else:
            label = plain if plain is not None else _unescaped(quoted)
            if not label:
                raise _invalid(number, f"an empty label name in {_shown(line)}")
            if label == "__name__":  # it would rename the sample
                raise _invalid(number, "the label name __name__ is not allowed in a label block")
            if label in labels:
                raise _invalid(number, f"label {label!r} is given twice")
            labels[sys.intern(label)] = _unescaped(value)
        position = match.end()
        if not comma and not line.startswith("}", position):
            raise _invalid(number, f"expected ',' or '}}' at column {position + 1} in {_shown(line)}")
    return name, labels, position + 1


def _parse_value(token: str, number: int):
    """The exact value: an int when integral, else a Decimal; NaN and ±Inf as floats."""
    if token.isdigit() and token.isascii() and len(token) <= 300:  # _SHORT_INTEGER unsigned, in C
        return int(token)
    if _SHORT_INTEGER.fullmatch(token):
        return int(token)
    if not _FLOAT.fullmatch(token):
        raise _invalid(number, f"sample value {_shown(token)} is not a number (ASCII digits, "
                               "'.', exponent; Inf, Infinity or NaN in any case)")
    if token[-1].isalpha():  # a spelling of NaN or ±Inf (a finite number ends in a digit or '.')
        return float(token)
    if math.isinf(float(token)):  # also bounds the exact value's digits (at most 309 before the point)
        raise _invalid(number, f"sample value {_shown(token)} is too large for a double-precision float")
    exact = Decimal(token)
    if exact.is_zero():  # 0e999999999 is 0, without building its digits
        return 0
    integral = exact.to_integral_value()
    return int(integral) if integral == exact else exact


def _parse_timestamp(token: str, number: int) -> int:
    match = _TIMESTAMP.fullmatch(token)
    value = None if match is None else int(match[1] + (match[2] or "0"))
    if value is None or value not in _INT64:  # (None in a range would walk the whole range)
        raise _invalid(number, f"timestamp {_shown(token)} is not a 64-bit integer (milliseconds)")
    return value


def _check_summary_or_histogram(sample: dict, family: dict, number: int) -> None:
    """What Prometheus checks in a summary's or histogram's samples: the ``quantile`` or
    ``le`` label is a float, and a histogram's count and buckets are not negative."""
    labels, base = sample["labels"], family["name"]
    bound = "quantile" if family["type"] == "summary" else "le"
    if bound in labels:
        text = labels[bound]
        if not _FLOAT.fullmatch(text) or (
                math.isinf(float(text)) and not text.lower().endswith(("inf", "infinity"))):
            raise _invalid(number, f"the {bound!r} label of {_shown_name(sample['name'])} is "
                                   f"{_shown(text)}, not a float")
    if family["type"] != "histogram" or not sample["value"] < 0:
        return
    if sample["name"] == base + "_count":
        raise _invalid(number, f"negative count for histogram {_shown_name(base)}")
    if sample["name"] != base + "_sum" and bound in labels:
        raise _invalid(number, f"negative bucket population for histogram {_shown_name(base)}")


def _shown(text: str) -> str:
    """A line or token in a message: quoted, at most 80 characters of it."""
    return repr(text[:80]) + ("..." if len(text) > 80 else "")


def _shown_name(name: str) -> str:
    """A metric name in a message: as is when plain, else quoted."""
    return name if _METRIC_NAME.fullmatch(name) else _shown(name)


def _shown_member(name: str, family: dict) -> str:
    """A comment's name in a message, with the family it was mapped onto when another."""
    if name == family["name"]:
        return _shown_name(name)
    return f"{_shown_name(name)} (a sample name of the {family['type']} {_shown_name(family['name'])})"


def _family_of(sample_name: str, families: dict) -> dict | None:
    """The family a sample (or comment) name belongs to: its own, else the histogram's or
    summary's whose suffixed sample name it is; None when it starts a family."""
    family = families.get(sample_name)
    if family is not None or not sample_name.endswith(_OWNED_SUFFIXES):  # one C call for most names
        return family
    for suffix in _OWNED_SUFFIXES:
        if sample_name.endswith(suffix):
            family = families.get(sample_name[: -len(suffix)])
            if family is not None and suffix in _SUFFIXES.get(family["type"], ()):
                return family
    return None
