"""Pass-checks: for an assertion kind, a predicate that only ever says "passes".

The engine's reporting path (``kinds.py``) builds a ``Failure`` with a message and a
location for whatever does not hold, over ``Match`` objects that carry locations. Nearly
every check passes, and for a passing check all of that is waste. A pass-check answers the
one question the engine asks first, on raw values: does this value (``PASSES``) or list of
values (``COLLECTIVE_PASSES``) satisfy the kind with this argument?

* True means exactly "the kind's function yields no failure here", and False exactly "it
  yields one": a pass-check is exact, because ``not`` and ``count``'s ``where`` turn one
  kind's answer into another's (a conservative False inside ``not`` would be a pass).
* Where a pass-check cannot tell, it raises (``NotKnown``, or whatever the reporting path
  would raise too). The engine treats any exception, and any False, as "not known to pass"
  and runs the reporting path for that binding, which words every violation.

A kind without a pass-check here (one that asks the engine for more, like the manifest
kinds, or one added later) always takes the reporting path. Tests run every catalog case
and mutated packets both ways and compare the receipts (``tests/engine/test_pass_checks.py``,
``tests/property``).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from flarespec.engine.kinds import (
    KINDS,
    _canonical,
    _same_json,
    compiled_pattern,
    is_finite_number,
    is_integral_number,
    is_number,
    json_type,
    strict_equal,
)
from flarespec.engine.paths import Match



class NotKnown(Exception):
    """The pass-check cannot tell: the reporting path decides."""


# --------------------------------------------------------------------------- per value


def _type(value: Any, arg) -> bool:
    actual = json_type(value)
    if isinstance(arg, str):
        return actual == arg or (actual == "integer" and arg == "number")
    return actual in arg or (actual == "integer" and "number" in arg)


def _one_of(value: Any, arg) -> bool:
    return any(strict_equal(value, option) for option in arg)


def _regex(value: Any, arg) -> bool:
    return isinstance(value, str) and compiled_pattern(arg).fullmatch(value) is not None


def _starts_with(value: Any, arg) -> bool:
    return isinstance(value, str) and value.startswith(arg)


def _range(value: Any, arg) -> bool:
    if not is_number(value):
        return False
    return all(_holds(key, value, bound) for key, bound in arg.items())


def _holds(key: str, value, bound) -> bool:
    if key == "min":
        return value >= bound
    if key == "max":
        return value <= bound
    if key == "exclusive_min":
        return value > bound
    if key == "exclusive_max":
        return value < bound
    return True  # the reporting path checks these four bounds only (others fail at load)


def _finite(value: Any, arg) -> bool:
    return not arg or is_finite_number(value)


def _integral(value: Any, arg) -> bool:
    return not arg or is_integral_number(value)


def _within(arg: dict, measured: int) -> bool:
    """``kinds._bounds`` yields nothing: equals, min and max all hold."""
    return (("equals" not in arg or measured == arg["equals"])
            and ("min" not in arg or measured >= arg["min"])
            and ("max" not in arg or measured <= arg["max"]))


def _length(value: Any, arg) -> bool:
    return isinstance(value, (list, str, dict)) and _within(arg, len(value))


def _keys(value: Any, arg) -> bool:
    """Every listed key is a string the object has, and it has no other (a key listed
    twice is one key, as for the reporting path)."""
    return isinstance(value, dict) \
        and all(isinstance(key, str) and key in value for key in arg) \
        and len(set(arg)) == len(value)


def _includes(value: Any, arg) -> bool:
    if not isinstance(value, dict):
        return False
    for key, expected in arg.items():
        if key not in value or not strict_equal(value[key], expected):
            return False
    return True


def _not(value: Any, arg) -> bool:
    (name, inner), = arg.items()
    return not value_passes(name, value, inner)


def _same_as(value: Any, arg) -> bool:
    """Equal as JSON text (the kind's own first test), or equal member by member once the
    allowed extra members are set aside (the producer's derived field: the common case
    that makes the two texts differ); else whatever the kind itself says."""
    other = arg.get("other")
    if _same_json(value, other):
        return True
    extra = arg.get("allow_extra") or {}
    keys = extra.get("keys", []) if extra and extra.get("when", True) else []
    if isinstance(value, dict) and isinstance(other, dict) and keys \
            and all(isinstance(key, str) and _IDENTIFIER.fullmatch(key) for key in keys):
        allowed = set(keys) - set(other)
        # strict_equal, not JSON text: a NaN equals itself as text, yet the kind's member
        # by member comparison (which runs when the whole texts differ) tells them apart
        if strict_equal({key: item for key, item in value.items() if key not in allowed},
                        other):
            return True
    return _SAME_AS(value, arg)


def _silent(name: str) -> Callable[[Any, Any], bool]:
    """The kind's own function on a match at ``$``: for kinds that ask nothing of the engine
    and whose verdict does not depend on where the value is (``same_as``, ``formula``)."""
    function = KINDS[name].function

    def passes(value: Any, arg) -> bool:
        return next(iter(function(None, Match(value, "$"), arg)), None) is None
    return passes


_SAME_AS = _silent("same_as")
# a member name that differences() writes as "$.name" (see kinds.same_as)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

PASSES: dict[str, Callable[[Any, Any], bool]] = {
    "type": _type,
    "equals": strict_equal,
    "one_of": _one_of,
    "regex": _regex,
    "starts_with": _starts_with,
    "range": _range,
    "finite": _finite,
    "integral": _integral,
    "length": _length,
    "keys": _keys,
    "includes": _includes,
    "not": _not,
    "same_as": _same_as,
    "formula": _silent("formula"),
}

# --------------------------------------------------------------------------- collective


def _present(values: list, arg) -> bool:
    return not arg or bool(values)


def _absent(values: list, arg) -> bool:
    return not arg or not values


def _count(values: list, arg) -> bool:
    where = arg.get("where")
    if where:
        (name, inner), = where.items()
        values = [value for value in values if value_passes(name, value, inner)]
    return _within(arg, len(values))


def _unique(values: list, arg) -> bool:
    if not arg:
        return True
    keys = [_canonical(value) for value in values]
    return len(set(keys)) == len(keys)


def _monotonic(values: list, arg) -> bool:
    strict = arg == "increasing"
    previous = None
    for value in values:
        if not is_number(value):
            return False
        if previous is not None and (value < previous or (strict and value == previous)):
            return False
        previous = value
    return True


def _order_equals(values: list, arg) -> bool:
    if not isinstance(arg, list):
        raise NotKnown("a generated list: the reporting path expands it")
    return len(values) == len(arg) and all(map(strict_equal, values, arg))


COLLECTIVE_PASSES: dict[str, Callable[[list, Any], bool]] = {
    "present": _present,
    "absent": _absent,
    "count": _count,
    "unique": _unique,
    "monotonic": _monotonic,
    "order_equals": _order_equals,
}


def value_passes(name: str, value: Any, arg) -> bool:
    """One value against the kind ``name`` (as ``count``'s ``where`` and ``not`` apply it:
    a collective kind sees a list of that one value). Raises NotKnown for a kind without a
    pass-check."""
    if name in COLLECTIVE_PASSES:
        return COLLECTIVE_PASSES[name]([value], arg)
    if name not in PASSES:
        raise NotKnown(f"no pass-check for {name}")
    return PASSES[name](value, arg)


def checks(name: str) -> tuple[Callable | None, bool]:
    """(pass-check, collective) for the kind ``name``; None when it has none."""
    if name in COLLECTIVE_PASSES:
        return COLLECTIVE_PASSES[name], True
    return PASSES.get(name), False
