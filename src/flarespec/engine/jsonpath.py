"""flarespec's JSONPath: a written subset of RFC 9535, parsed once at spec load, walked by one
walker.

Every construct of RFC 9535 either has its RFC meaning here or is refused when the path is
compiled (``PathSyntaxError``, a message naming the construct); nothing is read differently
in silence. What is supported (docs/spec-language.md, "Path language"):

* the root ``$``; child segments ``.name``, ``.*``, ``[selectors]``; the descendant segment
  ``..name``, ``..*``, ``..[selectors]``;
* selectors: names (shorthand with RFC's name characters, non-ASCII included, or quoted
  ``['..']`` / ``[".."]`` with RFC's escapes), ``*``, indices (RFC integers: no leading
  zero, no ``-0``, within ±(2^53-1)), slices ``start:end:step`` (Python's slice semantics,
  which are RFC's; a slice selects from arrays only), several selectors ``[a,b]``;
* filters ``[?expr]``: ``==  != < <= > >=`` with RFC's comparison rules (only numbers and
  strings are ordered; ``true`` is no number; arrays and objects compare deeply),
  ``&&``, ``||``, ``!``, parentheses, existence tests ``@.a`` / ``$.a``, singular queries
  ``@.a[0]`` / ``$.a`` as comparables, literals (strings with escapes, RFC numbers, ``true``,
  ``false``, ``null``) and the function extensions ``length()``, ``count()`` and
  ``value()`` with RFC's type rules.

Refused, by name: the function extensions ``match()`` and ``search()`` (they run a regular
expression on the evidence: a spec never does, it checks values with the RE2 ``regex``
assertion), any other function, and jsonpath-ng forms that are not RFC 9535 (``=~``,
backtick operators such as `` `sub(...)` ``, a bare member name in a filter, an unquoted name in
brackets).

Values come from untrusted documents nested thousands deep: the walker never recurses over a
document (descendant segments and deep equality use explicit stacks). Recursion follows only
the path's own filter nesting, which the parser bounds (``MAX_NESTING``), as it bounds a
query's length (``MAX_SEGMENTS``). A selection, and each step of it, holds at most
``MAX_SELECTED`` nodes (``SelectionTooLarge``): RFC 9535 keeps a node as often as it is
selected, and nested descendant segments select it once per ancestor they pass.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Callable

from flarespec.engine.problems import Unresolvable
from flarespec.engine.readers import fixed_reader
from flarespec.engine.values import is_number as _number, json_type
from flarespec.loaders.locations import child_location, location_of

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # fullmatch: "a\n" is no identifier

MAX_NESTING = 64  # parentheses, filters and function calls inside one another
MAX_INT = 2 ** 53 - 1  # I-JSON's exact integer range, RFC 9535's bound on indices and slices
# Segments of one query (a filter's queries each count their own), and of a pointer: the
# bundled spec's longest path has 6. A literal path becomes generated code (readers.py);
# one of 160k segments cost 18 s and 2.5 GB to compile.
MAX_SEGMENTS = 256
# Nodes one selection may hold, and so may each step of it (a descendant segment's visit
# included): the most events or samples a loader admits (MAX_SSE_EVENTS, MAX_SAMPLES).
# Nested descendant segments select a node once per ancestor they pass (RFC 9535 keeps the
# duplicates): ``$..*..*..*`` over 300 nested arrays is 4.5M nodes, over 984 it is 159M.
MAX_SELECTED = 1 << 20
SHOWN_AT_MOST = 120  # characters of a path a message repeats


class PathSyntaxError(ValueError):
    """A JSONPath or pointer that cannot be parsed (or uses a construct flarespec refuses)."""


class SelectionTooLarge(Unresolvable):
    """A selection, or a step of it, would hold more than MAX_SELECTED nodes: refused (the
    violation of the rule or iteration that selects, a refusal of ``flarespec path``),
    never cut short."""


def shown_path(source: str) -> str:
    """A path as a message repeats it: quoted, its middle left out beyond SHOWN_AT_MOST
    characters (a spec's path may be 400 KiB long)."""
    if len(source) <= SHOWN_AT_MOST:
        return repr(source)
    half = SHOWN_AT_MOST // 2
    return f"{source[:half]!r}...{source[-half:]!r} ({len(source):,} characters)"


# --------------------------------------------------------------------------- matches

class Match:
    """A selected value and where it is: the location a walk started at and the keys from
    there. A match made by a walk keeps only the match it was selected from (``_up``) and
    its own key (``_key``), so a child costs the same at any depth and every match of one
    walk shares its ancestors' keys (a node 900 deep copied 900 keys, and ``$..*..*`` over
    nested arrays copied them for every node: gigabytes). The location string is built
    only when asked for (on a failure), because most matches pass and formatting paths
    dominated the run time."""

    __slots__ = ("value", "_at", "_key", "_up")

    def __init__(self, value: Any, location: str | None, keys=(), up: "Match | None" = None):
        # a start: its location and the keys from there (``_up`` None); a child (``up``
        # given): the match it was selected from and its one key, ``keys``
        self.value, self._at, self._key, self._up = value, location, keys, up

    @property
    def _base(self) -> str:
        """The location the walk that selected this match started at."""
        match = self
        while match._up is not None:
            match = match._up
        return match._at

    @property
    def _keys(self) -> tuple:
        """The keys from ``_base`` to this match."""
        keys, match = [], self
        while match._up is not None:
            keys.append(match._key)
            match = match._up
        keys.reverse()
        return match._key + tuple(keys)

    @property
    def location(self) -> str:
        """The location, kept by this match and by each match it was selected through
        (siblings and descendants then add one step each)."""
        chain, match = [], self
        while match._up is not None:
            chain.append(match)
            match = match._up
        if match._key:
            match._at, match._key = location_of(match._key, match._at), ()
        location = match._at
        for match in reversed(chain):
            location = child_location(location, match._key)
            match._at, match._key, match._up = location, (), None
        return location

    def child(self, value: Any, key) -> "Match":
        return Match(value, None, key, self)

    def moved(self, value: Any) -> "Match":
        """A match of ``value`` at this match's place (its keys shared, not copied)."""
        return Match(value, self._at, self._key, self._up)

    def __eq__(self, other) -> bool:
        return isinstance(other, Match) and (self.value, self.location) == \
            (other.value, other.location)

    def __repr__(self) -> str:
        return f"Match({self.value!r}, {self.location!r})"


# --------------------------------------------------------------------------- the tree

class _Wildcard:
    """The ``*`` selector; pickled by name, so a cached compiled spec (see
    flarespec.compiler.cache) still holds this very object and ``step is _ALL`` stays true."""

    def __reduce__(self):
        return "_ALL"

    def __repr__(self) -> str:
        return "*"


_ALL = _Wildcard()
WILDCARD = _ALL

# A selector is a str (name), an int (index), a slice, _ALL or a _Filter. A segment is a
# tuple (descendant: bool, selectors: tuple).


class _Nothing:
    """RFC 9535's Nothing: what an empty singular query or a failed function gives."""

    def __reduce__(self):
        return "NOTHING"

    def __repr__(self) -> str:
        return "Nothing"


NOTHING = _Nothing()


class _Filter:
    __slots__ = ("expression",)

    def __init__(self, expression):
        self.expression = expression


class _Query:
    """A query inside a filter: relative (``@``) or absolute (``$``)."""

    __slots__ = ("relative", "segments", "keys", "_read")

    def __init__(self, relative: bool, segments: tuple):
        self.relative, self.segments = relative, segments
        self.keys = _singular_keys(segments)  # names and indices only, else None
        self._read = None  # for keys: their generated reader (engine/readers.py), on first use

    def __getstate__(self):
        return self.relative, self.segments

    def __setstate__(self, state):
        self.__init__(*state)

    def nodes(self, current, root) -> list:
        return _walk_values(self.segments, [current if self.relative else root], root)

    def single(self, current, root):
        """The value a singular query selects, or NOTHING."""
        read = self._read
        if read is None:
            read = self._read = fixed_reader(_steps_of(self.keys))
        found = read(current if self.relative else root)
        return found[0] if found else NOTHING

    def test(self, current, root) -> bool:
        if self.keys is not None:
            return self.single(current, root) is not NOTHING
        return bool(self.nodes(current, root))


def _steps_of(keys: tuple) -> tuple:
    """Names and indices as readers' steps (engine/readers.py): a name reads only an
    object's member, an index only a list's element."""
    return tuple((key, None) if type(key) is str else (None, key) for key in keys)


def _singular_keys(segments) -> tuple | None:
    keys = []
    for descendant, selectors in segments:
        if descendant or len(selectors) != 1 or type(selectors[0]) not in (str, int):
            return None
        keys.append(selectors[0])
    return tuple(keys)


class _Or:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items

    def test(self, current, root) -> bool:
        return any(item.test(current, root) for item in self.items)


class _And(_Or):
    __slots__ = ()

    def test(self, current, root) -> bool:
        return all(item.test(current, root) for item in self.items)


class _Not(_Or):
    __slots__ = ()

    def test(self, current, root) -> bool:
        return not self.items.test(current, root)


class _Literal:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def single(self, current, root):
        return self.value


class _Function:
    """``length()``, ``count()`` or ``value()``: a ValueType result."""

    __slots__ = ("name", "argument")

    def __init__(self, name, argument):
        self.name, self.argument = name, argument

    def single(self, current, root):
        if self.name == "length":
            value = self.argument.single(current, root)
            if isinstance(value, (str, list, dict)):
                return len(value)
            return NOTHING
        nodes = self.argument.nodes(current, root)
        if self.name == "count":
            return len(nodes)
        return nodes[0] if len(nodes) == 1 else NOTHING


class _Compare:
    __slots__ = ("operator", "left", "right")

    def __init__(self, operator, left, right):
        self.operator, self.left, self.right = operator, left, right

    def test(self, current, root) -> bool:
        left, right = self.left.single(current, root), self.right.single(current, root)
        operator = self.operator
        if operator == "==":
            return _equal(left, right)
        if operator == "!=":
            return not _equal(left, right)
        if operator == "<":
            return _less(left, right)
        if operator == ">":
            return _less(right, left)
        if operator == "<=":
            return _less(left, right) or _equal(left, right)
        return _less(right, left) or _equal(left, right)


def _pair(a, b):
    """Two numbers made comparable exactly: a float beside a Decimal becomes the Decimal of
    its shortest text (what the document or the literal spelled)."""
    if isinstance(a, Decimal) and isinstance(b, float) and math.isfinite(b):
        return a, Decimal(repr(b))
    if isinstance(b, Decimal) and isinstance(a, float) and math.isfinite(a):
        return Decimal(repr(a)), b
    return a, b


# RFC 9535 compares numbers as numbers, whatever their JSON token: integer and number are
# one kind here (values.json_type keeps them apart for the `type` kind)
_RFC_KIND = {"integer": "number"}


def _kind(value) -> str:
    kind = json_type(value)
    return _RFC_KIND.get(kind, kind)


def _equal(a, b) -> bool:
    """RFC 9535 equality: same kind and same value, arrays and objects deeply; iterative."""
    pending = [(a, b)]
    while pending:
        a, b = pending.pop()
        if a is NOTHING or b is NOTHING:
            if a is not b:
                return False
            continue
        kind = _kind(a)
        if kind != _kind(b):
            return False
        if kind == "number":
            a, b = _pair(a, b)
            try:
                if a != b:
                    return False
            except InvalidOperation:
                return False
        elif kind == "array":
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b))
        elif kind == "object":
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif a != b:
            return False
    return True


