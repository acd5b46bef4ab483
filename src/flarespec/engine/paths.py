"""Selections into JSON-like values: JSONPath (compiled once), pointer templates and locations.

A spec names places in documents in two ways:

* a JSONPath (``$.groups[*].id``) selects zero or more places; it is parsed by jsonpath-ng once,
  at spec load. Plain paths (names, indices, ``[*]``) are then walked by a small Python loop,
  which is several times faster than jsonpath-ng's ``find`` on large arrays (slices of lists
  included, with jsonpath-ng's semantics); filters and recursive descent fall back to
  jsonpath-ng itself.
* a pointer template (``/shelves/{shelf@index}/items/{item@index}``) addresses one
  place whose keys depend on the current iteration. Segments are split once; only the
  ``{...}`` placeholders are filled per binding, so nothing is re-parsed per element. A
  segment ``[key=value]`` picks the first list element whose ``key`` equals ``value``.

Every match carries its location as a normalised JSONPath string (``$.a['b.c'][0]``), which
is what violations report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from flarespec.engine.report import shown
from flarespec.loaders.locations import child_location  # re-exported: the one location writer

INDEX = re.compile(r"-?[0-9]+")  # ASCII digits only: int() would also read "١" or "０"


class PathSyntaxError(ValueError):
    """A JSONPath or pointer that cannot be parsed."""


class Match:
    """A selected value and where it is. The location string is built only when asked for
    (on a failure), because most matches pass and formatting paths dominated the run time."""

    __slots__ = ("value", "_base", "_keys")

    def __init__(self, value: Any, location: str, keys: tuple = ()):
        self.value, self._base, self._keys = value, location, keys

    @property
    def location(self) -> str:
        if self._keys:
            self._base, self._keys = _join(self._base, self._keys), ()
        return self._base

    def child(self, value: Any, key) -> "Match":
        return Match(value, self._base, self._keys + (key,))

    def __eq__(self, other) -> bool:
        return isinstance(other, Match) and (self.value, self.location) == \
            (other.value, other.location)

    def __repr__(self) -> str:
        return f"Match({self.value!r}, {self.location!r})"


# --------------------------------------------------------------------------- JSONPath

class _Wildcard:
    """The ``*`` step of a compiled path; pickled by name, so a cached compiled spec (see
    flarespec.spec.cache) still holds this very object and ``step is _ALL`` stays true."""

    def __reduce__(self):
        return "_ALL"


_ALL = _Wildcard()
WILDCARD = _ALL  # the step ``*`` in CompiledJsonPath.steps


class CompiledJsonPath:
    """A JSONPath parsed once; ``find`` applies it to any value."""

    __slots__ = ("source", "_steps", "_library_path", "_fixed")

    def __init__(self, source: str):
        self.source = source
        parsed = parse_jsonpath(source)
        self._steps = _plain_steps(parsed)
        self._library_path = None if self._steps is not None else parsed
        # names and indices only (``$.a.b[0]``): at most one value, walked without lists
        self._fixed = tuple(self._steps) if self._steps is not None and all(
            isinstance(step, (str, int)) for step in self._steps) else None

    @property
    def steps(self) -> tuple | None:
        """The path as keys, indices, slices and ``WILDCARD``; None when it is not a plain
        path (filters, unions, recursive descent: walked by jsonpath-ng)."""
        return None if self._steps is None else tuple(self._steps)

    def find(self, value: Any, base: "str | Match" = "$") -> list[Match]:
        start = base if isinstance(base, Match) else Match(value, base)
        if self._steps is None:
            try:
                found = self._library_path.find(value)
            except RecursionError:  # jsonpath-ng recurses over a long path's parts
                raise ValueError(f"JSONPath {shown(self.source)} is nested too deeply to "
                                 f"apply") from None
            return [Match(datum.value, start.location, tuple(_datum_keys(datum)))
                    for datum in found]
        return self._walk_matches(start)

    def values(self, value: Any) -> list:
        """The selected values alone, in the order ``find`` gives them: the walk without
        the matches (a passing check never needs a location)."""
        if self._fixed is not None:
            for step in self._fixed:
                if isinstance(step, str):
                    if not isinstance(value, dict) or step not in value:
                        return []
                elif not isinstance(value, list) or not -len(value) <= step < len(value):
                    return []
                value = value[step]
            return [value]
        if self._steps is None:
            return [match.value for match in self.find(value)]
        current = [value]
        for step in self._steps:
            following: list = []
            for container in current:
                if step is _ALL:
                    if isinstance(container, list):
                        following.extend(container)
                    elif isinstance(container, dict):
                        following.extend(container.values())
                elif isinstance(step, slice):
                    if isinstance(container, list):
                        following.extend(container[index]
                                         for index in range(len(container))[step])
                elif isinstance(step, int):
                    if isinstance(container, list) and -len(container) <= step < len(container):
                        following.append(container[step])
                elif isinstance(container, dict) and step in container:
                    following.append(container[step])
            current = following
            if not current:
                break
        return current

    def _walk_matches(self, start: Match) -> list[Match]:
        current = [start]
        for step in self._steps:
            following: list[Match] = []
            for match in current:
                container = match.value
                if step is _ALL:
                    if isinstance(container, list):
                        following.extend(match.child(item, index)
                                         for index, item in enumerate(container))
                    elif isinstance(container, dict):
                        following.extend(match.child(item, key)
                                         for key, item in container.items())
                elif isinstance(step, slice):
                    if isinstance(container, list):
                        following.extend(match.child(container[index], index)
                                         for index in range(len(container))[step])
                elif isinstance(step, int):
                    if isinstance(container, list) and -len(container) <= step < len(container):
                        index = step % len(container)
                        following.append(match.child(container[index], index))
                elif isinstance(container, dict) and step in container:
                    following.append(match.child(container[step], step))
            current = following
            if not current:
                break
        return current


def parse_jsonpath(source: str):
    """``source`` parsed by jsonpath-ng's extended parser, refused (PathSyntaxError) when it
    does not parse or when it would run a regular expression (:func:`refuse_regexes`)."""
    try:
        from jsonpath_ng.ext import parse
        parsed = parse(source)
    except Exception as error:  # jsonpath-ng raises several exception types
        raise PathSyntaxError(f"invalid JSONPath {source!r}: {error}") from None
    refuse_regexes(parsed, source)
    return parsed


# What in jsonpath-ng's extended syntax runs a regular expression on the evidence, with
# Python's backtracking ``re`` (``(a+)+$`` takes exponential time on a 34-character
# string): the filter operator ``=~`` (ext/filter.py, ``re.search``) and the named
# operator ``sub(/regex/, repl)`` (ext/string.py, ``re.sub``). The other named operators
# take no pattern: ``split(chars, segment, max)`` splits on a literal (``str.split``);
# ``str()``, ``len``, ``keys``, ``path`` and ``sorted`` read no pattern at all.
REGEX_OPERATOR = "=~"
_USE_RE2 = ("a spec never runs a backtracking regex: select the values without it and "
            "check them with a `regex` assertion (RE2, linear time) instead")


def refuse_regexes(parsed, source: str) -> None:
    """Raise PathSyntaxError when the parsed path contains a construct that runs a regex:
    an ``=~`` filter or ``sub()``. The tree is walked through every attribute holding a
    path (lists and tuples included), with an explicit stack, so new node types are
    covered too."""
    from jsonpath_ng.jsonpath import JSONPath

    pending, seen = [parsed], set()
    while pending:
        node = pending.pop()
        if isinstance(node, (list, tuple)):
            pending.extend(node)
            continue
        if not isinstance(node, JSONPath) or id(node) in seen:
            continue
        seen.add(id(node))
        kind = type(node).__name__
        if kind == "Expression" and getattr(node, "op", None) == REGEX_OPERATOR:
            raise PathSyntaxError(f"JSONPath {source!r} filters with the regex operator "
                                  f"'=~', which runs Python's backtracking re; {_USE_RE2}")
        if kind == "Sub" or hasattr(node, "regex"):
            raise PathSyntaxError(f"JSONPath {source!r} uses `sub(/regex/, ...)`, which "
                                  f"runs Python's backtracking re; {_USE_RE2}")
        pending.extend(vars(node).values() if hasattr(node, "__dict__") else
                       (getattr(node, slot, None) for slot in getattr(node, "__slots__", ())))


def _plain_steps(node) -> list | None:
    """The path as a list of keys / indices / _ALL, or None when it needs jsonpath-ng.

    jsonpath-ng nests ``Child(left, right)`` once per segment, so the tree is walked with an
    explicit stack: a path of thousands of segments must not exhaust the recursion limit."""
    from jsonpath_ng import jsonpath as jp

    steps: list = []
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, jp.Child):
            pending += [node.right, node.left]  # the left part comes first
            continue
        step = _plain_step(node)
        if step is None:
            return None
        steps += step
    return steps


def _plain_step(node) -> list | None:
    """One non-Child node as its steps ([] for the root), or None when it is not plain."""
    from jsonpath_ng import jsonpath as jp

    kind = type(node).__name__
    if isinstance(node, jp.Root) or kind == "This":
        return []
    if isinstance(node, jp.Fields):
        if len(node.fields) != 1:
            return None
        return [_ALL if node.fields[0] == "*" else node.fields[0]]
    if isinstance(node, jp.Index):
        return list(node.indices) if len(node.indices) == 1 else None
    if kind == "Wildcard":
        return [_ALL]
    if isinstance(node, jp.Slice):
        if node.start is None and node.end is None and node.step is None:
            return [_ALL]
        # jsonpath-ng: a slice of a list is range(len)[start:end:step]; of anything else, nothing
        return [slice(node.start, node.end, node.step)] if node.step != 0 else None
    return None


def _datum_keys(datum) -> list:
    from jsonpath_ng import jsonpath as jp

    keys: list = []
    while datum is not None and datum.path is not None:
        path = datum.path
        if isinstance(path, jp.Index):
            index = path.indices[0]
            container = datum.context.value if datum.context is not None else None
            if index < 0 and isinstance(container, list) and container:
                index %= len(container)  # report $.a[2], not $.a[-1], like the fast path
            keys.append(index)
        elif isinstance(path, jp.Fields):
            keys.append(path.fields[0])
        datum = datum.context
    keys.reverse()
    return keys


def _join(base: str, keys) -> str:
    for key in keys:
        base = child_location(base, key)
    return base


# --------------------------------------------------------------------------- pointers

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_FILTER_SEGMENT = re.compile(r"^\[([^=\]]+)=(.*)\]$")


@dataclass(frozen=True)
class Template:
    """A string with ``{placeholder}`` parts, split once. A template that is all literal, or
    one placeholder alone (``{item@index}``: most pointer segments), renders without a join."""

    source: str
    parts: tuple  # str literals and Placeholder objects, alternating
    literal: str | None = field(init=False, compare=False, repr=False)
    single: str | None = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        placeholders = self.placeholders
        object.__setattr__(self, "literal", None if placeholders else "".join(self.parts))
        object.__setattr__(self, "single", placeholders[0]
                           if len(self.parts) == 1 and placeholders else None)

    @property
    def placeholders(self) -> tuple[str, ...]:
        return tuple(p.text for p in self.parts if isinstance(p, _Placeholder))

    def render(self, fill: Callable[[str], Any]) -> str:
        if self.literal is not None:
            return self.literal
        if self.single is not None:
            return str(fill(self.single))
        return "".join(str(fill(p.text)) if isinstance(p, _Placeholder) else p for p in self.parts)


def compile_template(source: str) -> Template:
    parts: list = []
    position = 0
    for found in _PLACEHOLDER.finditer(source):
        if found.start() > position:
            parts.append(source[position:found.start()])
        parts.append(_Placeholder(found.group(1).strip()))
        position = found.end()
    if position < len(source):
        parts.append(source[position:])
    literal = "".join(p for p in parts if isinstance(p, str))
    if "{" in literal or "}" in literal:
        raise PathSyntaxError(f"unbalanced braces in template {source!r}")
    return Template(source, tuple(parts))


@dataclass(frozen=True, slots=True)
class _Placeholder:
    """A placeholder's inner text, e.g. ``group.id`` or ``packet:$.run``."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Segment:
    key: Template
    filter_value: Template | None = None  # set for a "[key=value]" segment


