"""Prometheus text exposition format 0.0.4, sample by sample, with line numbers.

prometheus_client's family parser cannot be used as is: it renames counter samples (adds or
strips ``_total``), keeps duplicates silently and does not say which line a sample came
from. So each line is classified here (blank, comment, HELP, TYPE, sample), a sample line is
split into name / label block / value [timestamp] by one regular expression, and the label
block -- the part with quoting and escapes -- is parsed by ``prometheus_client.parser.parse_labels``.
Exposed names are kept exactly as written.
"""

from __future__ import annotations

import re

from ._text import UTF8_BOM, decode_utf8
from .errors import LoadError

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# name, optional {label block} (quoted values may hold "}" and escaped quotes), then the rest.
_SAMPLE_LINE = re.compile(
    r'(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)'
    r'(?:[ \t]*(?P<labels>\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\}))?'
    r'(?P<rest>.*)',
    re.DOTALL,
)
_HELP_ESCAPE = re.compile(r"\\[\\n]")  # HELP text escapes only backslash and newline
_TIMESTAMP = re.compile(r"-?[0-9]+")
_TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
# Sample names a family of each type owns besides its own name (0.0.4 has no _total rule).
_SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}


def parse_prometheus(data: bytes) -> dict:
    """Parse an exposition; see docs/loaders.md for the result's shape. Raises LoadError."""
    # Imported here: prometheus_client is heavy and only needed when metrics are loaded.
    from prometheus_client.parser import parse_labels

    if data.startswith(UTF8_BOM):
        raise LoadError("bom", "exposition starts with a UTF-8 byte order mark", line=1)
    text = decode_utf8(data, "exposition")

    families: dict[str, dict] = {}
    samples: list[dict] = []
    unlabelled: dict[str, list[float]] = {}
    lines_by_key: dict[tuple, list[int]] = {}
    # Label blocks repeat a lot (every histogram shares its non-"le" labels, many families
    # share a model label); parse_labels is the costly step, so parse each distinct block once.
    parsed_blocks: dict[str, dict] = {}

    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            _read_comment(line, number, families)
            continue
        sample = _read_sample(line, number, parse_labels, parsed_blocks)
        samples.append(sample)
        name = sample["name"]
        if _family_of(name, families) is None:
            families[name] = {"name": name, "type": "unknown", "help": None}
        if not sample["labels"]:
            unlabelled.setdefault(name, []).append(sample["value"])
        key = (name, tuple(sorted(sample["labels"].items())))
        lines_by_key.setdefault(key, []).append(number)

    duplicates = [{"name": name, "labels": dict(labels), "lines": lines}
                  for (name, labels), lines in lines_by_key.items() if len(lines) > 1]
    return {"families": list(families.values()), "samples": samples,
            "unlabelled": unlabelled, "duplicates": duplicates}


def _invalid(number: int, message: str) -> LoadError:
    return LoadError("invalid-exposition", message, line=number)


def _read_comment(line: str, number: int, families: dict) -> None:
    words = line[1:].split(None, 2)
    if not words or words[0] not in ("HELP", "TYPE"):
        return  # an ordinary comment
    keyword = words[0]
    if len(words) < 2 or not _METRIC_NAME.fullmatch(words[1]):
        raise _invalid(number, f"# {keyword} line without a valid metric name")
    name = words[1]
    family = families.setdefault(name, {"name": name, "type": "unknown", "help": None})
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


def _read_sample(line: str, number: int, parse_labels, parsed_blocks: dict) -> dict:
    match = _SAMPLE_LINE.fullmatch(line)
    if match is None:
        raise _invalid(number, f"not a sample line: {line[:80]!r}")
    name, label_block, rest = match.group("name", "labels", "rest")
    labels = {}
    if label_block is not None:
        parsed = parsed_blocks.get(label_block)
        if parsed is None:
            try:
                parsed = parse_labels(label_block[1:-1])
            except ValueError:
                raise _invalid(number, f"invalid labels in {line[:80]!r}") from None
            # Quoted UTF-8 label names are newer than 0.0.4; __name__ would rename the sample.
            bad = [key for key in parsed if not _LABEL_NAME.fullmatch(key) or key == "__name__"]
            if bad:
                raise _invalid(number, f"invalid label name {bad[0]!r}")
            parsed_blocks[label_block] = parsed
        labels = dict(parsed)  # each sample owns its dict
    elif rest.lstrip(" \t").startswith("{"):
        raise _invalid(number, f"unterminated or malformed label block in {line[:80]!r}")
    elif rest and rest[0] not in " \t":
        raise _invalid(number, f"invalid metric name in {line[:80]!r}")
    fields = rest.split()
    if not 1 <= len(fields) <= 2:
        raise _invalid(number, f"expected a value and an optional timestamp after {name}, got {rest.strip()!r}")
    value = _parse_value(fields[0], number)
    timestamp = None
    if len(fields) == 2:
        if not _TIMESTAMP.fullmatch(fields[1]):
            raise _invalid(number, f"timestamp {fields[1]!r} is not an integer (milliseconds)")
        timestamp = float(fields[1])
    return {"name": name, "labels": labels, "value": value, "timestamp": timestamp, "line": number}


def _parse_value(token: str, number: int) -> float:
    # float() also accepts "1_000"; the exposition format does not.
    try:
        if "_" in token:
            raise ValueError
        return float(token)
    except ValueError:
        raise _invalid(number, f"sample value {token!r} is not a number") from None


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

