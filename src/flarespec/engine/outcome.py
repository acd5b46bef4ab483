"""What a validation run found (its `Outcome`): violations, warnings and the values it
computed. The output room renders it as an `output.model.Report`, the one Report."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

SHORTEN_AT = 160
# Violations (and, counted apart, warnings) kept per rule id; the rest are only counted in
# Outcome.suppressed. One broken stream of a million events would otherwise build millions of
# violations (gigabytes) that nobody reads: the first hundred locate the fault.
MAX_KEPT_PER_RULE = 100
# str(int) refuses integers beyond 4300 digits (CPython's int_max_str_digits); such a value
# is described by its size instead of written out.
_MAX_SHOWN_INT_BITS = 14_000
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Piece(str):
    """Literal JSON punctuation in the stream of pieces, as opposed to a string value."""


def shown(value: Any, limit: int = SHORTEN_AT, *, bare_keys: bool = False) -> str:
    """A value as a person reads it in a message: compact JSON text (``null``, ``"x"``,
    ``{"max": 2}``), never a Python repr, cut after ``limit`` characters with "…".

    Rendered without recursion and only as far as ``limit``, so a value nested 5000 deep or
    holding a million items costs O(limit) and never raises RecursionError. ``bare_keys``
    writes identifier-like keys unquoted, as in a YAML flow mapping (``{equals: null}``),
    which is how spec arguments are shown."""
    text, complete = _render(value, limit, bare_keys=bare_keys)
    return text if complete else text + "…"


def json_text(value: Any, *, sort_keys: bool = False) -> str:
    """The whole JSON text of ``value`` without recursion: the fallback for values nested too
    deep for ``json.dumps`` (NaN and infinities are written as ``NaN``/``Infinity``)."""
    return _render(value, None, sort_keys=sort_keys)[0]


def _render(value: Any, limit: int | None, *, bare_keys: bool = False,
            sort_keys: bool = False) -> tuple[str, bool]:
    """(text, complete): the pieces joined until more than ``limit`` characters."""
    parts: list[str] = []
    size = 0
    for piece in _pieces(value, limit, bare_keys, sort_keys):
        parts.append(piece)
        size += len(piece)
        if limit is not None and size > limit:
            return "".join(parts)[:limit], False
    return "".join(parts), True


def _pieces(value: Any, limit: int | None, bare_keys: bool, sort_keys: bool) -> Iterator[str]:
    """The JSON text of ``value`` as a stream of pieces, depth-first with an explicit stack
    of member iterators (one per open container) instead of recursion."""
    stack: list[Iterator] = [iter((value,))]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
        elif type(item) is _Piece:
            yield item
        elif isinstance(item, dict):
            yield "{"
            stack.append(_members(item, bare_keys, sort_keys, limit))
        elif isinstance(item, (list, tuple)):
            yield "["
            stack.append(_items(item))
        elif isinstance(getattr(item, "source", None), (dict, str)):
            stack.append(iter((item.source,)))  # a compiled condition or formula: as written
        else:
            yield _scalar(item, limit)


_END = object()


def _members(mapping: dict, bare_keys: bool, sort_keys: bool, limit: int | None) -> Iterator:
    entries = sorted(mapping.items(), key=lambda entry: str(entry[0])) if sort_keys \
        else mapping.items()
    for number, (key, item) in enumerate(entries):
        name = key if isinstance(key, str) else str(key)
        if not (bare_keys and _KEY.fullmatch(name)):
            name = _scalar(name, limit)
        yield _Piece(f"{', ' if number else ''}{name}: ")
        yield item
    yield _Piece("}")


def _items(items) -> Iterator:
    for number, item in enumerate(items):
        if number:
            yield _Piece(", ")
        yield item
    yield _Piece("]")


def _scalar(value: Any, limit: int | None) -> str:
    if isinstance(value, str):
        # a cut string still overflows the limit (its quotes), so the caller cuts the text
        return json.dumps(value if limit is None else value[:limit], ensure_ascii=False)
    if isinstance(value, int) and not isinstance(value, bool) and \
            value.bit_length() > _MAX_SHOWN_INT_BITS:
        if limit is None:  # whole text (a canonical key): exact, in hexadecimal
            return f"<integer {value:#x}>"
        return f"<integer of about {int(value.bit_length() * math.log10(2)) + 1} digits>"
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    text = str(value)
    return text if limit is None else text[:limit]


def _size(value: Any) -> str:
    if isinstance(value, str):
        return f"{len(value)} chars"
    if isinstance(value, dict):
        return f"{len(value)} members"
    if isinstance(value, (list, tuple)):
        return f"{len(value)} items"
    return type(value).__name__


def shorten(value: Any, limit: int = SHORTEN_AT) -> Any:
    """Keep receipts readable and strict JSON: a value whose JSON text is longer than
    ``limit`` becomes that text cut, with its size said; NaN/Infinity and non-JSON values
    become text. Never recursive, so any depth is safe."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # receipts are strict JSON: NaN/Infinity become text
    if isinstance(value, int) and not isinstance(value, bool) and \
            value.bit_length() > _MAX_SHOWN_INT_BITS:
        return _scalar(value, limit)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text, complete = _render(value, limit)
    if not complete:
        return f"{text}… ({_size(value)})"
    try:  # short, hence shallow: proves the value itself is strict JSON for the receipt
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return text
    return value


