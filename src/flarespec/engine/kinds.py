"""Assertion kinds: each one registered function that gives the verdict and the words.

Modelled on python-jsonschema's ``_keywords.py``. A kind is one generator function
``(ctx, subject, arg, at)`` that yields a ``Failure`` for every way the subject fails and
nothing when it holds. Registered beside it: its argument schema, as data (``argument=``,
engine/argument_schema.py: the check at spec load and on an argument read per binding,
``Kind.check`` and ``Kind.read_argument``, the editor's JSON Schema and what the compiler
compiles of the argument are derived from it), its diff classification
(``diff``: how a change of the argument moves the accepted set, see
``engine/directions.py``) and its documentation (the docstring).

* ``subject`` is the raw selected value, or for a *collective* kind (``count``,
  ``unique``, ``order_equals`` …) the list of all selected values.
* ``arg`` is the rule's argument with every ``{ref: ...}`` already resolved.
* ``at`` is where the subject lies (a location string; for a collective kind a sequence
  of them, one per value). It only ever goes into a failure's words or location: the
  verdict must not depend on it.
* ``ctx`` is what the kind may ask of the engine (``RuleContext``); only kinds registered
  with ``context=True`` use it.

The verdict is derived, never written twice: ``Kind.holds`` is "the first failure is
None", computed by the same function with placeholder locations (``HERE``/``EVERYWHERE``).
Rules, conditions (``when``), ``not``, ``count``'s ``where`` and spec selection all ask
``holds``; the reporting path iterates the same function for the words. A kind with
``accepts_empty`` handles "matched nothing" itself (``absent``, ``count``); for every
other kind the engine reports an empty selection as a violation.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import re2

from flarespec.engine import directions as d
from flarespec.engine.argument_schema import (  # noqa: F401 (ArgumentMistyped, READ: re-exported)
    ANYTHING,
    ASSERTION,
    CONDITION,
    READ,
    ArgumentMistyped,
    ArgumentValue,
    Choice,
    DocumentNames,
    Formula,
    JsonTypes,
    Keys,
    ListOf,
    Schema,
    dynamic,
    got,
    in_spec,
    written,
)
from flarespec.engine.paths import PathSyntaxError, Template, compile_template
from flarespec.loaders.locations import child_location
from flarespec.engine.outcome import shown
from flarespec.engine.values import (
    JSON_TYPES,
    canonical_key,
    compiled_pattern,
    full_match,
    differences,
    is_finite_number,
    is_integral_number,
    is_number,
    json_type,
    same_json,
    strict_equal,
    strict_equal_large,
)


@dataclass(frozen=True)
class Failure:
    message: str
    expected: Any = None
    actual: Any = None
    location: str | None = None
    file: str | None = None  # when the failure is in another file than the rule's selection
    # a hook's argument the failing value came from; `location` is then inside that argument
    source: str | None = None


class _Everywhere:
    """The locations of a collective subject when nobody will read them: the verdict."""

    def __getitem__(self, index) -> str:
        return "$"


HERE = "$"                 # the location of a subject whose failures are not worded
EVERYWHERE = _Everywhere()


@dataclass(frozen=True)
class Kind:
    name: str
    function: Callable[..., Iterator[Failure]]
    collective: bool
    accepts_empty: bool
    # the argument schema, as data (engine/argument_schema.py): the check at spec load and
    # once read (``check``), the editor's JSON Schema, what the compiler compiles of it
    argument: Schema
    # spec diff's classification: (name, old arg, new arg) -> [(sub-path, verdict, old, new)]
    diff: d.Changes
    doc: str
    # asks the engine for more than the values (document paths, digests): never decided
    # without a binding's context
    context: bool = False
    # the kind's inline pass test, optional: ``(subject, arg, constant) -> source or None``.
    # ``subject`` is the name of a local variable of generated code holding the raw subject
    # (one value; for a collective kind the list of the selected values), ``arg`` the
    # rule's static argument (known when the code is generated), ``constant(obj)`` the name
    # under which ``obj`` is reachable from the generated code (never spelt as text). The
    # source is one Python expression that is True only when the kind's function yields no
    # failure for (subject, arg); False, or an exception, means "not known" (the reporting
    # path decides), never a violation. None: no inline test for this argument. Registered
    # beside the kind by ``@inline_test(name)``.
    inline: Callable[[str, Any, Callable[[Any], str]], str | None] | None = None
    # the inline test also takes an argument read per binding: ``arg`` is then its skeleton,
    # each part read per binding an ``inline.Dynamic`` (``@inline_test(name, dynamic=True)``)
    inline_dynamic: bool = False

    def check(self, arg, documents) -> str | None:
        """What ``arg`` misses of the kind's argument schema (``documents``: the spec's
        document names at load, ``READ`` once read), or None."""
        return self.argument.problem(arg, documents)

    def read_argument(self, arg):
        """``arg`` as read for one binding (its {ref}s read), checked against the kind's
        argument schema as the spec's argument was at load; ArgumentMistyped says what the
        kind wants and what was read."""
        problem = self.argument_problem(arg)
        if problem is not None:
            raise ArgumentMistyped(f"{problem} (the argument as read here)")
        return arg

    def argument_problem(self, arg) -> str | None:
        """What ``arg`` (as read for a binding) misses of this kind's argument schema and of
        the schemas of the assertions it wraps, or None."""
        if self.argument is ANYTHING:
            return None
        problem = self.argument.problem(arg, READ)
        if problem is not None:
            return f"{self.name}: {problem}"
        for name, inner in self.argument.inner(arg):
            problem = KINDS[name].argument_problem(inner)
            if problem is not None:
                return f"{self.name}: {problem}"
        return None

    def holds(self, ctx, subject, arg) -> bool:
        """The verdict on one subject: the kind's function yields no failure."""
        for _ in self.function(ctx, subject, arg, EVERYWHERE if self.collective else HERE):
            return False
        return True

    def holds_for(self, ctx, values: list, arg) -> bool:
        """The verdict on a selection's values: the whole list for a collective kind, each
        value for any other (the caller decides what an empty selection means). ``arg`` is
        read for this binding (what the plans and conditions pass here): it is checked
        first (``read_argument``), so a verdict is never given on a mistyped argument."""
        if self.argument is not ANYTHING:
            self.read_argument(arg)
        if self.collective:
            return self.holds(ctx, values, arg)
        function = self.function
        for value in values:
            for _ in function(ctx, value, arg, HERE):
                return False
        return True

    def holds_alone(self, ctx, value, arg) -> bool:
        """One value on its own, as ``not`` and ``count``'s ``where`` apply a kind: a
        collective kind sees the list of that one value."""
        return self.holds(ctx, [value] if self.collective else value, arg)

    def verdict(self, arg, *, alone: bool = False) -> Callable[[Any], bool]:
        """``subject -> holds`` for one argument, bound once (a rule's static argument, a
        ``where``'s inner assertion): the same derivation as ``holds``, ``holds_for`` on a
        selection's values, or with ``alone`` ``holds_alone`` on one value. Only for a kind
        that needs no context: the function is called with none, so a verdict it gives
        (rather than raises) depends on the subject and the argument alone. A one-value
        verdict on a scalar subject of an exact type whose equal values are type-strictly
        equal (None, bool, int, str: never a float, where 0.0 == -0.0) is therefore asked of
        the function once and remembered for this argument."""
        function = self.function
        if self.collective:
            if alone:
                return _remembered(lambda value: _none_yielded(
                    function(None, [value], arg, EVERYWHERE)))
            return lambda values: _none_yielded(function(None, values, arg, EVERYWHERE))
        remembered = _remembered(lambda value: _none_yielded(function(None, value, arg, HERE)))
        if alone:
            return remembered

        def each(values: list) -> bool:  # a scalar by what is remembered, any other anew
            for value in values:
                if type(value) in _MEMO_TYPES:
                    if not remembered(value):
                        return False
                else:
                    for _ in function(None, value, arg, HERE):
                        return False
            return True
        return each

    def __reduce__(self):
        """Pickled by name (a compiled spec is cached as a pickle): unpickling yields the
        registered kind itself, so a cached spec runs exactly the code of this process and
        no function (some are closures) is pickled."""
        return registered_kind, (self.name,)


