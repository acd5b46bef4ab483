"""JSON value semantics, written once for every room: a value's JSON type, type-strict
equality and difference, a hashable identity key, exact number tests, and the spec's
regular expressions (RE2).

Values come from untrusted documents and may nest thousands deep (Python's recursion
limit is 1000): every walk over a value here uses an explicit stack, never recursion.
Numbers are exact: ``int`` of any size, ``float``, or ``Decimal`` (a loader's exact
non-integral number); ``True`` is never ``1`` and ``1`` is never ``1.0``.
"""

from __future__ import annotations

import functools
import json
import math
from decimal import Decimal
from typing import Any, Callable, Iterator

import re2

from flarespec.engine.outcome import json_text
from flarespec.loaders.linear import full_matcher
from flarespec.loaders.locations import child_location

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is reported as a spec issue, not logged


@functools.cache
def compiled_pattern(pattern: str):
    r"""The RE2 program of a spec regex, compiled once per pattern (never per element).

    RE2 matches in time linear in the input whatever the pattern, so neither a hostile
    pattern (``(a+)+$``) nor a hostile value can hang a run. The price: no backreferences
    and no lookaround, and ``\d``, ``\w``, ``\s``, ``\b`` are ASCII-only."""
    return re2.compile(pattern, _RE2_OPTIONS)


@functools.cache
def full_match(pattern: str) -> Callable[[str], bool]:
    """Whether a text matches the spec regex ``pattern`` whole (compiled_pattern's
    ``fullmatch``, asked yes or no: loaders/linear.py). A lone surrogate raises
    ``UnicodeEncodeError``: it is no Unicode text."""
    return full_matcher(compiled_pattern(pattern))


JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


_EXACT_JSON_TYPES = {type(None): "null", bool: "boolean", int: "integer", float: "number",
                     Decimal: "number", str: "string", list: "array", dict: "object"}


def json_type(value: Any) -> str:
    """A value's JSON type: by its exact type when it is one of them (what the tests below
    give it), else by those tests (a subclass: the spec's marked containers)."""
    exact = _EXACT_JSON_TYPES.get(type(value))
    if exact is not None:
        return exact
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, (float, Decimal)):  # Decimal: a loader's exact non-integral number
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_number(value: Any) -> bool:
    """An int, a float or a Decimal (the Prometheus loader's exact non-integral values)."""
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def is_finite_number(value: Any) -> bool:
    """A number that is neither NaN nor infinite, decided exactly: any int, however large
    (``math.isfinite`` would overflow converting it), a finite float or Decimal."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, Decimal) and value.is_finite()


def is_integral_number(value: Any) -> bool:
    """A finite number with no fractional part, decided exactly: ``Decimal('12.5')`` is not,
    ``12``, ``12.0`` and ``Decimal('12.0')`` are (never via float, which would round
    ``Decimal('9007199254740993.5')`` to an integer)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return value.is_integer()  # False for NaN and the infinities
    return isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value()


def same_json(left: Any, right: Any) -> bool:
    """Fast type-strict equality of large values: JSON text keeps 1, 1.0 and true apart.
    Two values that pack to the same MessagePack bytes are the same JSON text (the cheaper
    test is asked first: packing both is a tenth of the texts' time)."""
    if same_packed(left, right):
        return True
    try:
        return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)
    except RecursionError:  # nested deeper than json.dumps goes: compare without recursion
        return strict_equal(left, right)
    except (TypeError, ValueError):
        return False


_packer: list = []  # [ormsgpack.packb with _PLAIN_ONLY], imported on first use (start-up)


def _packed(value: Any) -> bytes:
    """``value``'s MessagePack bytes when it holds the exact JSON built-ins alone (dict with
    str keys, list, str, int within 64 bits, float, bool, None); a TypeError for anything
    else: ormsgpack refuses a Decimal, a subclass (the spec's marked containers, also of str
    or int), a tuple, a date or time, an enum, a dataclass, a UUID, a non-str key, a longer
    int, a lone surrogate, and nesting deeper than it goes, each with a TypeError. Bytes
    (packed as binary) are no JSON value, never in a document or a spec's value."""
    if not _packer:
        import ormsgpack

        plain_only = (ormsgpack.OPT_PASSTHROUGH_SUBCLASS | ormsgpack.OPT_PASSTHROUGH_TUPLE
                      | ormsgpack.OPT_PASSTHROUGH_DATETIME | ormsgpack.OPT_PASSTHROUGH_ENUM
                      | ormsgpack.OPT_PASSTHROUGH_DATACLASS | ormsgpack.OPT_PASSTHROUGH_UUID
                      | ormsgpack.OPT_PASSTHROUGH_BIG_INT)
        _packer.append(functools.partial(ormsgpack.packb, option=plain_only))
    return _packer[0](value)


def same_packed(left: Any, right: Any, *, finite: bool = False) -> bool:
    """True when both values pack to the same bytes: MessagePack writes each item's type
    and value prefix-free (an int by its value, a float as its 8 bytes, true, false and nil
    apart from both), so equal bytes are the same types, the same members in the same
    order, hence the same JSON text, sorted or not. False when they differ or either is
    refused (``_packed``): the JSON text decides then. With ``finite``, also False when a
    float may be NaN or infinite (packed as 0xcb and 8 big-endian bytes, then beginning
    "\xcb\x7f" or "\xcb\xff"; other bytes may look alike too): equal bytes then mean
    strict_equal too."""
    try:
        packed = _packed(left)
        if packed != _packed(right):
            return False
    except TypeError:
        return False
    return not finite or (b"\xcb\x7f" not in packed and b"\xcb\xff" not in packed)