def _less(a, b) -> bool:
    if _number(a) and _number(b):
        a, b = _pair(a, b)
        try:
            return a < b
        except InvalidOperation:  # a Decimal NaN
            return False
    if isinstance(a, str) and isinstance(b, str):
        return a < b  # Unicode scalar values, as RFC 9535 orders strings
    return False


# --------------------------------------------------------------------------- the walker

def _children(value):
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return value.values()
    return ()


class _Ends:
    """On a descendant walk's stack: where the subtree of ``node`` began in the walk's list,
    popped once the subtree is done."""

    __slots__ = ("node", "begin")

    def __init__(self, node, begin: int):
        self.node, self.begin = node, begin


def _descendants(values: list) -> list:
    """Each of ``values`` and every array and object under it, each before its descendants,
    arrays in order: the nodes a descendant segment applies its selectors to (a string,
    number, boolean or null has no children, so no selector selects anything from it).

    A node given twice, or given and under another given node (``$..*..*``: the second
    segment is given every node), is walked once: where it comes again, its part of the
    list is copied (the same values; the duplicates RFC 9535 keeps, made at C speed, so
    only their number costs: SelectionTooLarge beyond MAX_SELECTED nodes)."""
    found: list = []
    given = frozenset(id(value) for value in values if isinstance(value, (list, dict))) \
        if len(values) > 1 else frozenset()
    spans: dict = {}  # id of a given node -> where its part of ``found`` lies
    for value in values:
        pending = [value]
        while pending:
            value = pending.pop()
            if type(value) is _Ends:
                spans[id(value.node)] = (value.begin, len(found))
                continue
            if id(value) in given:
                span = spans.get(id(value))
                if span is not None:
                    if len(found) + span[1] - span[0] > MAX_SELECTED:
                        raise SelectionTooLarge
                    found += found[span[0]:span[1]]
                    continue
                pending.append(_Ends(value, len(found)))
            found.append(value)
            if len(found) > MAX_SELECTED:
                raise SelectionTooLarge
            if isinstance(value, list):
                pending += [child for child in reversed(value) if isinstance(child, (list, dict))]
            elif isinstance(value, dict):
                pending += [child for child in reversed(value.values())
                            if isinstance(child, (list, dict))]
    return found


