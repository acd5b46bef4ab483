"""Inline pass tests: a kind's verdict as one Python expression spliced into generated code.

A kind may declare, beside its function, an inline pass test (``@inline_test`` in
engine/kinds.py, ``Kind.inline``): ``(subject, arg, constant) -> source or None``. The
source is one expression over the local variable named ``subject`` that is true only when
the kind's function yields no failure for (subject, arg). It is a fast path, never a
second definition: false, or an exception, means "not known" and the reporting path
(the kind's function) decides. So an inline test may be narrower than the kind (``type(v)
is int and v == 3`` where the kind also takes a subclass), never wider.

An argument read per binding (a ``{ref}`` or ``{template}`` inside it) is not known when
the code is generated. A kind whose inline test can take one says so (``@inline_test(name,
dynamic=True)``): it is then given the argument's *skeleton*, the argument as written with
each part read per binding replaced by a ``Dynamic``, whose ``source`` is the expression of
the generated code that holds the part as read. Its source must be right for every value a
``Dynamic`` may hold (``equal_source`` is: it compares type-strictly at run time), and the
argument as read must still meet the kind's argument schema, as ``Kind.holds_for`` checks
first: ``dynamic_source`` adds that check unless the schema says any read argument of this
skeleton meets it (``Schema.met_once_read``).

Why this module: the generated per-iteration code (the compiler) and the tests need the
same things, written once here: whether an argument is static (no ``{ref}``,
``{template}``, condition or ``Dynamic`` anywhere inside it: only then is it known when the
code is generated), a namespace that names the constants an expression reaches (never
spelt into the source, so no value can change the code's meaning), the expression compiled
into a ``subject -> bool`` predicate, and the source over a skeleton.
"""

from __future__ import annotations

import builtins
from decimal import Decimal
from typing import Any, Callable

from flarespec.engine.refs import ArgRef, ArgTemplate, Condition
from flarespec.engine.values import strict_equal

SUBJECT = "subject"  # the predicate's parameter: the name the expression reads


class Dynamic:
    """A part of an argument read per binding, in the skeleton a dynamic inline test is
    given: ``source`` is the expression of the generated code holding its value as read (a
    local variable: reading it twice costs nothing and changes nothing)."""

    __slots__ = ("source",)

    def __init__(self, source: str):
        self.source = source

    def __repr__(self) -> str:
        return f"Dynamic({self.source!r})"


_READ = (ArgRef, ArgTemplate, Condition, Dynamic)


def static(arg: Any) -> bool:
    """True when ``arg`` holds no value read per binding (``{ref}``, ``{template}``, a
    ``when`` condition, a skeleton's ``Dynamic``) at any depth: only such an argument is
    known when code is generated. Walked with a stack (a spec's argument may nest deep)."""
    return not _parts(arg, _READ)


def skeleton(arg: Any) -> bool:
    """True when ``arg`` is a skeleton: every part read per binding is a ``Dynamic`` (none
    is a ``{ref}``, ``{template}`` or condition still)."""
    return not _parts(arg, (ArgRef, ArgTemplate, Condition))


def _parts(arg: Any, types: tuple) -> bool:
    """True when a value of ``types`` is inside ``arg`` at any depth (with a stack)."""
    stack = [arg]
    while stack:
        item = stack.pop()
        if isinstance(item, types):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class Constants:
    """The objects generated code reaches by name: ``constant(obj)`` gives the name (one
    per distinct object, by identity), ``namespace`` maps every name to its object."""

    def __init__(self, prefix: str = "_k"):
        self.prefix = prefix
        self.namespace: dict[str, Any] = {}
        self._names: dict[int, str] = {}

    def constant(self, obj: Any) -> str:
        name = self._names.get(id(obj))
        if name is None or self.namespace[name] is not obj:
            name = f"{self.prefix}{len(self.namespace)}"
            self.namespace[name] = obj
            self._names[id(obj)] = name
        return name


def inline_source(kind, subject: str, arg: Any, constant: Callable[[Any], str]) -> str | None:
    """The kind's inline pass test for the static ``arg`` over the variable ``subject``, or
    None when there is none: the kind declares no inline test, the argument is not static,
    or it misses the kind's argument schema (the reporting path then words why). With
    ``dynamic_source``, the one way to ask a kind for its inline test."""
    if kind.inline is None or kind.context or not static(arg):
        return None
    if kind.argument_problem(arg) is not None:
        return None
    return kind.inline(subject, arg, constant)


def dynamic_source(kind, subject: str, arg: Any, argument: str,
                   constant: Callable[[Any], str]) -> str | None:
    """The kind's inline pass test over ``subject`` for the skeleton ``arg`` (its parts
    read per binding ``Dynamic``), whose whole value as read is the expression ``argument``;
    None when the kind's inline test takes no such argument. True only when the argument
    as read meets the kind's argument schema (checked here unless the schema says every
    argument read from this skeleton does) and the kind holds for it."""
    if kind.inline is None or not kind.inline_dynamic or kind.context or not skeleton(arg):
        return None
    source = kind.inline(subject, arg, constant)
    if source is None or kind.argument.met_once_read(arg):
        return source
    return f"({constant(kind.argument_problem)}({argument}) is None and {source})"