def strict_equal_large(left: Any, right: Any) -> bool:
    """strict_equal, for values of many members: equal packed bytes where no float is NaN
    or infinite (``same_packed(finite=True)``: the same types and members) decide at C
    speed; anything else is strict_equal's to decide."""
    return same_packed(left, right, finite=True) or strict_equal(left, right)


def strict_equal(left: Any, right: Any) -> bool:
    """Type-strict deep equality: True != 1, 1 != 1.0, key order irrelevant. A container's
    scalar members are compared as they are met, its containers kept on a stack (never
    recursion); JSON scalars compare without raising, so the order decides nothing."""
    if not isinstance(left, (dict, list)):  # the common case: two scalars, no stack
        return type(left) is type(right) and left == right
    if type(left) is list and type(right) is list and _same_plain_list(left, right):
        return True  # the next common one: a list of plain items, no stack either
    pending = []
    while True:
        if isinstance(left, dict):
            if not isinstance(right, dict) or left.keys() != right.keys():
                return False
            pairs = zip(left.values(), map(right.__getitem__, left))
        else:
            if not isinstance(right, list) or len(left) != len(right):
                return False
            pairs = () if _same_plain_list(left, right) else zip(left, right)
        for mine, theirs in pairs:
            if isinstance(mine, (dict, list)):
                pending.append((mine, theirs))
            elif type(mine) is not type(theirs) or mine != theirs:
                return False
        if not pending:
            return True
        left, right = pending.pop()


# A list this long whose items are all of one of these types is compared at C speed
_LONG_LIST = 16
_PLAIN_TYPES = frozenset((int, str, bool, type(None)))


def _plain_pair(mine: Any, theirs: Any) -> bool:
    """Both of one plain type (_PLAIN_TYPES): then ``==`` is their strict equality."""
    return type(mine) is type(theirs) and type(mine) in _PLAIN_TYPES


def _same_plain_list(left: list, right: list) -> bool:
    """True for two lists of equal length whose items pair up with items of the same type,
    an int, str, bool or None (no float, which may be a NaN that ``==`` finds equal to
    itself, no container, no Decimal to raise), and are equal: then ``==`` is the items'
    type-strict equality (strict_equal's loop without its stack). A long list is read at C
    speed when all its items are of one type. False (another type, mixed types in a long
    list, or unequal) leaves them to the loop, which decides."""
    if len(left) != len(right):
        return False
    if len(left) < _LONG_LIST:
        return all(map(_plain_pair, left, right)) and left == right
    kinds = set(map(type, left))
    return len(kinds) == 1 and kinds <= _PLAIN_TYPES and kinds == set(map(type, right)) \
        and left == right


def differences(left: Any, right: Any, location: str = "$") -> Iterator[tuple[str, str, Any, Any]]:
    """Every place where ``left`` and ``right`` differ: (kind, location, left, right), in
    document order.

    kind is "extra" (only in left), "missing" (only in right) or "value".
    """
    stack: list[Iterator] = [iter(((left, right, location),))]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
        elif len(step) == 4:  # a difference found by _member_steps
            yield step
        else:
            mine, theirs, where = step
            if isinstance(mine, dict) and isinstance(theirs, dict):
                stack.append(_member_steps(mine, theirs, where))
            elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
                stack.append(_item_steps(mine, theirs, where))
            elif not strict_equal(mine, theirs):
                yield "value", where, mine, theirs


def _item_steps(mine: list, theirs: list, where: str) -> Iterator[tuple]:
    for index, pair in enumerate(zip(mine, theirs)):
        yield (*pair, f"{where}[{index}]")


def _member_steps(mine: dict, theirs: dict, where: str) -> Iterator[tuple]:
    """The members of two objects as (mine, theirs, location) steps to compare, and the
    members only one of them has as finished differences."""
    for key in mine:
        at = child_location(where, key)
        yield ("extra", at, mine[key], None) if key not in theirs else (mine[key], theirs[key], at)
    for key in theirs:
        if key not in mine:
            yield "missing", child_location(where, key), None, theirs[key]


def canonical_key(value: Any) -> str:
    """A hashable text that identifies a value type-strictly (1, 1.0 and True stay
    distinct): for uniqueness and list differences in linear time."""
    try:
        text = json.dumps(value, sort_keys=True, allow_nan=True, default=repr)
    except (RecursionError, ValueError):  # too deep for json.dumps, or an int too long for str
        text = json_text(value, sort_keys=True)
    return text + json_type(value)


def member_at(value: Any, keys, *, digits_index: bool = False) -> tuple[bool, Any]:
    """(found, value) at the place ``keys`` reach inside ``value``: a string names an
    object's member, an integer a list's element (0 <= index < length). With
    ``digits_index`` (a dotted name such as ``a.0.b``), a string of ASCII digits also indexes
    a list. The one walk over a value by keys (locations and dotted names use it)."""
    for key in keys:
        if isinstance(value, dict):
            if not isinstance(key, str) or key not in value:
                return False, None
            value = value[key]
        elif isinstance(value, list):
            if digits_index and isinstance(key, str) and key.isascii() and key.isdigit():
                key = int(key)
            if not isinstance(key, int) or isinstance(key, bool) or not 0 <= key < len(value):
                return False, None
            value = value[key]
        else:
            return False, None
    return True, value