def _descendant_matches(matches: list) -> list:
    """``_descendants`` as matches, each made as its node is visited (no copies: a match of
    a node reached from another given match has another chain of keys)."""
    found: list = []
    for match in matches:
        pending = [match]
        while pending:
            match = pending.pop()
            found.append(match)
            if len(found) > MAX_SELECTED:
                raise SelectionTooLarge
            value = match.value
            if isinstance(value, list):
                pending += [Match(value[index], None, index, match)
                            for index in range(len(value) - 1, -1, -1)
                            if isinstance(value[index], (list, dict))]
            elif isinstance(value, dict):
                pending += [Match(item, None, key, match)
                            for key, item in reversed(value.items())
                            if isinstance(item, (list, dict))]
    return found


def _walk_values(segments, current: list, root) -> list:
    """The values the segments select from each of ``current``, in RFC 9535's order. One
    selector (the usual case) is applied by a loop of its own, with no call per value. No
    list of the walk grows beyond MAX_SELECTED values (SelectionTooLarge): a name or an
    index selects at most one value from each, the others are counted as they select."""
    for descendant, selectors in segments:
        if descendant:
            current = _descendants(current)
        following: list = []
        if len(selectors) == 1:
            selector = selectors[0]
            kind = type(selector)
            if kind is str:
                for value in current:
                    if isinstance(value, dict) and selector in value:
                        following.append(value[selector])
            elif kind is int:
                for value in current:
                    if isinstance(value, list) and -len(value) <= selector < len(value):
                        following.append(value[selector])
            elif selector is _ALL:
                for value in current:
                    if isinstance(value, list):
                        following.extend(value)
                    elif isinstance(value, dict):
                        following.extend(value.values())
                    else:
                        continue
                    if len(following) > MAX_SELECTED:
                        raise SelectionTooLarge
            else:
                for value in current:
                    _select_values(selector, value, following, root)
                    if len(following) > MAX_SELECTED:
                        raise SelectionTooLarge
        else:
            for value in current:
                for selector in selectors:
                    _select_values(selector, value, following, root)
                    if len(following) > MAX_SELECTED:
                        raise SelectionTooLarge
        current = following
        if not current:
            break
    return current