@dataclass(frozen=True)
class PointerTemplate:
    source: str
    segments: tuple[Segment, ...]
    # True when some segment has a placeholder, i.e. ``fill`` is ever called
    dynamic: bool = field(init=False, compare=False, repr=False)

    @property
    def placeholders(self) -> tuple[str, ...]:
        found: list[str] = []
        for segment in self.segments:
            found.extend(segment.key.placeholders)
            if segment.filter_value is not None:
                found.extend(segment.filter_value.placeholders)
        return tuple(found)

    def __post_init__(self):
        object.__setattr__(self, "dynamic", bool(self.placeholders))

    def find(self, value: Any, fill: Callable[[str], Any] | None, base: "str | Match" = "$"
             ) -> list[Match]:
        start = base if isinstance(base, Match) else Match(value, base)
        keys: list = list(start._keys)
        found = self._walk(value, fill, keys)
        return [] if found is _MISSING else [Match(found, start._base, tuple(keys))]

    def values(self, value: Any, fill: Callable[[str], Any] | None) -> list:
        """The value the pointer names, as a list of one, or []; no match is built."""
        found = self._walk(value, fill, None)
        return [] if found is _MISSING else [found]

    def _walk(self, value: Any, fill, keys: list | None) -> Any:
        """The value at the pointer (``_MISSING`` when nothing is there); the keys walked
        are appended to ``keys`` unless it is None."""
        for segment in self.segments:
            if segment.filter_value is not None:
                field_name = segment.key.render(fill)
                wanted = segment.filter_value.render(fill)
                if not isinstance(value, list):
                    return _MISSING
                for step, item in enumerate(value):
                    if isinstance(item, dict) and item.get(field_name) == wanted:
                        value = item
                        break
                else:
                    return _MISSING
            else:
                step = segment.key.render(fill)
                if isinstance(value, dict):
                    if step not in value:
                        return _MISSING
                    value = value[step]
                elif isinstance(value, list):
                    if not INDEX.fullmatch(step):
                        return _MISSING
                    index = int(step)
                    if not -len(value) <= index < len(value):
                        return _MISSING
                    step = index % len(value)
                    value = value[step]
                else:
                    return _MISSING
            if keys is not None:
                keys.append(step)
        return value


_MISSING = object()


def compile_pointer(source: str) -> PointerTemplate:
    if not source.startswith("/"):
        raise PathSyntaxError(f"a pointer starts with '/': {source!r}")
    segments = []
    for raw in source[1:].split("/") if source != "/" else []:
        raw = raw.replace("~1", "/").replace("~0", "~")
        found = _FILTER_SEGMENT.match(raw)
        if found:
            segments.append(Segment(compile_template(found.group(1)), compile_template(found.group(2))))
        else:
            segments.append(Segment(compile_template(raw)))
    return PointerTemplate(source, tuple(segments))
