"""Directions: how a change of an assertion's argument moves the set of accepted inputs.

``spec diff`` classes every change by meaning, never by guess (docs/spec-review.md):

* ``tightening``: fewer inputs are accepted (a bound raised, a set narrowed);
* ``loosening``: more inputs are accepted (the reverse);
* ``review``: the effect depends on the data or cannot be decided statically;
* ``neutral``: the accepted set cannot change.

Each assertion kind names its comparator where it is registered (``engine/kinds.py``,
``diff=``); this module holds the vocabulary and the comparators the kinds share. A
comparator takes the old and new argument as the spec author wrote them (resolved YAML
data, ``{ref: ...}`` still a mapping) and returns a ``Verdict``: (class, what, reason).
A *member* comparator takes one member of a mapping argument: (key, old, new).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterator

TIGHTENING, LOOSENING, REVIEW, NEUTRAL = "tightening", "loosening", "review", "neutral"
CLASSES = (TIGHTENING, LOOSENING, REVIEW, NEUTRAL)
FLIPPED = {TIGHTENING: LOOSENING, LOOSENING: TIGHTENING}
ABSENT = object()  # a side of a change that does not exist (distinct from a null value)

Verdict = tuple[str, str, str]


def same(left, right) -> bool:
    """Equal as spec data, type-strictly (1, 1.0 and true differ)."""
    return json.dumps(left, sort_keys=True, default=repr) + type(left).__name__ == \
        json.dumps(right, sort_keys=True, default=repr) + type(right).__name__


def shown_value(value):
    return None if value is ABSENT else value


def dynamic(value) -> bool:
    """Whether a value read at run time (``{ref}`` or ``{template}``) is in the argument."""
    return any(isinstance(v, dict) and ("ref" in v or "template" in v) for v in _walk(value))


def _walk(value) -> Iterator:
    pending = [value]
    while pending:
        value = pending.pop()
        yield value
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def run_time(old, new) -> Verdict | None:
    if dynamic(old) or dynamic(new):
        return REVIEW, "changed", "a value read at run time ({ref}/{template}) is involved"
    return None


def is_plain_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


HIGHER_IS_TIGHTER = {"min": True, "exclusive_min": True, "max": False, "exclusive_max": False,
                      "rel_tol": False, "abs_tol": False}


def bound(key: str, old, new) -> Verdict:
    """One bound or tolerance: its direction decides; a bound added tightens, removed loosens."""
    if old is ABSENT:
        return TIGHTENING, f"{key} added", "a new bound excludes values"
    if new is ABSENT:
        return LOOSENING, f"{key} removed", "a bound no longer excludes values"
    if not (is_plain_number(old) and is_plain_number(new)):
        return run_time(old, new) or (REVIEW, f"{key} changed", "not two numbers")
    raised = new > old
    tighter = raised == HIGHER_IS_TIGHTER[key]
    return (TIGHTENING if tighter else LOOSENING, f"{key} {'raised' if raised else 'lowered'}",
            "")


def exact_count(old, new) -> Verdict:
    if old is ABSENT:
        return TIGHTENING, "equals added", "an exact size now required"
    if new is ABSENT:
        return LOOSENING, "equals removed", "an exact size no longer required"
    return run_time(old, new) or (REVIEW, "equals changed",
                                   "another exact size: neither set contains the other")


def size_bound(key: str, old, new) -> Verdict:
    """A member of a length or count argument."""
    if key == "equals":
        return exact_count(old, new)
    if key == "where":
        return REVIEW, "where changed", "which matches are counted changed"
    return bound(key, old, new)


def as_set(values) -> set[str] | None:
    if not isinstance(values, list) or dynamic(values):
        return None
    return {json.dumps(v, sort_keys=True) + type(v).__name__ for v in values}


def subset(before: set, after: set, *, more_is_looser: bool, what: str) -> Verdict:
    """Two finite sets: a superset widens, a subset narrows; more is looser for an allowed
    set and tighter for a required one."""
    if before == after:
        return NEUTRAL, f"{what} restated", "same members"
    if after < before or after > before:
        grew = after > before
        return (LOOSENING if grew == more_is_looser else TIGHTENING,
                f"{what} {'widened' if grew else 'narrowed'}", "")
    return REVIEW, f"{what} changed", "members both added and removed"


def sets(old, new, *, more_is_looser: bool, what: str) -> Verdict:
    before, after = as_set(old), as_set(new)
    if before is None or after is None:
        return run_time(old, new) or (REVIEW, f"{what} changed", "not two lists")
    return subset(before, after, more_is_looser=more_is_looser, what=what)


def types(arg) -> set[str] | None:
    """The accepted JSON types (``number`` accepts integers too)."""
    names = [arg] if isinstance(arg, str) else arg
    if not isinstance(names, list):
        return None
    found = set(names)
    return found | {"integer"} if "number" in found else found


def type_verdict(old, new) -> Verdict:
    before, after = types(old), types(new)
    if before is None or after is None:
        return REVIEW, "types changed", "not a list of type names"
    return subset(before, after, more_is_looser=True, what="types")


def switch(old, new) -> Verdict:
    """A boolean kind (present, absent, unique, finite, integral): true checks, false not."""
    if bool(new) == bool(old):
        return NEUTRAL, "unchanged", ""
    return (TIGHTENING, "switched on", "") if new else (LOOSENING, "switched off", "")


_LITERAL_ALTERNATION = re.compile(r"\^?\(?(?:\?:)?([A-Za-z0-9_\-|]*)\)?\$?")


def regex_words(pattern) -> set[str] | None:
    """The language of a pattern that is a plain alternation of literal words (``a|b``,
    ``^(a|b)$``), the only patterns compared; None for any other pattern."""
    if not isinstance(pattern, str):
        return None
    found = _LITERAL_ALTERNATION.fullmatch(pattern)
    return set(found.group(1).split("|")) if found else None


def regex_verdict(old, new) -> Verdict:
    before, after = regex_words(old), regex_words(new)
    if before is None or after is None:
        return REVIEW, "pattern changed", "regular languages are compared only for " \
            "alternations of literal words"
    return subset(before, after, more_is_looser=True, what="pattern")


def prefix_verdict(old, new) -> Verdict:
    if isinstance(old, str) and isinstance(new, str):
        if new.startswith(old):
            return TIGHTENING, "prefix lengthened", ""
        if old.startswith(new):
            return LOOSENING, "prefix shortened", ""
    return run_time(old, new) or (REVIEW, "prefix changed", "neither prefix extends the other")


_MONOTONIC_STRICTNESS = {"non_decreasing": 0, "increasing": 1}


def monotonic_verdict(old, new) -> Verdict:
    if old in _MONOTONIC_STRICTNESS and new in _MONOTONIC_STRICTNESS:
        tighter = _MONOTONIC_STRICTNESS[new] > _MONOTONIC_STRICTNESS[old]
        return (TIGHTENING, "made strict", "") if tighter else (LOOSENING, "made non-strict", "")
    return REVIEW, "direction changed", "unknown direction"


def review(reason: str) -> Callable[[Any, Any], Verdict]:
    return lambda old, new: run_time(old, new) or (REVIEW, "changed", reason)


def range_members(key, old, new) -> Verdict:
    return bound(key, old, new) if key in HIGHER_IS_TIGHTER else \
        (REVIEW, f"{key} changed", "unknown bound")


def includes_member(key, old, new) -> Verdict:
    if old is ABSENT:
        return TIGHTENING, "member required", "one more member must equal its value"
    if new is ABSENT:
        return LOOSENING, "member freed", "a member is no longer checked"
    return REVIEW, "member value changed", "another expected value"


def formula_member(key, old, new) -> Verdict:
    if key in ("rel_tol", "abs_tol"):
        return bound(key, 0 if old is ABSENT else old, 0 if new is ABSENT else new)
    return REVIEW, f"{key} changed", "another formula: its truth set is not compared"


def same_as_member(key, old, new) -> Verdict:
    if key == "allow_extra":
        if old is ABSENT or new is ABSENT:
            return (LOOSENING, "extra keys allowed", "") if old is ABSENT else \
                (TIGHTENING, "extra keys no longer allowed", "")
        return allow_extra(old, new)
    return REVIEW, f"{key} changed", "compared with another value"


def allow_extra(old: dict, new: dict) -> Verdict:
    if old.get("when") != new.get("when"):
        return REVIEW, "allow_extra.when changed", "when extra keys are allowed changed"
    return sets(old.get("keys", []), new.get("keys", []), more_is_looser=True,
                 what="allowed extra keys")


def kind_change(old_kind: str, old_arg, new_kind: str, new_arg) -> Verdict:
    """A rule that now asserts another kind. Where the new kind provably accepts every value
    the old one did, it is loosening: ``equals`` x replaced by a ``one_of`` holding x or a
    ``range`` around x; a ``type`` constraint replaced by anything but a type. Otherwise the
    accepted sets are not compared (review), never neutral."""
    what = f"kind {old_kind} → {new_kind}"
    if old_kind == "equals" and not dynamic(old_arg):
        if new_kind == "one_of" and isinstance(new_arg, list) and \
                any(same(old_arg, option) for option in new_arg):
            return LOOSENING, what, f"{shown_value(old_arg)!r} is still allowed, and others are too"
        if new_kind == "range" and is_plain_number(old_arg) and isinstance(new_arg, dict) and \
                not dynamic(new_arg) and all(is_plain_number(v) for v in new_arg.values()) and \
                new_arg.get("min", old_arg) <= old_arg <= new_arg.get("max", old_arg) and \
                new_arg.get("exclusive_min", old_arg - 1) < old_arg < \
                new_arg.get("exclusive_max", old_arg + 1):
            return LOOSENING, what, f"the range holds {old_arg!r} and more values"
    if old_kind == "type":
        return LOOSENING, what, "a type constraint removed (the new kind does not pin a type)"
    return REVIEW, what, "another assertion kind: its accepted set is not compared"


# --------------------------------------------------------------------------- a kind's `diff`
# What a kind registers as its diff classification: ``(name, old, new) -> [(sub-path under
# assert, verdict, old, new), ...]``, built from a comparator by one of these two.

Changes = Callable[[str, Any, Any], list]


def whole(comparator: Callable[[Any, Any], Verdict]) -> Changes:
    """The argument compared as one value."""
    def changes(name: str, old, new) -> list:
        return [(name, comparator(old, new), old, new)]
    return changes


def by_member(comparator: Callable[[str, Any, Any], Verdict]) -> Changes:
    """A mapping argument compared member by member (a member added or removed is ABSENT on
    one side); an argument that is not a mapping on both sides is not compared."""
    def changes(name: str, old, new) -> list:
        if not (isinstance(old, dict) and isinstance(new, dict)):
            return [(name, run_time(old, new) or
                     (REVIEW, "changed", f"no comparison is defined for {name}"), old, new)]
        return [(f"{name}.{key}", comparator(key, before, after), before, after)
                for key in list(old) + [k for k in new if k not in old]
                if not same(before := old.get(key, ABSENT), after := new.get(key, ABSENT))]
    return changes