def _select_values(selector, value, out: list, root) -> None:
    kind = type(selector)
    if kind is str:
        if isinstance(value, dict) and selector in value:
            out.append(value[selector])
    elif kind is int:
        if isinstance(value, list) and -len(value) <= selector < len(value):
            out.append(value[selector])
    elif selector is _ALL:
        if isinstance(value, list):
            out.extend(value)
        elif isinstance(value, dict):
            out.extend(value.values())
    elif kind is slice:
        if isinstance(value, list) and selector.step != 0:
            out.extend(value[selector])
    else:
        test = selector.expression.test
        out.extend(child for child in _children(value) if test(child, root))


def _walk_matches(segments, current: list, root) -> list:
    """The matches the segments select from each of ``current``: the same walk as
    ``_walk_values``, each value with its keys, within the same bound."""
    for descendant, selectors in segments:
        if descendant:
            current = _descendant_matches(current)
        following: list = []
        if len(selectors) == 1 and type(selectors[0]) is str:  # the usual case, inline
            name = selectors[0]
            for match in current:
                value = match.value
                if isinstance(value, dict) and name in value:
                    following.append(Match(value[name], None, name, match))
        else:
            for match in current:
                for selector in selectors:
                    _select_matches(selector, match, following, root)
                    if len(following) > MAX_SELECTED:
                        raise SelectionTooLarge
        current = following
        if not current:
            break
    return current


def _select_matches(selector, match: Match, out: list, root) -> None:
    value = match.value
    kind = type(selector)
    if kind is str:
        if isinstance(value, dict) and selector in value:
            out.append(match.child(value[selector], selector))
    elif kind is int:
        if isinstance(value, list) and -len(value) <= selector < len(value):
            index = selector % len(value)
            out.append(match.child(value[index], index))
    elif selector is _ALL:
        if isinstance(value, list):
            out.extend(match.child(item, index) for index, item in enumerate(value))
        elif isinstance(value, dict):
            out.extend(match.child(item, key) for key, item in value.items())
    elif kind is slice:
        if isinstance(value, list) and selector.step != 0:
            out.extend(match.child(value[index], index)
                       for index in range(len(value))[selector])
    else:
        test = selector.expression.test
        if isinstance(value, list):
            out.extend(match.child(item, index) for index, item in enumerate(value)
                       if test(item, root))
        elif isinstance(value, dict):
            out.extend(match.child(item, key) for key, item in value.items()
                       if test(item, root))


# --------------------------------------------------------------------------- compiled paths