def _none_yielded(failures: Iterator[Failure]) -> bool:
    for _ in failures:
        return False
    return True


_MEMO_TYPES = (type(None), bool, int, str)
_MEMO_SIZE = 256  # distinct subjects remembered per bound verdict (arrival times never repeat)


def _remembered(decide: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``decide`` over one value, remembered per (exact type, value) for the scalar types
    of ``_MEMO_TYPES``; any other value (containers, floats, Decimals) is decided anew."""
    known: dict = {}

    def verdict(value) -> bool:
        kind = type(value)
        if kind not in _MEMO_TYPES:
            return decide(value)
        key = (kind, value)
        found = known.get(key)
        if found is None:
            found = decide(value)
            if len(known) < _MEMO_SIZE:
                known[key] = found
        return found
    return verdict


KINDS: dict[str, Kind] = {}


def registered_kind(name: str) -> Kind:
    """The kind registered under ``name`` (how a pickled Kind is restored)."""
    return KINDS[name]


def assertion(name: str, *, diff: d.Changes, argument: Schema = ANYTHING,
              collective: bool = False, accepts_empty: bool = False, context: bool = False):
    """Register the decorated generator as the kind ``name`` (see the module docstring);
    ``argument`` is its argument schema (engine/argument_schema.py: any value when left
    out)."""
    if not isinstance(argument, Schema):
        raise TypeError(f"{name}: argument= is an argument schema (engine/argument_schema.py), "
                        f"got {argument!r}")

    def register(function):
        KINDS[name] = Kind(name, function, collective, accepts_empty, argument,
                           diff, (function.__doc__ or "").strip(), context)
        return function
    return register


def inline_test(name: str, *, dynamic: bool = False):
    """Register the decorated ``(subject, arg, constant) -> source or None`` as the inline
    pass test of the kind ``name`` (see ``Kind.inline``), written beside the kind;
    ``dynamic``: it also takes an argument's skeleton (``Kind.inline_dynamic``)."""
    def register(function):
        KINDS[name] = dataclasses.replace(KINDS[name], inline=function, inline_dynamic=dynamic)
        return function
    return register


def argument_changes(old: dict, new: dict) -> list[tuple[str, d.Verdict, Any, Any]]:
    """(sub-path under ``assert``, verdict, old, new) for one assertion change: by the
    kind's own ``diff`` when the kind stayed, by ``directions.kind_change`` when not."""
    (old_kind, old_arg), = old.items()
    (new_kind, new_arg), = new.items()
    if old_kind != new_kind:
        return [("", d.kind_change(old_kind, old_arg, new_kind, new_arg), old, new)]
    kind = KINDS.get(old_kind)
    if kind is None:
        return [(old_kind, d.run_time(old_arg, new_arg) or
                 (d.REVIEW, "changed", f"no comparison is defined for {old_kind}"),
                 old_arg, new_arg)]
    return kind.diff(old_kind, old_arg, new_arg)


# --------------------------------------------------------------------------- argument schemas
# A misspelt argument, or one that can never hold, must fail at spec load, not silently
# check nothing or fail in Python's words while a packet is validated. Each kind declares
# its argument schema as data (``argument=``, engine/argument_schema.py): the check at load
# on the compiled argument, where a value read per binding (a {ref} or {template}) is
# accepted as it stands, the check of the argument as read for a binding when it had such
# a value (``Kind.read_argument``, with the document names ``READ``), the editor's JSON
# Schema (authoring/schema.py) and what the compiler compiles of it are all derived from
# it: one schema, checked wherever a value of it becomes known. What only the spec's own
# argument is refused for (it leaves nothing that can hold: ``one_of: []``, ``min`` above
# ``max``) is the evidence's to fail once read (``all: true`` over nothing is the empty
# list): the kind words that failure. The values and nodes the kinds share:

_dynamic, _got, _written, _in_spec = dynamic, got, written, in_spec  # the kinds' words


def _not_nan(value) -> bool:
    return is_number(value) and not (value != value)  # NaN is the one number unequal to itself


NUMBER = ArgumentValue("a number (not NaN)", _not_nan, {"type": "number"}, name="number")
COUNT = ArgumentValue("a whole number >= 0",
                      lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                      {"type": "integer", "minimum": 0}, name="count")
MEMBER_NAME = ArgumentValue("a string (a member name)", lambda v: isinstance(v, str),
                            {"type": "string"}, many="strings (member names)",
                            name="member_name")
BOOLEAN = ArgumentValue("true or false", lambda v: isinstance(v, bool), {"type": "boolean"},
                        accepts_dynamic=False)
TEXT = ArgumentValue("a string", lambda v: isinstance(v, str), {"type": "string"})
MAPPING = ArgumentValue("a mapping of member -> value", lambda v: isinstance(v, dict),
                        {"type": "object"}, accepts_dynamic=False, shallow=True)


class _Pattern(Schema):
    """An RE2 pattern, compiled at load (a spec's regexes are RE2: no backreferences or
    lookaround)."""

    def problem(self, arg, documents) -> str | None:
        if not isinstance(arg, str):
            return f"wants a regular expression string, got {_got(arg)}"
        try:
            compiled_pattern(arg)
        except (re2.error, UnicodeError) as error:
            reason = error.args[0] if error.args else error
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            return (f"invalid regular expression {_written(arg)}: {reason} (spec regexes use "
                    f"RE2 syntax: no backreferences or lookaround)")
        return None

    def json_schema(self, forms) -> dict:
        return {"type": "string", "description": "an RE2 pattern"}


class _GeneratedList(Schema):
    """order_equals's list: a list, a {ref} to one, or ``{format, product}``: ``product``
    maps axis names to a list (or a {ref} to one) or ``{range: n}`` (n a whole number >= 0,
    or a {ref}), and ``format`` is a template of the spec's own grammar (engine/paths.py)
    whose every placeholder is one axis name alone: ``"r{repetition}.{kind}"``."""

    FORMAT = Keys({"format": ANYTHING, "product": ANYTHING})

    def problem(self, arg, documents) -> str | None:
        if isinstance(arg, list) or _dynamic(arg):
            return None
        problem = self.FORMAT.problem(arg, documents)
        if problem or "format" not in arg:
            return problem or "wants 'format' (and optionally 'product')"
        product = arg.get("product", {})
        if not isinstance(product, dict):
            return (f"product wants a mapping of axis name -> list or {{range: n}}, "
                    f"got {_got(product)}")
        for name, axis in product.items():
            if isinstance(axis, dict) and set(axis) == {"range"}:
                problem = COUNT.problem(axis["range"], documents, f"product axis {name} range")
            elif not (isinstance(axis, list) or _dynamic(axis)):
                problem = (f"product axis {name} wants a list or {{range: n}}, "
                           f"got {_got(axis)}")
            if problem:
                return problem
        return _format_problem(arg["format"], product)

    def json_schema(self, forms) -> dict:
        """(Which placeholders name an axis is lint's.)"""
        axis = forms.dynamic({"anyOf": [{"type": "array"}, {
            "type": "object", "required": ["range"], "additionalProperties": False,
            "properties": {"range": COUNT.member_schema(forms)}}]})
        generated = {"type": "object", "required": ["format"], "additionalProperties": False,
                     "properties": {
                         "format": {"type": "string", "description": "a template whose every "
                                    "placeholder is an axis of product: r{repetition}.{kind}"},
                         "product": {"type": "object", "additionalProperties": forms.value(axis)}}}
        return forms.dynamic({"anyOf": [{"type": "array"}, generated]})

    def nodes(self):
        yield self
        yield COUNT


def _format_problem(text, product: dict) -> str | None:
    axes = ", ".join(map(str, product)) or "none"
    if not isinstance(text, str):
        return f"format wants a string (a template over the axes of product), got {_got(text)}"
    try:
        template = _format_template(text)
    except PathSyntaxError as error:
        return f"format {_written(text)}: {error}; a placeholder of a format is an axis of " \
               f"product ({axes})"
    for placeholder in template.placeholders:
        if str(placeholder) not in product:
            return (f"format {_written(text)}: placeholder {{{placeholder}}} names no axis of "
                    f"product ({axes}); a placeholder of a format is one axis name, nothing "
                    f"more")
    return None


@functools.lru_cache(maxsize=256)
def _format_template(text: str) -> Template:
    """A format's template, compiled once per text (the check of an argument read per
    binding compiles the same format each time)."""
    return compile_template(text)


PATTERN, GENERATED_LIST = _Pattern(), _GeneratedList()
JSON_TYPE_NAMES, DOCUMENT_NAMES, FORMULA = JsonTypes(), DocumentNames(), Formula()
SAME_AS = Keys({"other": ANYTHING,
                "allow_extra": Keys({"keys": ANYTHING, "when": CONDITION})},
               required=("other",))


def _bounds(arg: dict, measured: float, what: Callable[[], str]) -> Iterator[Failure]:
    """A size's bounds; ``what()`` words the size, asked only for a failure."""
    if "equals" in arg and measured != arg["equals"]:
        yield Failure(f"{what()} is {measured}, expected {arg['equals']}", arg["equals"], measured)
    if "min" in arg and measured < arg["min"]:
        yield Failure(f"{what()} is {measured}, expected at least {arg['min']}", arg["min"], measured)
    if "max" in arg and measured > arg["max"]:
        yield Failure(f"{what()} is {measured}, expected at most {arg['max']}", arg["max"], measured)


def _not_an_object(value) -> Failure:
    return Failure(f"is {json_type(value)}, expected an object", "object", value)


# --------------------------------------------------------------------------- kinds

@assertion("present", collective=True, accepts_empty=True, argument=BOOLEAN,
           diff=d.whole(d.switch))
def present(ctx, values: list, arg, at) -> Iterator[Failure]:
    """The selection matches at least one place."""
    if arg and not values:
        yield Failure("nothing present here", "present", "absent")


@inline_test("present")
def _present_inline(subject, arg, constant):
    """Something matched (``present: false`` holds always)."""
    return {True: f"(len({subject}) != 0)", False: "True"}.get(arg) if type(arg) is bool else None


@assertion("absent", collective=True, accepts_empty=True, argument=BOOLEAN,
           diff=d.whole(d.switch))
def absent(ctx, values: list, arg, at) -> Iterator[Failure]:
    """The selection matches nothing."""
    if arg:
        for index, value in enumerate(values):
            yield Failure("must be absent", "absent", value, at[index])


@inline_test("absent")
def _absent_inline(subject, arg, constant):
    """Nothing matched (``absent: false`` holds always)."""
    return {True: f"(len({subject}) == 0)", False: "True"}.get(arg) if type(arg) is bool else None


@assertion("type", argument=JSON_TYPE_NAMES, diff=d.whole(d.type_verdict))
def type_(ctx, value, arg, at) -> Iterator[Failure]:
    """JSON type: null, boolean, integer (a JSON integer token), number, string, array, object."""
    actual = json_type(value)
    if isinstance(arg, str):
        if actual == arg or (actual == "integer" and arg == "number"):
            return
    elif actual in arg or (actual == "integer" and "number" in arg):
        return
    allowed = [arg] if isinstance(arg, str) else list(arg)
    yield Failure(f"is {actual}, expected {' or '.join(allowed)}", allowed, actual)


@inline_test("type")
def _type_inline(subject, arg, constant):
    """The subject's exact Python type is one of the named JSON types' (a subclass: not
    known; ``bool`` is never an integer here, as ``json_type`` says)."""
    from flarespec.engine.inline import EXACT_TYPES

    names = [arg] if isinstance(arg, str) else arg
    types = frozenset(python for name in names for python in EXACT_TYPES[name])
    return f"(type({subject}) in {constant(types)})"


@assertion("equals", diff=d.whole(d.review("another expected value: neither set contains "
                                           "the other")))
def equals(ctx, value, arg, at) -> Iterator[Failure]:
    """Type-strict deep equality with a value, a constant or (via {ref}) another location."""
    if not strict_equal(value, arg):
        yield Failure("differs from the expected value", arg, value)


@inline_test("equals", dynamic=True)
def _equals_inline(subject, arg, constant):
    """Type-strict equality: a scalar by exact type and ``==``, a container by strict_equal;
    a value read per binding compared as strict_equal compares (``equal_source``)."""
    from flarespec.engine.inline import equal_source

    return equal_source(subject, arg, constant)


@assertion("one_of", argument=ListOf(non_empty=True),
           diff=d.whole(lambda o, n: d.sets(o, n, more_is_looser=True, what="allowed set")))
def one_of(ctx, value, arg, at) -> Iterator[Failure]:
    """Type-strict membership in a list."""
    if not any(strict_equal(value, option) for option in arg):
        yield Failure("is not one of the allowed values", arg, value)


@inline_test("one_of")
def _one_of_inline(subject, arg, constant):
    """Type-strict membership: the scalar options in one set of (exact type, value)."""
    from flarespec.engine.inline import equal_to_any_source

    return equal_to_any_source(subject, arg, constant) if isinstance(arg, list) else None


@assertion("regex", argument=PATTERN, diff=d.whole(d.regex_verdict))
def regex(ctx, value, arg, at) -> Iterator[Failure]:
    """A string the pattern matches WHOLE (RE2 syntax, full-match semantics).

    ``^`` and ``$`` are implied: ``abc`` does not match "xabcx", and ``[0-9a-f]{64}`` does
    not match 64 hex digits followed by a newline. RE2 runs in linear time; it has no
    backreferences or lookaround (rejected at spec load), and ``\\d``/``\\w`` are ASCII."""
    if isinstance(value, str):
        try:
            if full_match(arg)(value):
                return
        except UnicodeEncodeError:  # a lone surrogate (JSON "\ud800") is no Unicode text
            yield Failure(f"is not valid Unicode text (a lone surrogate), so it cannot match "
                          f"/{arg}/", arg, value)
            return
    yield Failure(f"does not match /{arg}/", arg, value)


@inline_test("regex")
def _regex_inline(subject, arg, constant):
    """The pattern's compiled full match, asked once (a lone surrogate raises: not known)."""
    if type(arg) is not str:
        return None
    matches = constant(full_match(arg))
    return f"(type({subject}) is str and {matches}({subject}))"


@assertion("starts_with", argument=TEXT, diff=d.whole(d.prefix_verdict))
def starts_with(ctx, value, arg, at) -> Iterator[Failure]:
    """A string that begins with the given text."""
    if not isinstance(value, str) or not value.startswith(arg):
        yield Failure(f"does not begin with {shown(arg)}", arg, value)


@inline_test("starts_with")
def _starts_with_inline(subject, arg, constant):
    """A string with the prefix (a str subclass: not known)."""
    if not isinstance(arg, str):
        return None
    return f"(type({subject}) is str and {subject}.startswith({constant(arg)}))"


_RANGE_BOUNDS = (("min", lambda v, b: v >= b, "at least"), ("max", lambda v, b: v <= b, "at most"),
                 ("exclusive_min", lambda v, b: v > b, "more than"),
                 ("exclusive_max", lambda v, b: v < b, "less than"))


# (low, high, strict) bounds that together leave nothing when low > high (or low == high,
# when either one is exclusive)
_RANGE_ORDER = (("min", "max", False), ("min", "exclusive_max", True),
                ("exclusive_min", "max", True), ("exclusive_min", "exclusive_max", True))
_SIZE_ORDER = (("min", "max", False), ("min", "equals", False), ("equals", "max", False))


@assertion("range", argument=Keys({"min": NUMBER, "max": NUMBER, "exclusive_min": NUMBER,
                                   "exclusive_max": NUMBER}, order=_RANGE_ORDER),
           diff=d.by_member(d.range_members))
def range_(ctx, value, arg, at) -> Iterator[Failure]:
    """A number within bounds: {min, max, exclusive_min, exclusive_max}."""
    if not is_number(value):
        yield Failure(f"is {json_type(value)}, expected a number", "number", value)
        return
    for key, holds, words in _RANGE_BOUNDS:
        if key in arg and not holds(value, arg[key]):
            yield Failure(f"is {value}, expected {words} {arg[key]}", {key: arg[key]}, value)


@inline_test("range")
def _range_inline(subject, arg, constant):
    """A number of an exact number type, each bound compared as the kind compares it."""
    from flarespec.engine.inline import NUMBER_TYPES

    operators = {"min": ">=", "max": "<=", "exclusive_min": ">", "exclusive_max": "<"}
    tests = [f"{subject} {operators[key]} {constant(bound)}" for key, bound in arg.items()]
    return f"(type({subject}) in {constant(NUMBER_TYPES)}" + "".join(
        f" and {test}" for test in tests) + ")"


@assertion("finite", argument=BOOLEAN, diff=d.whole(d.switch))
def finite(ctx, value, arg, at) -> Iterator[Failure]:
    """A number that is neither NaN nor infinite."""
    if arg and not is_finite_number(value):
        yield Failure("is not a finite number", "finite number", value)


@inline_test("finite")
def _finite_inline(subject, arg, constant):
    """An int at once, any other value by ``is_finite_number`` (the kind's own test)."""
    if type(arg) is not bool:
        return None
    return f"(type({subject}) is int or {constant(is_finite_number)}({subject}))" if arg else "True"


@assertion("integral", argument=BOOLEAN, diff=d.whole(d.switch))
def integral(ctx, value, arg, at) -> Iterator[Failure]:
    """A number with no fractional part, exactly (12 and 12.0 pass; 12.5, NaN and ±inf fail)."""
    if arg and not is_integral_number(value):
        yield Failure("is not an integral number", "integral number", value)


@inline_test("integral")
def _integral_inline(subject, arg, constant):
    """An int at once, any other value by ``is_integral_number`` (the kind's own test)."""
    if type(arg) is not bool:
        return None
    return f"(type({subject}) is int or {constant(is_integral_number)}({subject}))" if arg \
        else "True"


@assertion("length", argument=Keys({"equals": COUNT, "min": COUNT, "max": COUNT},
                                    order=_SIZE_ORDER),
           diff=d.by_member(d.size_bound))
def length(ctx, value, arg, at) -> Iterator[Failure]:
    """Length of an array, string or object: {equals, min, max}."""
    if not isinstance(value, (list, str, dict)):
        yield Failure(f"is {json_type(value)}, has no length", arg, value)
        return
    yield from _bounds(arg, len(value), lambda: "length")


@inline_test("length")
def _length_inline(subject, arg, constant):
    """An array, string or object of an exact type whose ``len`` is within the bounds."""
    operators = {"equals": "==", "min": ">=", "max": "<="}
    tests = "".join(f" and len({subject}) {operators[key]} {constant(bound)}"
                    for key, bound in arg.items())
    return f"(type({subject}) in {constant(frozenset((list, str, dict)))}{tests})"


@assertion("count", collective=True, accepts_empty=True,
           argument=Keys({"equals": COUNT, "min": COUNT, "max": COUNT, "where": ASSERTION},
                         at_least_one=("equals", "min", "max"), order=_SIZE_ORDER),
           diff=d.by_member(d.size_bound))
def count(ctx, values: list, arg, at) -> Iterator[Failure]:
    """Number of places the selection matched: {equals, min, max, where: {<kind>: arg}}.

    With ``where``, only the matches that satisfy that one assertion are counted (its
    verdict, as ``not`` takes it).
    """
    def what() -> str:
        return "match count"
    if arg.get("where"):
        (name, inner), = arg["where"].items()
        kind = KINDS[name]
        try:  # the same verdict, bound once for all the values (it reads no context)
            holds = kind.verdict(inner, alone=True)
            values = [value for value in values if holds(value)]
        except Exception:  # it may need the context (a manifest kind under not): as always
            values = [value for value in values if kind.holds_alone(ctx, value, inner)]

        def what() -> str:  # worded for a failure only
            return f"count of matches with {name} {_written(inner)}"
    yield from _bounds(arg, len(values), what)


@inline_test("count")
def _count_inline(subject, arg, constant):
    """The number of matches within the bounds; with ``where``, of the matches its
    assertion holds for by that kind's own verdict, bound once here as ``count`` binds it
    per call (an inner inline test cannot count: it may say "not known"). None for an
    inner kind that reads the context."""
    counted = f"len({subject})"
    if arg.get("where"):
        holds = _inner_verdict(arg["where"])
        if holds is None:
            return None
        counted = f"len(list(filter({constant(holds)}, {subject})))"
    operators = {"equals": "==", "min": ">=", "max": "<="}
    tests = [f"{counted} {operators[key]} {constant(bound)}"
             for key, bound in arg.items() if key in operators]
    return "(" + " and ".join(tests) + ")" if tests else "True"


@assertion("unique", collective=True, argument=BOOLEAN, diff=d.whole(d.switch))
def unique(ctx, values: list, arg, at) -> Iterator[Failure]:
    """The matched values are pairwise distinct (type-strict)."""
    if not arg:
        return
    seen: dict[str, int] = {}
    for index, value in enumerate(values):
        key = canonical_key(value)
        if key in seen:
            yield Failure(f"duplicate of the value at {at[seen[key]]}", "unique", value,
                          at[index])
        else:
            seen[key] = index


@inline_test("unique")
def _unique_inline(subject, arg, constant):
    """Strings and ints alone, by a set: for them Python's equality is the identity of
    ``canonical_key`` (a float is left out: two NaNs are distinct objects but one key)."""
    if type(arg) is not bool:
        return None
    if not arg:
        return "True"
    return (f"(set(map(type, {subject})) <= {constant(frozenset((str, int)))} and "
            f"len(set({subject})) == len({subject}))")


# A generated order_equals list is built only when its size, computed arithmetically first,
# exceeds the number of matched values by at most this much. A count read from the evidence
# ({range: {ref}}) thus never makes the engine build more than the packet itself holds;
# the slack keeps the "missing <value>" detail for a few absent values.
GENERATED_SLACK = 1000


@assertion("order_equals", collective=True, accepts_empty=True, argument=GENERATED_LIST,
           diff=d.whole(d.review("another expected sequence")))
def order_equals(ctx, values: list, arg, at) -> Iterator[Failure]:
    """The matched values, in order, equal a reference list (type-strict).

    The list is literal, a {ref}, or generated: {format: "r{r}.{kind}", product: {r: {range: 2},
    kind: [a, b]}} expands the template over the cartesian product, leftmost key outermost.
    A generated list more than GENERATED_SLACK values longer than the selection is not
    built: the rule fails on the counts alone.
    """
    if isinstance(arg, list):
        expected = arg
    else:
        template, axes = _generated(arg)
        size = math.prod(_axis_size(axis) for _, axis in axes)
        if size > len(values) + GENERATED_SLACK:
            yield Failure(f"{len(values)} values where {size} belong (too many to list)",
                          size, len(values))
            return
        expected = _expand(template, axes)
    if len(values) == len(expected) and all(map(strict_equal, values, expected)):
        return
    yield Failure(_order_problems(values, expected), expected, values)


@inline_test("order_equals")
def _order_equals_inline(subject, arg, constant):
    """The list, or a generated one expanded now (at most 10,000 values: a longer one is
    left to the kind), equals the selection by strict_equal."""
    if isinstance(arg, list):
        expected = arg
    else:
        template, axes = _generated(arg)
        if math.prod(_axis_size(axis) for _, axis in axes) > 10_000:
            return None
        expected = _expand(template, axes)
    return f"{constant(strict_equal)}({subject}, {constant(expected)})"


def _order_problems(actual: list, expected: list) -> str:
    """What differs between two lists, found with hashed canonical keys (linear time)."""
    actual_keys = [canonical_key(v) for v in actual]
    expected_keys = [canonical_key(v) for v in expected]
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


def _generated(arg) -> tuple[Template, list[tuple[str, list | range]]]:
    """The template and axes of a generated list (its argument checked: GENERATED_LIST);
    a range stays a lazy ``range``."""
    axes = [(name, range(values["range"]) if isinstance(values, dict) else values)
            for name, values in (arg.get("product") or {}).items()]
    return _format_template(arg["format"]), axes


def _axis_size(values: list | range) -> int:
    return values.stop if isinstance(values, range) else len(values)  # len() overflows past 2**63


def _expand(template: Template, axes: list[tuple[str, list | range]]) -> list:
    """Each combination of the axes (leftmost outermost) rendered by the format's template,
    a placeholder filled with its axis's value as text (as every template of a spec is)."""
    names = [name for name, _ in axes]
    return [template.render(dict(zip(names, combination)).__getitem__)
            for combination in itertools.product(*(values for _, values in axes))]


@assertion("monotonic", collective=True, argument=Choice(("non_decreasing", "increasing")),
           diff=d.whole(d.monotonic_verdict))
def monotonic(ctx, values: list, arg, at) -> Iterator[Failure]:
    """The matched numbers, in order, are non_decreasing (or increasing)."""
    strict = arg == "increasing"
    for index, value in enumerate(values):
        if not is_number(value):
            yield Failure(f"is {json_type(value)}, expected a number", "number", value,
                          at[index])
            return
        if index and (value < values[index - 1] or (strict and value == values[index - 1])):
            yield Failure(f"{value} follows {values[index - 1]} at {at[index - 1]}; expected "
                          f"{arg.replace('_', '-')} values", arg, value, at[index])


@inline_test("monotonic")
def _monotonic_inline(subject, arg, constant):
    """Numbers of exact number types, no one below (or, increasing, equal to) the one
    before it: the kind's own comparisons, pairwise (a NaN compares as the kind finds)."""
    import operator
    from flarespec.engine.inline import NUMBER_TYPES

    after = {"non_decreasing": operator.lt, "increasing": operator.le}.get(arg)
    if after is None:
        return None
    return (f"(set(map(type, {subject})) <= {constant(NUMBER_TYPES)} and not "
            f"any(map({constant(after)}, {subject}[1:], {subject})))")


@assertion("keys", argument=ListOf(MEMBER_NAME),
           diff=d.whole(d.review("keys requires exactly this key set: another set is neither "
                                 "wider nor narrower")))
def keys(ctx, value, arg, at) -> Iterator[Failure]:
    """An object whose set of keys is exactly the given list (order irrelevant)."""
    if not isinstance(value, dict):
        yield _not_an_object(value)
        return
    expected = list(arg)
    wanted = {k for k in expected if isinstance(k, str)}  # a set: linear, not len² lookups
    missing = [k for k in expected if not isinstance(k, str) or k not in value]
    extra = [k for k in value if k not in wanted]
    if missing or extra:
        detail = "; ".join(p for p in (missing and f"missing keys {_short_list(missing)}",
                                       extra and f"unexpected keys {_short_list(extra)}") if p)
        yield Failure(detail, sorted(expected, key=str), sorted(value))


@inline_test("keys")
def _keys_inline(subject, arg, constant):
    """An object of the exact type whose key set is the listed names' set."""
    if not isinstance(arg, list) or not all(type(key) is str for key in arg):
        return None
    return f"(type({subject}) is dict and {subject}.keys() == {constant(frozenset(arg))})"


@assertion("includes", argument=MAPPING, diff=d.by_member(d.includes_member))
def includes(ctx, value, arg, at) -> Iterator[Failure]:
    """An object whose named members equal the given values (type-strict); others are free."""
    if not isinstance(value, dict):
        yield _not_an_object(value)
        return
    for key, expected in arg.items():
        if key not in value:
            where = child_location(at, key)
            yield Failure(f"{where} is missing", expected, None, where)
        elif not strict_equal(value[key], expected):
            where = child_location(at, key)
            yield Failure(f"{where} differs from the expected value", expected, value[key], where)


@inline_test("includes", dynamic=True)
def _includes_inline(subject, arg, constant):
    """An object of the exact type holding each member, type-strictly equal (a member's
    value read per binding too: ``equal_source``)."""
    from flarespec.engine.inline import equal_source

    if not isinstance(arg, dict):
        return None
    tests = []
    for key, expected in arg.items():
        member = f"{subject}[{constant(key)}]"
        tests.append(f" and {constant(key)} in {subject} and "
                     f"{equal_source(member, expected, constant)}")
    return f"(type({subject}) is dict{''.join(tests)})"


@assertion("same_as", argument=SAME_AS, diff=d.by_member(d.same_as_member))
def same_as(ctx, value, arg, at) -> Iterator[Failure]:
    """Type-strict deep equality with another value, optionally allowing named extra keys.

    {other: {ref: ...}, allow_extra: {keys: [dotted.key, ...], when: <condition>}}: the listed
    keys may be present in the given value alone, and only while the condition holds.
    """
    other = arg.get("other")
    extra = arg.get("allow_extra") or {}
    keys = extra.get("keys", []) if extra and extra.get("when", True) else []
    if keys and _equal_but_allowed(value, other, keys) or same_json(value, other):
        return
    allowed = {"$." + key for key in keys}
    for kind, location, mine, theirs in differences(value, other):
        if kind == "extra" and location in allowed:
            continue
        where = at + location[1:]
        if kind == "extra":
            yield Failure(f"{where} is present here but not in the other copy", None, mine, where)
        elif kind == "missing":
            yield Failure(f"{where} is missing here but present in the other copy", theirs, None,
                          where)
        else:
            yield Failure(f"{where} differs from the other copy", theirs, mine, where)


@inline_test("same_as")
def _same_as_inline(subject, arg, constant):
    """A static ``other`` (rare: it is mostly a {ref}): strict_equal to it has no
    difference to list, whatever extra keys are allowed; none when an allowed key is no
    Unicode text (a lone surrogate: the kind's member-name match raises on it)."""
    if not isinstance(arg, dict) or "other" not in arg:
        return None
    allowed = (arg.get("allow_extra") or {}).get("keys") or []
    try:
        [key.encode("utf-8") for key in allowed if isinstance(key, str)]
    except UnicodeEncodeError:
        return None
    return f"{constant(strict_equal)}({subject}, {constant(arg['other'])})"


_MEMBER_NAME = re2.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # written "$.name" by differences()


def _equal_but_allowed(value, other, keys: list) -> bool:
    """The common case that makes two copies' texts differ, decided without listing the
    differences: equal once the allowed extras (``a.b``: the member ``b`` of ``a``, where
    both copies' ``a`` are objects and only this one's has ``b``) are set aside: exactly
    the extras the listing would pass over. (strict_equal, not JSON text: a NaN equals
    itself as text, member by member it does not; packed bytes are compared first where
    no float is NaN or infinite.)"""
    if not (keys and isinstance(value, dict) and isinstance(other, dict)):
        return False
    paths = []
    for key in keys:
        parts = key.split(".") if isinstance(key, str) else None
        if not parts or not all(_MEMBER_NAME.fullmatch(part) for part in parts):
            return False  # not written as member names: the listing decides
        paths.append(parts)
    trimmed = value
    for parts in sorted(paths, key=len):
        trimmed = _without_extra(trimmed, other, parts)
    return strict_equal_large(trimmed, other)


def _without_extra(value: dict, other: dict, parts: list[str]) -> dict:
    """``value`` without the member at ``parts`` when it is an extra there (copied along the
    path; ``value`` itself is never changed)."""
    mine, theirs, chain = value, other, []
    for part in parts[:-1]:
        if not (isinstance(mine.get(part), dict) and isinstance(theirs.get(part), dict)):
            return value
        chain.append((mine, part))
        mine, theirs = mine[part], theirs[part]
    last = parts[-1]
    if last not in mine or last in theirs:
        return value
    rebuilt = {key: item for key, item in mine.items() if key != last}
    for parent, part in reversed(chain):
        rebuilt = {**parent, part: rebuilt}
    return rebuilt


@assertion("formula", argument=FORMULA, diff=d.by_member(d.formula_member))
def formula(ctx, value, arg, at) -> Iterator[Failure]:
    """A safe arithmetic formula over the value's fields holds: "a + b == @total"."""
    compiled, refs = arg["compiled"], arg.get("refs") or {}
    from flarespec.engine.formula import EvaluationError

    try:
        result = compiled.evaluate(value, refs, rel_tol=arg.get("rel_tol", 0.0),
                                   abs_tol=arg.get("abs_tol", 0.0))
    except EvaluationError as error:
        yield Failure(f"cannot evaluate {compiled.source!r}: {error}", compiled.source, None)
        return
    if not getattr(result, "ok", bool(result)):
        yield Failure(f"{compiled.source!r} does not hold: {result.shown}", result.expected,
                      result.actual)


@inline_test("formula", dynamic=True)
def _formula_inline(subject, arg, constant):
    """The evaluator's own verdict of a condition (``Formula.holds``, without the results
    and words ``evaluate`` builds for a failure), its @names and tolerances as written or
    as read per binding (an ``inline.Dynamic``); none for a formula that computes a
    number."""
    from flarespec.engine.formula import Formula
    from flarespec.engine.inline import Dynamic, static

    if not isinstance(arg, dict) or not isinstance(arg.get("compiled"), Formula) \
            or not arg["compiled"].is_condition:
        return None
    refs = arg.get("refs") or {}
    if not isinstance(refs, dict):  # the whole mapping read per binding
        return None
    parts = [*refs.values(), *(arg.get(name, 0.0) for name in ("rel_tol", "abs_tol"))]
    if not all(isinstance(part, Dynamic) or static(part) for part in parts):
        return None

    def source(part) -> str:
        return part.source if isinstance(part, Dynamic) else constant(part)
    read = ", ".join(f"{constant(name)}: {source(value)}" for name, value in refs.items())
    tolerances = ", ".join(source(arg.get(name, 0.0)) for name in ("rel_tol", "abs_tol"))
    return f"({constant(arg['compiled'].holds)}({subject}, {{{read}}}, {tolerances}) is True)"


def _negated(name: str, old, new) -> list:
    """``not``'s diff: the inner assertion's changes, each direction flipped."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [(name, d.run_time(old, new) or
                 (d.REVIEW, "changed", f"no comparison is defined for {name}"), old, new)]
    return [(f"{name}.{path}" if path else name,
             (d.FLIPPED.get(cls, cls), f"negated: {what}", reason), before, after)
            for path, (cls, what, reason), before, after in argument_changes(old, new)]


@assertion("not", argument=ASSERTION, diff=_negated)
def not_(ctx, value, arg, at) -> Iterator[Failure]:
    """The inner assertion (one kind) must fail: {not: {starts_with: "x"}}."""
    (name, inner), = arg.items()
    if KINDS[name].holds_alone(ctx, value, inner):
        written = KINDS[name].argument.as_written(inner)
        yield Failure(f"must not satisfy {name} {_written(written)}", {"not": {name: written}},
                      value)


@inline_test("not")
def _not_inline(subject, arg, constant):
    """The inner kind's own verdict, bound once, negated (an inner inline test cannot be
    negated: "false" there means "not known"); none for an inner kind that reads the
    context."""
    holds = _inner_verdict(arg)
    return None if holds is None else f"(not {constant(holds)}({subject}))"


def _inner_verdict(assertion: dict) -> Callable[[Any], bool] | None:
    """The one-value verdict (``Kind.verdict``, ``alone``) of a wrapped assertion (``not``'s
    argument, ``count``'s ``where``), bound once for an inline test; None for a kind that
    reads the context (bound without one, it would raise on every value)."""
    (name, inner), = assertion.items()
    kind = KINDS[name]
    return None if kind.context else kind.verdict(inner, alone=True)


def _each_manifest(check):
    """A manifest kind's function from its check of one manifest object (path -> digest)
    and its location: every selected value that is not an object fails as such."""
    @functools.wraps(check)
    def function(ctx, values: list, arg, at) -> Iterator[Failure]:
        for index, value in enumerate(values):
            if isinstance(value, dict):
                yield from check(ctx, value, arg, at[index])
            else:
                yield Failure(f"is {json_type(value)}, expected an object (path -> digest)",
                              "object", json_type(value), at[index])
    return function


@assertion("manifest_lists_all", collective=True, context=True, argument=DOCUMENT_NAMES,
           diff=d.whole(lambda o, n: d.sets(o, n, more_is_looser=False,
                                            what="required entries")))
@_each_manifest
def manifest_lists_all(ctx, manifest: dict, arg, at: str) -> Iterator[Failure]:
    """An object (path -> digest) has a key for every file of the named documents."""
    for path in sorted(ctx.document_paths(arg) - set(manifest)):
        yield Failure(f"no entry for {path}", path, None, at)


@assertion("manifest_lists_only", collective=True, context=True, argument=DOCUMENT_NAMES,
           diff=d.whole(lambda o, n: d.sets(o, n, more_is_looser=True,
                                            what="allowed entries")))
@_each_manifest
def manifest_lists_only(ctx, manifest: dict, arg, at: str) -> Iterator[Failure]:
    """An object (path -> digest) has no key other than the files of the named documents."""
    paths = ctx.document_paths(arg, complete=True)  # "extra" needs every path
    for key in manifest:
        if key not in paths:
            yield Failure(f"entry {key} names no referenced file", None, key,
                          child_location(at, key))


@assertion("manifest_digests", collective=True, context=True, argument=DOCUMENT_NAMES,
           diff=d.whole(lambda o, n: d.sets(o, n, more_is_looser=False,
                                            what="checked digests")))
@_each_manifest
def manifest_digests(ctx, manifest: dict, arg, at: str) -> Iterator[Failure]:
    """Each entry (path -> SHA-256) of a referenced file equals the digest of the file's bytes."""
    paths = ctx.document_paths(arg)
    for key, declared in manifest.items():
        if key in paths:
            hashed = ctx.digest(key)
            if hashed is not None and declared != hashed:
                # actual = what the packet declares (the value at the location);
                # expected = what the file's bytes hash to. The message says both.
                yield Failure(f"digest of {key} differs from the file's bytes: declared "
                              f"{shown(declared)}, the bytes hash to {shown(hashed)}",
                              hashed, declared, child_location(at, key))