def predicate(kind, arg: Any, *, inline: Callable | None = None) -> Callable[[Any], bool] | None:
    """``subject -> True`` when the kind's inline pass test for ``arg`` says "holds";
    False when it says anything else or raises ("not known"). None when the kind has no
    inline test for ``arg``. ``inline`` replaces the kind's own (a test's mutant)."""
    constants = Constants()
    if inline is not None:
        if not static(arg) or kind.argument_problem(arg) is not None:
            return None
        source = inline(SUBJECT, arg, constants.constant)
    else:
        source = inline_source(kind, SUBJECT, arg, constants.constant)
    if source is None:
        return None
    code = compile(f"lambda {SUBJECT}: ({source})", f"<inline {kind.name}>", "eval")
    test = eval(code, {"__builtins__": builtins, **constants.namespace})

    def known_to_hold(subject) -> bool:
        try:
            return bool(test(subject))
        except Exception:  # "not known": the reporting path decides
            return False
    known_to_hold.source = source
    return known_to_hold


# --------------------------------------------------------------------------- for the kinds
# Pieces the kinds' inline tests share (engine/kinds.py, ``@inline_test``): each keeps
# JSON's type-strict equality where Python's ``==`` would not (True == 1 == 1.0).

# a scalar of these exact types equals another type-strictly exactly when the types are
# the same object and ``==`` says so (values.strict_equal on two scalars)
SCALAR_TYPES = frozenset((type(None), bool, int, float, Decimal, str))


class _Local:
    """A marker object: the name of its constant names a local that ``equal_source`` reads
    into (``_v_c12``): unique in the generated function (one constant per marker), and the
    same in the same text generated again (constants are numbered in the order asked), so a
    second evaluation's code is the first's (engine/readers.py compiles a text once)."""

    __slots__ = ()


NUMBER_TYPES = frozenset((int, float, Decimal))  # values.is_number, for the exact types
EXACT_TYPES = {"null": (type(None),), "boolean": (bool,), "integer": (int,),
               "number": (int, float, Decimal), "string": (str,), "array": (list,),
               "object": (dict,)}  # a JSON type's Python types, exactly (no subclass)


def never_equal(value) -> bool:
    """A NaN (float or Decimal, quiet or signalling): type-strictly equal to nothing, not
    even itself (``==`` says False; a signalling Decimal NaN cannot even be hashed)."""
    if type(value) is float:
        return value != value
    return type(value) is Decimal and value.is_nan()


def equal_source(subject: str, value: Any, constant: Callable[[Any], str]) -> str:
    """Source true exactly when the expression ``subject`` is type-strictly equal to
    ``value`` (values.strict_equal): a static scalar by its exact type and ``==`` (None and
    a boolean by identity), a static container by strict_equal itself; a ``Dynamic`` by
    what strict_equal does first for a scalar subject (its exact type, then ``==``), any
    other subject by strict_equal. ``subject`` is evaluated up to three times (a name or a
    member read), against a ``Dynamic`` once, into a fresh local."""
    if isinstance(value, Dynamic):
        read = f"_v{constant(_Local())}"  # set in the condition, which is evaluated first
        return (f"((type({read}) is type({value.source}) and {read} == {value.source}) "
                f"if type({read} := {subject}) in {constant(SCALAR_TYPES)} "
                f"else {constant(strict_equal)}({read}, {value.source}))")
    if value is None or type(value) is bool:
        return f"({subject} is {constant(value)})"
    if never_equal(value):
        return "False"
    if type(value) in SCALAR_TYPES or not isinstance(value, (dict, list)):
        return f"(type({subject}) is {constant(type(value))} and {subject} == {constant(value)})"
    return f"{constant(strict_equal)}({subject}, {constant(value)})"


def equal_to_any_source(subject: str, options: list, constant: Callable[[Any], str]) -> str:
    """Source true exactly when ``subject`` is type-strictly equal to one of ``options``:
    the scalars looked up as (exact type, value) pairs in one set (the type first, so
    ``True``, ``1`` and ``1.0`` stay apart; NaNs left out: they equal nothing), the
    containers compared one by one by strict_equal."""
    scalars, containers = set(), []
    for option in options:
        if never_equal(option):
            continue
        if type(option) in SCALAR_TYPES:
            scalars.add((type(option), option))
        else:
            containers.append(option)
    parts = []
    if scalars:
        types = frozenset(kind for kind, _ in scalars)
        parts.append(f"(type({subject}) in {constant(types)} and "
                     f"(type({subject}), {subject}) in {constant(frozenset(scalars))})")
    if containers:
        parts.append(f"{constant(equal_to_any)}({subject}, {constant(containers)})")
    return "(" + " or ".join(parts) + ")" if parts else "False"


def equal_to_any(value, options: list) -> bool:
    """``value`` is type-strictly equal to one of ``options`` (values.strict_equal)."""
    return any(strict_equal(value, option) for option in options)