class CompiledJsonPath:
    """A JSONPath parsed once (:func:`parse_segments`); ``find`` applies it to any value."""

    __slots__ = ("source", "_segments", "_steps", "_fixed", "_read", "_counted")

    def __init__(self, source: str):
        self.source = source
        self._set(parse_segments(source))

    def _set(self, segments: tuple) -> None:
        self._segments = segments
        self._steps = [selectors[0] for descendant, selectors in segments] if all(
            not descendant and len(selectors) == 1 and type(selectors[0]) is not _Filter
            for descendant, selectors in segments) else None
        # names and indices only (``$.a.b[0]``): at most one value, read by its generated
        # reader (engine/readers.py), made on first use
        self._fixed = _singular_keys(segments)
        self._read = None
        # a descendant segment or several selectors may select a node more than once:
        # ``find`` counts the values first (their walk copies repeated parts at C speed),
        # so that matches are made only for a selection within the bound
        self._counted = any(descendant or len(selectors) > 1
                            for descendant, selectors in segments)

    def __getstate__(self):
        return self.source, self._segments

    def __setstate__(self, state):
        self.source = state[0]
        self._set(state[1])

    @property
    def steps(self) -> tuple | None:
        """The path as keys, indices, slices and ``WILDCARD``; None when it is not such a
        plain path (filters, several selectors, descendant segments)."""
        return None if self._steps is None else tuple(self._steps)

    @property
    def segments(self) -> tuple:
        """The parsed path: ``(descendant, selectors)`` per segment."""
        return self._segments

    def parent(self) -> "CompiledJsonPath":
        """The path without its last segment (``$`` stays ``$``): ``$.a[?@.b].c`` gives
        ``$.a[?@.b]``."""
        parser = _Parser(self.source)
        parser.query()
        ends = parser.ends
        return CompiledJsonPath(self.source[:ends[-2]] if len(ends) > 1 else "$")

    def find(self, value: Any, base: "str | Match" = "$") -> list[Match]:
        """The matches in ``value``; their locations continue ``base`` (a location, or the
        match ``value`` was selected by)."""
        start = base.moved(value) if isinstance(base, Match) else Match(value, base)
        try:
            if self._counted:
                _walk_values(self._segments, [value], value)
            return _walk_matches(self._segments, [start], value)
        except SelectionTooLarge:
            raise self._too_large() from None

    def find_keys(self, value: Any) -> list[tuple]:
        """The keys (member names, non-negative indices) from ``value`` to each match, in
        ``find``'s order: what an edit of the selected places walks."""
        return [match._keys for match in self.find(value)]

    def values(self, value: Any) -> list:
        """The selected values alone, in the order ``find`` gives them: the walk without
        the matches (a passing check never needs a location)."""
        if self._fixed is not None:
            return (self._read or self.reader())(value)
        try:
            return _walk_values(self._segments, [value], value)
        except SelectionTooLarge:
            raise self._too_large() from None

    def _too_large(self) -> SelectionTooLarge:
        return SelectionTooLarge(
            f"the JSONPath {shown_path(self.source)} selects more than {MAX_SELECTED:,} "
            f"nodes, the most one selection or any step of it may hold (a descendant "
            f"segment counts every node it visits, a node selected twice counts twice): "
            f"select fewer")

    def reader(self) -> Callable[[Any], list]:
        """``values`` as one function: for a path of names and indices alone its generated
        reader (engine/readers.py: a name reads an object's member, an index a list's
        element), else ``values`` itself."""
        if self._fixed is None:
            return self.values
        if self._read is None:
            self._read = fixed_reader(self.fixed_steps())
        return self._read

    def fixed_steps(self) -> tuple | None:
        """The steps (engine/readers.py) of a path of names and indices alone, else None."""
        if self._fixed is None:
            return None
        return _steps_of(self._fixed)

    def __repr__(self) -> str:
        return f"CompiledJsonPath({self.source!r})"


def parse_jsonpath(source: str) -> CompiledJsonPath:
    """``source`` compiled, or PathSyntaxError naming what is wrong or refused."""
    return CompiledJsonPath(source)


def parse_segments(source: str) -> tuple:
    if not isinstance(source, str):
        raise PathSyntaxError(f"a JSONPath is a string, got {source!r}")
    return _Parser(source).query()


# --------------------------------------------------------------------------- the parser

_WHITESPACE = " \t\n\r"
_DIGITS = "0123456789"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_FUNCTION_NAME = re.compile(r"[a-z][a-z0-9_]*")
_COMPARISONS = ("==", "!=", "<=", ">=", "<", ">")
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "/": "/", "\\": "\\"}
_HEX = re.compile(r"[0-9A-Fa-f]{4}")
_USE_RE2 = ("a spec never runs a backtracking regex: select the values without it and "
            "check them with a `regex` assertion (RE2, linear time) instead")
_REGEX_FUNCTIONS = ("match", "search")
_VALUE_FUNCTIONS = ("length", "count", "value")


def _name_first(char: str) -> bool:
    return ("a" <= char <= "z" or "A" <= char <= "Z" or char == "_"
            or "\x80" <= char <= "\ud7ff" or "\ue000" <= char <= "\U0010ffff")


def _name_char(char: str) -> bool:
    return _name_first(char) or "0" <= char <= "9"