def under_cap(kept: dict, rule_id: str, severity: str) -> bool:
    """Whether ``kept`` ((rule id, is error) -> violations kept) has room for one more of
    this rule and severity (MAX_KEPT_PER_RULE)."""
    return kept.get((rule_id, severity == "error"), 0) < MAX_KEPT_PER_RULE


def counted_in(kept: dict, violation: "Violation") -> bool:
    """Count the violation into ``kept`` when there is room; False when its rule is full."""
    key = (violation.rule, violation.severity == "error")
    count = kept.get(key, 0)
    if count >= MAX_KEPT_PER_RULE:
        return False
    kept[key] = count + 1
    return True


@dataclass(frozen=True)
class Violation:
    """One broken rule at one place. `severity` "error" rejects; "warning" only reports."""

    rule: str
    severity: str
    message: str
    file: str | None = None
    location: str | None = None
    expected: Any = None
    actual: Any = None
    binding: str | None = None
    line: int | None = None  # 1-based line of `location` in `file`, when the loader knows it
    # where `expected` was read, when another file: {"file", "location", "line"}
    expected_from: dict | None = None

    def as_dict(self) -> dict:
        entry = {
            "rule": self.rule,
            "severity": self.severity,
            "file": self.file,
            "location": self.location,
            "message": self.message,
        }
        if self.expected is not None:
            entry["expected"] = shorten(self.expected)
        if self.actual is not None:
            entry["actual"] = shorten(self.actual)
        if self.binding is not None:
            entry["binding"] = self.binding
        if self.line is not None:
            entry["line"] = self.line
        if self.expected_from is not None:
            entry["expected_from"] = self.expected_from
        return entry


@dataclass
class Outcome:
    """Everything one spec found in one set of documents."""

    spec_id: str
    violations: list[Violation] = field(default_factory=list)
    warnings: list[Violation] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    identities: dict[str, Any] = field(default_factory=dict)
    metric: dict[str, Any] | None = None
    suppressed: dict[str, int] = field(default_factory=dict)
    # how many violations are kept per (rule id, is-error); see MAX_KEPT_PER_RULE
    _kept: dict[tuple[str, bool], int] = field(default_factory=dict, repr=False)
    _unkept_errors: int = field(default=0, repr=False)

    @property
    def ok(self) -> bool:
        return not self.violations and not self._unkept_errors

    def accepts(self, rule_id: str, severity: str) -> bool:
        """Whether a violation of this rule and severity would still be kept. When False, a
        caller may skip building the violation (its message) and call ``suppress`` instead."""
        return under_cap(self._kept, rule_id, severity)

    def add(self, violation: Violation) -> None:
        """Keep the violation, or only count it in ``suppressed`` once its rule already has
        MAX_KEPT_PER_RULE of that severity. Either way an error makes the report not ok."""
        if not counted_in(self._kept, violation):
            self.suppress(violation.rule, violation.severity)
            return
        (self.violations if violation.severity == "error" else self.warnings).append(violation)

    def suppress(self, rule_id: str, severity: str, count: int = 1) -> None:
        """Count ``count`` violations of a rule that were not kept (nor built)."""
        self.suppressed[rule_id] = self.suppressed.get(rule_id, 0) + count
        if severity == "error":
            self._unkept_errors += count

    def rule_ids(self) -> set[str]:
        return {v.rule for v in self.violations}
