"""Assertion kinds: each a small function that yields failures, registered by name.

Modelled on python-jsonschema's ``_keywords.py``. A kind receives the evaluation context,
what the rule's ``given`` selected, and its argument (with every ``{ref: ...}`` already
resolved for the current binding). It yields ``Failure`` objects and nothing else.

* An ordinary kind is called once per match, with a ``Match``.
* A *collective* kind (``count``, ``unique``, ``order_equals`` …) is called once with the
  list of all matches.
* A kind with ``accepts_empty`` handles "matched nothing" itself (``absent``, ``count``);
  for every other kind the engine reports an empty selection as a violation.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Iterator

import re2

from flarespec.engine.paths import Match
from flarespec.engine.report import json_text, shown


@dataclass(frozen=True)
class Failure:
    message: str
    expected: Any = None
    actual: Any = None
    location: str | None = None
    file: str | None = None  # when the failure is in another file than the rule's selection
    # a hook's argument the failing value came from; `location` is then inside that argument
    source: str | None = None


@dataclass(frozen=True)
class Kind:
    name: str
    function: Callable
    collective: bool
    accepts_empty: bool
    # how a change of the argument moves the rule; used by `spec diff` ("tighter when larger", …)
    order: str | None
    doc: str
    # checks the argument's shape at spec load: (arg, document names) -> problem or None
    check: Callable[[Any, set], str | None]

    def __reduce__(self):
        """Pickled by name (a compiled spec is cached as a pickle): unpickling yields the
        registered kind itself, so a cached spec runs exactly the code of this process and
        no function (some are closures) is pickled."""
        return registered_kind, (self.name,)


KINDS: dict[str, Kind] = {}


def registered_kind(name: str) -> Kind:
    """The kind registered under ``name`` (how a pickled Kind is restored)."""
    return KINDS[name]


def assertion(name: str, *, collective: bool = False, accepts_empty: bool = False,
              order: str | None = None, check: Callable | None = None):
    def register(function):
        KINDS[name] = Kind(name, function, collective, accepts_empty, order,
                           (function.__doc__ or "").strip(), check or _anything)
        return function
    return register


# --------------------------------------------------------------------------- argument checks
# A misspelt argument must fail at spec load, not silently check nothing.

def _dynamic(value) -> bool:
    from flarespec.engine.refs import ArgRef, ArgTemplate

    return isinstance(value, (ArgRef, ArgTemplate))


def _anything(arg, documents) -> None:
    return None


def _got(arg) -> str:
    """An argument as its spec author wrote it (YAML flow style), for load-time messages."""
    return shown(arg, bare_keys=True)


def _boolean(arg, documents) -> str | None:
    return None if isinstance(arg, bool) else f"wants true or false, got {_got(arg)}"


def _text(arg, documents) -> str | None:
    return None if isinstance(arg, str) or _dynamic(arg) else f"wants a string, got {_got(arg)}"


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is reported as a spec issue, not logged


@functools.cache
def compiled_pattern(pattern: str):
    r"""The RE2 program of a spec regex, compiled once per pattern (never per element).

    RE2 matches in time linear in the input whatever the pattern, so neither a hostile
    pattern (``(a+)+$``) nor a hostile value can hang a run. The price: no backreferences
    and no lookaround, and ``\d``, ``\w``, ``\s``, ``\b`` are ASCII-only."""
    return re2.compile(pattern, _RE2_OPTIONS)


def _pattern(arg, documents) -> str | None:
    if not isinstance(arg, str):
        return f"wants a regular expression string, got {_got(arg)}"
    try:
        compiled_pattern(arg)
    except (re2.error, UnicodeError) as error:
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        return (f"invalid regular expression {_got(arg)}: {reason} (spec regexes use RE2 "
                f"syntax: no backreferences or lookaround)")
    return None


def _list(arg, documents) -> str | None:
    return None if isinstance(arg, list) or _dynamic(arg) else f"wants a list, got {_got(arg)}"


def _json_types(arg, documents) -> str | None:
    names = [arg] if isinstance(arg, str) else arg
    if not isinstance(names, list) or not names or any(n not in JSON_TYPES for n in names):
        return f"wants one or more of {', '.join(JSON_TYPES)}, got {_got(arg)}"
    return None


def _keys_from(allowed: tuple, *, at_least_one: bool = True):
    def check(arg, documents) -> str | None:
        if not isinstance(arg, dict):
            return f"wants a mapping with {', '.join(allowed)}, got {_got(arg)}"
        unknown = sorted(set(arg) - set(allowed))
        if unknown:
            return f"unknown argument {', '.join(unknown)}; allowed: {', '.join(allowed)}"
        if at_least_one and not set(arg) & (set(allowed) - {"where"}):
            return f"wants at least one of {', '.join(a for a in allowed if a != 'where')}"
        return None
    return check


def _mapping(arg, documents) -> str | None:
    return None if isinstance(arg, dict) else \
        f"wants a mapping of member -> value, got {_got(arg)}"


def _choice(*options):
    def check(arg, documents) -> str | None:
        return None if arg in options else f"wants one of {', '.join(options)}, got {_got(arg)}"
    return check


def _document_names(arg, documents) -> str | None:
    if not isinstance(arg, list) or not arg:
        return f"wants a list of document names, got {_got(arg)}"
    unknown = [name for name in arg if name not in documents]
    return f"unknown documents {', '.join(map(str, unknown))}" if unknown else None


def _generated_list(arg, documents) -> str | None:
    if isinstance(arg, list) or _dynamic(arg):
        return None
    return _keys_from(("format", "product"))(arg, documents) or \
        (None if "format" in arg else "wants 'format' (and optionally 'product')")


def _same_as(arg, documents) -> str | None:
    problem = _keys_from(("other", "allow_extra"))(arg, documents)
    if problem or "other" not in arg:
        return problem or "wants 'other'"
    extra = arg.get("allow_extra")
    return _keys_from(("keys", "when"))(extra, documents) if extra is not None else None


# --------------------------------------------------------------------------- helpers

JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def json_type(value: Any) -> str:
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


def _same_json(left: Any, right: Any) -> bool:
    """Fast type-strict equality of large values: JSON text keeps 1, 1.0 and true apart."""
    try:
        return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)
    except RecursionError:  # nested deeper than json.dumps goes: compare without recursion
        return strict_equal(left, right)
    except (TypeError, ValueError):
        return False


# Every walk over a value below uses an explicit stack, never recursion: values come from
# untrusted documents and may nest thousands deep (Python's recursion limit is 1000).

def strict_equal(left: Any, right: Any) -> bool:
    """Type-strict deep equality: True != 1, 1 != 1.0, key order irrelevant."""
    if not isinstance(left, (dict, list)):  # the common case: two scalars, no stack
        return type(left) is type(right) and left == right
    pending = [(left, right)]
    while pending:
        left, right = pending.pop()
        if isinstance(left, dict):
            if not isinstance(right, dict) or left.keys() != right.keys():
                return False
            pending.extend((left[key], right[key]) for key in left)
        elif isinstance(left, list):
            if not isinstance(right, list) or len(left) != len(right):
                return False
            pending.extend(zip(left, right))
        elif type(left) is not type(right) or left != right:
            return False
    return True


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
    from flarespec.engine.paths import child_location

    for key in mine:
        at = child_location(where, key)
        yield ("extra", at, mine[key], None) if key not in theirs else (mine[key], theirs[key], at)
    for key in theirs:
        if key not in mine:
            yield "missing", child_location(where, key), None, theirs[key]


def _canonical(value: Any) -> str:
    # type-strict identity for hashing: 1 and 1.0 and True must stay distinct
    try:
        text = json.dumps(value, sort_keys=True, allow_nan=True, default=repr)
    except (RecursionError, ValueError):  # too deep for json.dumps, or an int too long for str
        text = json_text(value, sort_keys=True)
    return text + json_type(value)


def _bounds(arg: dict, measured: float, what: str) -> Iterator[Failure]:
    if "equals" in arg and measured != arg["equals"]:
        yield Failure(f"{what} is {measured}, expected {arg['equals']}", arg["equals"], measured)
    if "min" in arg and measured < arg["min"]:
        yield Failure(f"{what} is {measured}, expected at least {arg['min']}", arg["min"], measured)
    if "max" in arg and measured > arg["max"]:
        yield Failure(f"{what} is {measured}, expected at most {arg['max']}", arg["max"], measured)


# --------------------------------------------------------------------------- kinds

@assertion("present", collective=True, accepts_empty=True, check=_boolean)
def present(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """The selection matches at least one place."""
    if arg and not matches:
        yield Failure("nothing present here", "present", "absent")


@assertion("absent", collective=True, accepts_empty=True, check=_boolean)
def absent(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """The selection matches nothing."""
    if arg:
        for match in matches:
            yield Failure("must be absent", "absent", match.value, match.location)


@assertion("type", check=_json_types)
def type_(ctx, match: Match, arg) -> Iterator[Failure]:
    """JSON type: null, boolean, integer (a JSON integer token), number, string, array, object."""
    allowed = [arg] if isinstance(arg, str) else list(arg)
    actual = json_type(match.value)
    if actual in allowed or (actual == "integer" and "number" in allowed):
        return
    yield Failure(f"is {actual}, expected {' or '.join(allowed)}", allowed, actual)


@assertion("equals")
def equals(ctx, match: Match, arg) -> Iterator[Failure]:
    """Type-strict deep equality with a value, a constant or (via {ref}) another location."""
    if not strict_equal(match.value, arg):
        yield Failure("differs from the expected value", arg, match.value)


@assertion("one_of", check=_list)
def one_of(ctx, match: Match, arg) -> Iterator[Failure]:
    """Type-strict membership in a list."""
    if not any(strict_equal(match.value, option) for option in arg):
        yield Failure("is not one of the allowed values", arg, match.value)


@assertion("regex", check=_pattern)
def regex(ctx, match: Match, arg) -> Iterator[Failure]:
    """A string the pattern matches WHOLE (RE2 syntax, full-match semantics).

    ``^`` and ``$`` are implied: ``abc`` does not match "xabcx", and ``[0-9a-f]{64}`` does
    not match 64 hex digits followed by a newline. RE2 runs in linear time; it has no
    backreferences or lookaround (rejected at spec load), and ``\\d``/``\\w`` are ASCII."""
    value = match.value
    if isinstance(value, str):
        try:
            if compiled_pattern(arg).fullmatch(value):
                return
        except UnicodeEncodeError:  # a lone surrogate (JSON "\ud800") is no Unicode text
            yield Failure(f"is not valid Unicode text (a lone surrogate), so it cannot match "
                          f"/{arg}/", arg, value)
            return
    yield Failure(f"does not match /{arg}/", arg, value)


@assertion("starts_with", check=_text)
def starts_with(ctx, match: Match, arg) -> Iterator[Failure]:
    """A string that begins with the given text."""
    if not isinstance(match.value, str) or not match.value.startswith(arg):
        yield Failure(f"does not begin with {shown(arg)}", arg, match.value)


@assertion("range", check=_keys_from(("min", "max", "exclusive_min", "exclusive_max")))
def range_(ctx, match: Match, arg) -> Iterator[Failure]:
    """A number within bounds: {min, max, exclusive_min, exclusive_max}."""
    value = match.value
    if not is_number(value):
        yield Failure(f"is {json_type(value)}, expected a number", "number", value)
        return
    checks = (("min", lambda v, b: v >= b, "at least"), ("max", lambda v, b: v <= b, "at most"),
              ("exclusive_min", lambda v, b: v > b, "more than"),
              ("exclusive_max", lambda v, b: v < b, "less than"))
    for key, holds, words in checks:
        if key in arg and not holds(value, arg[key]):
            yield Failure(f"is {value}, expected {words} {arg[key]}", {key: arg[key]}, value)


@assertion("finite", check=_boolean)
def finite(ctx, match: Match, arg) -> Iterator[Failure]:
    """A number that is neither NaN nor infinite."""
    value = match.value
    if arg and not is_finite_number(value):
        yield Failure("is not a finite number", "finite number", value)


@assertion("integral", check=_boolean)
def integral(ctx, match: Match, arg) -> Iterator[Failure]:
    """A number with no fractional part, exactly (12 and 12.0 pass; 12.5, NaN and ±inf fail)."""
    value = match.value
    if arg and not is_integral_number(value):
        yield Failure("is not an integral number", "integral number", value)


@assertion("length", order="bounds", check=_keys_from(("equals", "min", "max")))
def length(ctx, match: Match, arg) -> Iterator[Failure]:
    """Length of an array, string or object: {equals, min, max}."""
    value = match.value
    if not isinstance(value, (list, str, dict)):
        yield Failure(f"is {json_type(value)}, has no length", arg, value)
        return
    yield from _bounds(arg, len(value), "length")


@assertion("count", collective=True, accepts_empty=True, order="bounds",
           check=_keys_from(("equals", "min", "max", "where")))
def count(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """Number of places the selection matched: {equals, min, max, where: {<kind>: arg}}.

    With ``where``, only the matches that satisfy that one assertion are counted.
    """
    what = "match count"
    if arg.get("where"):
        (name, inner), = arg["where"].items()
        kind = KINDS[name]
        matches = [m for m in matches
                   if not any(True for _ in kind.function(ctx, [m] if kind.collective else m,
                                                          inner))]
        what = f"count of matches with {name} {_got(inner)}"
    yield from _bounds(arg, len(matches), what)


@assertion("unique", collective=True, check=_boolean)
def unique(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """The matched values are pairwise distinct (type-strict)."""
    if not arg:
        return
    seen: dict[str, str] = {}
    for match in matches:
        key = _canonical(match.value)
        if key in seen:
            yield Failure(f"duplicate of the value at {seen[key]}", "unique", match.value,
                          match.location)
        else:
            seen[key] = match.location


# A generated order_equals list is built only when its size, computed arithmetically first,
# exceeds the number of matched values by at most this much. A count read from the evidence
# ({range: {ref}}) thus never makes the engine build more than the packet itself holds;
# the slack keeps the "missing <value>" detail for a few absent values.
GENERATED_SLACK = 1000


@assertion("order_equals", collective=True, accepts_empty=True, check=_generated_list)
def order_equals(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """The matched values, in order, equal a reference list (type-strict).

    The list is literal, a {ref}, or generated: {format: "r{r}.{kind}", product: {r: {range: 2},
    kind: [a, b]}} expands the template over the cartesian product, leftmost key outermost.
    A generated list more than GENERATED_SLACK values longer than the selection is not
    built: the rule fails on the counts alone.
    """
    actual = [m.value for m in matches]
    if isinstance(arg, list):
        expected = arg
    else:
        template, axes = _generated(arg)
        size = math.prod(_axis_size(values) for _, values in axes)
        if size > len(actual) + GENERATED_SLACK:
            yield Failure(f"{len(actual)} values where {size} belong (too many to list)",
                          size, len(actual))
            return
        expected = _expand(template, axes)
    if len(actual) == len(expected) and all(map(strict_equal, actual, expected)):
        return
    yield Failure(_order_problems(actual, expected), expected, actual)


def _order_problems(actual: list, expected: list) -> str:
    """What differs between two lists, found with hashed canonical keys (linear time)."""
    actual_keys = [_canonical(v) for v in actual]
    expected_keys = [_canonical(v) for v in expected]
    present, wanted, seen = set(actual_keys), set(expected_keys), set()
    missing = [v for v, key in zip(expected, expected_keys) if key not in present]
    extra = [v for v, key in zip(actual, actual_keys) if key not in wanted]
    duplicated = []
    for value, key in zip(actual, actual_keys):
        if key in seen:
            duplicated.append(value)
        seen.add(key)
    parts = []
    if missing:
        parts.append(f"missing {_short_list(missing)}")
    if extra:
        parts.append(f"unexpected {_short_list(extra)}")
    if duplicated:
        parts.append(f"duplicated {_short_list(duplicated)}")
    if not parts and len(actual) != len(expected):
        parts.append(f"{len(actual)} values where {len(expected)} belong")
    if not parts:
        first = next(i for i, (a, e) in enumerate(zip(actual, expected)) if not strict_equal(a, e))
        parts.append(f"out of order from position {first}: {shown(actual[first])} where "
                     f"{shown(expected[first])} belongs")
    return "; ".join(parts)


def _short_list(values: list, limit: int = 5) -> str:
    text = ", ".join(shown(v) for v in values[:limit])
    return text + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _generated(arg) -> tuple[str, list[tuple[str, list | range]]]:
    """The template and checked axes of a generated list; a range stays a lazy ``range``."""
    if not isinstance(arg, dict) or "format" not in arg:
        raise ValueError("order_equals wants a list or {format, product}")
    axes: list[tuple[str, list | range]] = []
    for name, values in (arg.get("product") or {}).items():
        if isinstance(values, dict) and "range" in values:
            stop = values["range"]
            if not isinstance(stop, int) or isinstance(stop, bool) or stop < 0:
                raise ValueError(f"range for {shown(name)} needs a non-negative integer, "
                                 f"got {shown(stop)}")
            values = range(stop)
        if not isinstance(values, (list, range)):
            raise ValueError(f"product axis {shown(name)} must be a list or {{range: n}}")
        axes.append((name, values))
    return arg["format"], axes


def _axis_size(values: list | range) -> int:
    return values.stop if isinstance(values, range) else len(values)  # len() overflows past 2**63


def _expand(template: str, axes: list[tuple[str, list | range]]) -> list:
    names = [name for name, _ in axes]
    return [template.format(**dict(zip(names, combination)))
            for combination in itertools.product(*(values for _, values in axes))]


@assertion("monotonic", collective=True, check=_choice("non_decreasing", "increasing"))
def monotonic(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """The matched numbers, in order, are non_decreasing (or increasing)."""
    strict = arg == "increasing"
    previous: Match | None = None
    for match in matches:
        if not is_number(match.value):
            yield Failure(f"is {json_type(match.value)}, expected a number", "number",
                          match.value, match.location)
            return
        if previous is not None and (match.value < previous.value or
                                     (strict and match.value == previous.value)):
            yield Failure(f"{match.value} follows {previous.value} at {previous.location}; "
                          f"expected {arg.replace('_', '-')} values", arg, match.value,
                          match.location)
        previous = match


@assertion("keys", check=_list)
def keys(ctx, match: Match, arg) -> Iterator[Failure]:
    """An object whose set of keys is exactly the given list (order irrelevant)."""
    value = match.value
    if not isinstance(value, dict):
        yield Failure(f"is {json_type(value)}, expected an object", "object", value)
        return
    expected = list(arg)
    wanted = {k for k in expected if isinstance(k, str)}  # a set: linear, not len² lookups
    missing = [k for k in expected if not isinstance(k, str) or k not in value]
    extra = [k for k in value if k not in wanted]
    if missing or extra:
        detail = "; ".join(p for p in (missing and f"missing keys {_short_list(missing)}",
                                       extra and f"unexpected keys {_short_list(extra)}") if p)
        yield Failure(detail, sorted(expected, key=str), sorted(value))


@assertion("includes", check=_mapping)
def includes(ctx, match: Match, arg) -> Iterator[Failure]:
    """An object whose named members equal the given values (type-strict); others are free."""
    from flarespec.engine.paths import child_location

    value = match.value
    if not isinstance(value, dict):
        yield Failure(f"is {json_type(value)}, expected an object", "object", value)
        return
    for key, expected in arg.items():
        where = child_location(match.location, key)
        if key not in value:
            yield Failure(f"{where} is missing", expected, None, where)
        elif not strict_equal(value[key], expected):
            yield Failure(f"{where} differs from the expected value", expected, value[key], where)


@assertion("same_as", check=_same_as)
def same_as(ctx, match: Match, arg) -> Iterator[Failure]:
    """Type-strict deep equality with another value, optionally allowing named extra keys.

    {other: {ref: ...}, allow_extra: {keys: [dotted.key, ...], when: <condition>}}: the listed
    keys may be present in the given value alone, and only while the condition holds.
    """
    if _same_json(match.value, arg.get("other")):
        return
    allowed = set()
    extra = arg.get("allow_extra") or {}
    if extra and extra.get("when", True):
        allowed = {"$." + key for key in extra.get("keys", [])}
    for kind, location, mine, theirs in differences(match.value, arg.get("other")):
        if kind == "extra" and location.replace(match.location, "$", 1) in allowed:
            continue
        where = location.replace("$", match.location, 1) if location.startswith("$") else location
        if kind == "extra":
            yield Failure(f"{where} is present here but not in the other copy", None, mine, where)
        elif kind == "missing":
            yield Failure(f"{where} is missing here but present in the other copy", theirs, None,
                          where)
        else:
            yield Failure(f"{where} differs from the other copy", theirs, mine, where)


def _formula_arguments(arg, _documents) -> str | None:
    """The formula kind's argument check: ``rel_tol`` and ``abs_tol`` (``math.isclose``'s
    tolerances), when given, are finite numbers >= 0 (not bool, not text). Accepts the
    spec's form ({expr, refs, rel_tol, abs_tol}) and the compiled one alike."""
    if not isinstance(arg, dict):
        return None
    for name in ("rel_tol", "abs_tol"):
        if name not in arg:
            continue
        value = arg[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 0:
            return (f"{name} is a tolerance: a finite number >= 0 (e.g. 1.0e-9), "
                    f"got {shown(value)}")
    return None


@assertion("formula", check=_formula_arguments)
def formula(ctx, match: Match, arg) -> Iterator[Failure]:
    """A safe arithmetic formula over the value's fields holds: "a + b == @total"."""
    compiled, refs = arg["compiled"], arg.get("refs") or {}
    from flarespec.engine.formula import EvaluationError

    try:
        result = compiled.evaluate(match.value, refs, rel_tol=arg.get("rel_tol", 0.0),
                                   abs_tol=arg.get("abs_tol", 0.0))
    except EvaluationError as error:
        yield Failure(f"cannot evaluate {compiled.source!r}: {error}", compiled.source, None)
        return
    if not getattr(result, "ok", bool(result)):
        yield Failure(f"{compiled.source!r} does not hold: {result.left!r} {result.operator} "
                      f"{result.right!r}", result.right, result.left)


@assertion("not")
def not_(ctx, match: Match, arg) -> Iterator[Failure]:
    """The inner assertion (one kind) must fail: {not: {starts_with: "x"}}."""
    (name, inner), = arg.items()
    kind = KINDS[name]
    failures = list(kind.function(ctx, [match] if kind.collective else match, inner))
    if not failures:
        written = inner["compiled"].source if name == "formula" else inner
        yield Failure(f"must not satisfy {name} {_got(written)}", {"not": {name: written}},
                      match.value)


def _not_a_manifest(match: Match) -> Failure:
    return Failure(f"is {json_type(match.value)}, expected an object (path -> digest)",
                   "object", json_type(match.value), match.location)


@assertion("manifest_lists_all", collective=True, check=_document_names)
def manifest_lists_all(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """An object (path -> digest) has a key for every file of the named documents."""
    for match in matches:
        if not isinstance(match.value, dict):
            yield _not_a_manifest(match)
            continue
        paths = ctx.document_paths(arg)
        for path in sorted(paths - set(match.value)):
            yield Failure(f"no entry for {path}", path, None, match.location)


@assertion("manifest_lists_only", collective=True,
           check=_document_names)
def manifest_lists_only(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """An object (path -> digest) has no key other than the files of the named documents."""
    from flarespec.engine.paths import child_location

    for match in matches:
        if not isinstance(match.value, dict):
            yield _not_a_manifest(match)
            continue
        paths = ctx.document_paths(arg, complete=True)  # "extra" needs every path
        for key in match.value:
            if key not in paths:
                yield Failure(f"entry {key} names no referenced file", None, key,
                              child_location(match.location, key))


@assertion("manifest_digests", collective=True, check=_document_names)
def manifest_digests(ctx, matches: list[Match], arg) -> Iterator[Failure]:
    """Each entry (path -> SHA-256) of a referenced file equals the digest of the file's bytes."""
    from flarespec.engine.paths import child_location

    for match in matches:
        if not isinstance(match.value, dict):
            yield _not_a_manifest(match)
            continue
        paths = ctx.document_paths(arg)
        for key, declared in match.value.items():
            if key in paths:
                hashed = ctx.digest(key)
                if hashed is not None and declared != hashed:
                    # actual = what the packet declares (the value at the location);
                    # expected = what the file's bytes hash to. The message says both.
                    yield Failure(f"digest of {key} differs from the file's bytes: declared "
                                  f"{shown(declared)}, the bytes hash to {shown(hashed)}",
                                  hashed, declared, child_location(match.location, key))