class _Parser:
    """RFC 9535's grammar, by recursive descent over the path (never over a document)."""

    def __init__(self, source: str):
        self.source, self.at, self.depth = source, 0, 0
        self.ends: list[int] = []  # where each top-level segment ends

    # ------------------------------------------------------------- helpers
    def fail(self, reason: str, at: int | None = None):
        at = self.at if at is None else at
        raise PathSyntaxError(f"invalid JSONPath {shown_path(self.source)}: {reason} "
                              f"(at character {at + 1})")

    def refuse(self, construct: str, why: str):
        raise PathSyntaxError(f"JSONPath {shown_path(self.source)}: {construct} is not "
                              f"supported by flarespec's JSONPath: {why}")

    def peek(self, count: int = 1) -> str:
        return self.source[self.at:self.at + count]

    def blank(self) -> None:
        source, at = self.source, self.at
        while at < len(source) and source[at] in _WHITESPACE:
            at += 1
        self.at = at

    def expect(self, text: str, what: str) -> None:
        if not self.source.startswith(text, self.at):
            self.fail(f"expected {what}, found {self.found()}")
        self.at += len(text)

    def found(self) -> str:
        return repr(self.source[self.at]) if self.at < len(self.source) else "the end"

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            self.fail(f"filters, parentheses and functions are nested more than "
                      f"{MAX_NESTING} deep")

    # ------------------------------------------------------------- queries
    def query(self) -> tuple:
        if not self.source.startswith("$"):
            if self.source[:1] in _WHITESPACE and self.source.strip().startswith("$"):
                self.fail("a JSONPath has no whitespace before '$'", 0)
            self.fail("a JSONPath starts with '$'", 0)
        self.at = 1
        segments = self.segments(self.ends)
        if self.at < len(self.source):
            if self.source[self.at:].strip(_WHITESPACE) == "":
                self.fail("a JSONPath has no whitespace at its end")
            self.blank()
            self.unexpected()
        return segments

    def unexpected(self):
        char = self.source[self.at]
        if char == "`":
            self.backtick()
        if char == "(":
            self.fail("'(' here is a script expression, which JSONPath (RFC 9535) does not have")
        self.fail(f"unexpected {char!r}")

    def segments(self, ends: list | None = None) -> tuple:
        segments = []
        source = self.source
        while True:
            if ends is not None and segments:
                ends.append(self.at)
            before = self.at
            self.blank()
            char = source[self.at:self.at + 1]
            if len(segments) == MAX_SEGMENTS and char in ("[", "."):
                self.fail(f"a query has at most {MAX_SEGMENTS} segments")
            if char == "[":
                segments.append((False, self.bracketed()))
            elif source.startswith("..", self.at):
                self.at += 2
                segments.append((True, self.after_dot("..")))
            elif char == ".":
                self.at += 1
                segments.append((False, self.after_dot(".")))
            else:
                self.at = before
                return tuple(segments)

    def after_dot(self, dot: str) -> tuple:
        char = self.peek()
        if dot == ".." and char == "[":
            return self.bracketed()
        if char == "*":
            self.at += 1
            return (_ALL,)
        if char and _name_first(char):
            start = self.at
            while self.at < len(self.source) and _name_char(self.source[self.at]):
                self.at += 1
            return (self.source[start:self.at],)
        if char == "`":
            self.backtick()
        if char and char in _WHITESPACE:
            self.fail(f"no whitespace may follow {dot!r}")
        if char and char in _DIGITS:
            self.fail(f"a member name after {dot!r} does not start with a digit: write "
                      f"[{char}...] for an index or ['{char}...'] for such a name")
        if char in ("'", '"'):
            self.fail(f"a quoted name goes in brackets: ['name'], not {dot}'name'")
        expected = "a member name, '*' or '['" if dot == ".." else "a member name or '*'"
        self.fail(f"expected {expected} after {dot!r}, found {self.found()}")

    def backtick(self):
        """jsonpath-ng's named operators (`` `sub(/re/, x)` ``, `` `len` ``...) are no JSONPath."""
        end = self.source.find("`", self.at + 1)
        body = self.source[self.at + 1:end if end >= 0 else len(self.source)]
        if body.strip().startswith("sub("):
            raise PathSyntaxError(f"JSONPath {shown_path(self.source)} uses `sub(/regex/, "
                                  f"...)`, which runs Python's backtracking re; {_USE_RE2}")
        self.refuse(f"the jsonpath-ng operator `{body}`",
                    "backtick operators are not RFC 9535 JSONPath")

    def bracketed(self) -> tuple:
        self.at += 1  # "["
        selectors = []
        while True:
            self.blank()
            selectors.append(self.selector())
            self.blank()
            char = self.peek()
            if char == ",":
                self.at += 1
                continue
            if char == "]":
                self.at += 1
                return tuple(selectors)
            if not char:
                self.fail("a '[' is not closed by ']'")
            self.fail(f"expected ',' or ']' in brackets, found {self.found()}")

    def selector(self):
        char = self.peek()
        if char in ("'", '"'):
            return self.string()
        if char == "*":
            self.at += 1
            return _ALL
        if char == "?":
            self.at += 1
            self.deeper()
            self.blank()
            expression = self.logical()
            self.depth -= 1
            return _Filter(expression)
        if char == ":" or char == "-" or (char and char in _DIGITS):
            return self.index_or_slice()
        if char == "(":
            self.fail("'(' here is a script expression, which JSONPath (RFC 9535) does not "
                      "have; a filter is [?...]")
        if char and _name_first(char):
            start = self.at
            while self.at < len(self.source) and _name_char(self.source[self.at]):
                self.at += 1
            name = self.source[start:self.at]
            self.fail(f"a name inside brackets is quoted: ['{name}'], not [{name}]", start)
        if char == "]":
            self.fail("empty brackets select nothing: write a selector ('name', *, 0, 1:2, ?...)")
        if not char:
            self.fail("a '[' is not closed by ']'")
        self.fail(f"expected a selector, found {self.found()}")

    def integer(self, what: str) -> int:
        start = self.at
        source = self.source
        if source.startswith("-", self.at):
            self.at += 1
        digits = self.at
        while self.at < len(source) and source[self.at] in _DIGITS:
            self.at += 1
        text = source[start:self.at]
        if self.at == digits:
            self.fail(f"expected the digits of {what}", digits)
        if source[digits] == "0" and self.at - digits > 1:
            self.fail(f"{what} {text} has a leading zero", start)
        if text == "-0":
            self.fail(f"{what} -0 is not an integer JSONPath allows: write 0", start)
        value = int(text)
        if not -MAX_INT <= value <= MAX_INT:
            self.fail(f"{what} {text} is outside the exact integer range ±(2^53-1)", start)
        return value

    def index_or_slice(self):
        bounds = [None, None, None]
        if self.peek() != ":":
            bounds[0] = self.integer("an index")
            self.blank()
            if self.peek() != ":":
                return bounds[0]
        self.at += 1  # first ":"
        self.blank()
        if self.peek() == "-" or self.peek() in tuple(_DIGITS):
            bounds[1] = self.integer("a slice end")
            self.blank()
        if self.peek() == ":":
            self.at += 1
            self.blank()
            if self.peek() == "-" or self.peek() in tuple(_DIGITS):
                bounds[2] = self.integer("a slice step")
        return slice(*bounds)

    def string(self) -> str:
        source = self.source
        quote = source[self.at]
        start = self.at
        self.at += 1
        parts = []
        while True:
            if self.at >= len(source):
                self.fail("a quoted string is not closed", start)
            char = source[self.at]
            if char == quote:
                self.at += 1
                return "".join(parts)
            if char == "\\":
                parts.append(self.escape(quote))
                continue
            if char < " ":
                self.fail(f"a control character ({char!r}) in a string is escaped: "
                          f"\\u{ord(char):04x}")
            if "\ud800" <= char <= "\udfff":
                self.fail("a lone surrogate in a string")
            parts.append(char)
            self.at += 1

    def escape(self, quote: str) -> str:
        source = self.source
        char = source[self.at + 1:self.at + 2]
        if char == quote:
            self.at += 2
            return quote
        if char in _ESCAPES:
            self.at += 2
            return _ESCAPES[char]
        if char == "u":
            code = self.hex4(self.at + 2)
            self.at += 6
            if 0xDC00 <= code <= 0xDFFF:
                self.fail("a \\u escape of a low surrogate without a high one", self.at - 6)
            if 0xD800 <= code <= 0xDBFF:
                if not source.startswith("\\u", self.at):
                    self.fail("a \\u escape of a high surrogate is followed by a low one",
                              self.at - 6)
                low = self.hex4(self.at + 2)
                if not 0xDC00 <= low <= 0xDFFF:
                    self.fail("a \\u escape of a high surrogate is followed by a low one",
                              self.at - 6)
                self.at += 6
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
            return chr(code)
        shown = repr(char) if char else "the end"
        self.fail(f"the escape \\{char} is not one of JSONPath's "
                  f"(\\b \\f \\n \\r \\t \\/ \\\\ \\{quote} \\uXXXX), found {shown}")

    def hex4(self, at: int) -> int:
        digits = self.source[at:at + 4]
        if not _HEX.fullmatch(digits):
            self.fail("a \\u escape takes four hexadecimal digits", at - 2)
        return int(digits, 16)

    # ------------------------------------------------------------- filters
    def logical(self):
        items = [self.conjunction()]
        while self.operator("||"):
            items.append(self.conjunction())
        return items[0] if len(items) == 1 else _Or(tuple(items))

    def conjunction(self):
        items = [self.basic()]
        while self.operator("&&"):
            items.append(self.basic())
        return items[0] if len(items) == 1 else _And(tuple(items))

    def operator(self, text: str) -> bool:
        """Consume ``S text S`` when it comes next."""
        before = self.at
        self.blank()
        if self.source.startswith(text, self.at):
            self.at += len(text)
            self.blank()
            return True
        self.at = before
        return False

    def basic(self):
        char = self.peek()
        if char == "!":
            self.at += 1
            self.blank()
            if self.peek() == "(":
                return _Not(self.parenthesised())
            start = self.at
            operand = self.operand()
            self.no_comparison_after_not(start)
            return _Not(self.as_test(operand, start))
        if char == "(":
            return self.parenthesised()
        start = self.at
        left = self.operand()
        comparison = self.comparison_operator()
        if comparison is None:
            return self.as_test(left, start)
        self.blank()
        right_start = self.at
        right = self.operand()
        return _Compare(comparison, self.as_comparable(left, start),
                        self.as_comparable(right, right_start))

    def no_comparison_after_not(self, start: int) -> None:
        before = self.at
        if self.comparison_operator() is not None:
            self.fail("'!' negates a test or a parenthesised expression, not a comparison: "
                      "write !(a == b) or a != b", start)
        self.at = before

    def parenthesised(self):
        self.at += 1  # "("
        self.deeper()
        self.blank()
        expression = self.logical()
        self.blank()
        self.expect(")", "')'")
        self.depth -= 1
        return expression

    def comparison_operator(self) -> str | None:
        before = self.at
        self.blank()
        source, at = self.source, self.at
        if source.startswith("=~", at):
            raise PathSyntaxError(f"JSONPath {shown_path(self.source)} filters with the regex "
                                  f"operator '=~', which runs Python's backtracking re; "
                                  f"{_USE_RE2}")
        for operator in _COMPARISONS:
            if source.startswith(operator, at):
                self.at += len(operator)
                return operator
        if source.startswith("=", at):
            self.fail("'=' is no comparison: write '=='")
        self.at = before
        return None

    def operand(self):
        """A query, a function call or a literal (checked for its place by the caller)."""
        source, char = self.source, self.peek()
        if char in ("@", "$"):
            self.at += 1
            return _Query(char == "@", self.segments())
        if char in ("'", '"'):
            return _Literal(self.string())
        number = _NUMBER.match(source, self.at)
        if number:
            text = number.group()
            self.at = number.end()
            if self.peek() and (_name_char(self.peek()) or self.peek() == "."):
                self.fail(f"a number is RFC 9535's: no {text}{self.peek()}", number.start())
            if "." in text or "e" in text or "E" in text:
                return _Literal(float(text))  # 1e400 is inf, as a double reads it
            return _Literal(int(text))
        if char == "-" or (char and char in _DIGITS) or char == ".":
            self.fail("a number is RFC 9535's: digits without a leading zero, an optional "
                      "fraction .5 and exponent e3")
        name = _FUNCTION_NAME.match(source, self.at)
        if name and not source.startswith("(", name.end()):
            word = name.group()
            if word in ("true", "false", "null") and not (
                    name.end() < len(source) and _name_char(source[name.end()])):
                self.at = name.end()
                return _Literal({"true": True, "false": False, "null": None}[word])
        if name and source.startswith("(", name.end()):
            return self.function(name.group(), name.end())
        if char and _name_first(char):
            start = self.at
            while self.at < len(source) and _name_char(source[self.at]):
                self.at += 1
            word = source[start:self.at]
            if self.peek() == "(":
                self.fail(f"unknown function {word}(): function names are lower case "
                          f"({', '.join(f'{f}()' for f in _VALUE_FUNCTIONS)})", start)
            if self.source[self.at:].lstrip(_WHITESPACE).startswith("("):
                self.fail(f"no whitespace between a function's name and '(': {word}(", start)
            if word.lower() in ("true", "false", "null"):
                self.fail(f"the literals are lower case: {word.lower()}, not {word}", start)
            self.fail(f"a filter reaches the current node's members through '@': write "
                      f"@.{word}, not the bare name {word} (jsonpath-ng's form)", start)
        if not char:
            self.fail("a filter expression is incomplete")
        self.fail(f"expected a query (@ or $), a literal or a function, found {self.found()}")

    def function(self, name: str, open_at: int):
        start = self.at
        if name in _REGEX_FUNCTIONS:
            self.refuse(f"function extension {name}()",
                        f"it runs a regular expression on the evidence; {_USE_RE2}")
        if name not in _VALUE_FUNCTIONS:
            self.fail(f"unknown function {name}(); flarespec's JSONPath has "
                      f"{', '.join(f'{f}()' for f in _VALUE_FUNCTIONS)}", start)
        self.at = open_at + 1
        self.deeper()
        self.blank()
        arguments = []
        if self.peek() != ")":
            while True:
                argument_start = self.at
                if self.peek() in ("!", "("):
                    self.fail(f"{name}() takes {self.argument_kind(name)}, not a logical "
                              f"expression", argument_start)
                argument = self.operand()
                self.blank()
                if self.peek() not in (",", ")"):
                    if self.peek() and self.peek() in "=!<>&|":
                        self.fail(f"{name}() takes {self.argument_kind(name)}, not a logical "
                                  f"expression", argument_start)
                    self.fail(f"expected ',' or ')' closing {name}(), found {self.found()}")
                arguments.append((argument, argument_start))
                if self.peek() == ",":
                    self.at += 1
                    self.blank()
                    continue
                self.expect(")", f"',' or ')' closing {name}()")
                break
        else:
            self.at += 1
        self.depth -= 1
        if len(arguments) != 1:
            self.fail(f"{name}() takes one argument, got {len(arguments)}", start)
        argument, argument_start = arguments[0]
        if name == "length":
            argument = self.as_comparable(argument, argument_start, f"the argument of {name}()")
        elif not isinstance(argument, _Query):
            self.fail(f"{name}() takes a query (its nodes), not a "
                      f"{'literal' if isinstance(argument, _Literal) else 'function result'}",
                      argument_start)
        return _Function(name, argument)

    @staticmethod
    def argument_kind(name: str) -> str:
        return "a value" if name == "length" else "a query"

    def as_comparable(self, operand, start: int, place: str = "a comparison"):
        if isinstance(operand, _Query) and operand.keys is None:
            self.fail(f"{place} takes a singular query (names and indices only, one node "
                      f"at most), not a query that may select several nodes", start)
        return operand

    def as_test(self, operand, start: int):
        if isinstance(operand, _Query):
            return operand
        if isinstance(operand, _Function):
            self.fail(f"{operand.name}() gives a value, which is no test: compare it "
                      f"({operand.name}(...) > 0)", start)
        self.fail("a literal alone is no test: compare it (@.a == 1)", start)
