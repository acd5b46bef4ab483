"""The vocabulary of a kind's argument schema: declared once, as data, beside the kind.

A kind (engine/kinds.py) declares what its argument must be with the nodes of this module
(``argument=`` of ``@assertion``). Everything that needs the argument's schema derives it
from that one declaration, so it cannot be written twice or disagree:

* the load-time check and the check of an argument read per binding (``problem``: the
  words of ``spec.kind-argument`` and of a rule's ``cannot evaluate: ...``);
* the editor's JSON Schema (``json_schema``, through the ``JsonForms`` authoring/schema.py
  passes in: how a spec writes a value, a ``${constant}``, a ``{literal}``, a ``{ref}``);
* which parts of the argument the compiler compiles rather than walks (an ``Assertion``
  member is one inner assertion, a ``Formula`` a formula: compiler/compile.py asks the
  node, never the kind's name), and the assertions an argument wraps (``inner``: their own
  kinds check them once read).

A node is a small frozen object. The common ones are declarative (``ArgumentValue`` leaves,
``ListOf``, ``Keys``, ``Choice`` …); a check that is no composition of them is one more
``Schema`` subclass, its ``problem`` and its ``json_schema`` written side by side.

A problem is ``str`` (what the argument misses: "wants …, got …") or None. ``documents`` is
the set of the spec's document names at load, or ``READ`` for an argument read for a
binding (every name is one then; ``in_spec`` tells a node which it judges): what only the
spec's own argument is refused for (it leaves nothing that can hold: ``one_of: []``, ``min``
above ``max``) is the evidence's to fail once read.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol

from flarespec.engine.inline import Dynamic
from flarespec.engine.refs import ArgRef, ArgTemplate
from flarespec.engine.outcome import shown
from flarespec.engine.values import JSON_TYPES, json_type

_SCALARS = (type(None), bool, int, str)


class ArgumentMistyped(ValueError):
    """A kind's argument as read for one binding (through a {ref}) misses the kind's
    argument schema: a violation of the rule, worded as what the kind wants and got."""


class _Read:
    """The document names a check is given for an argument read for a binding: a manifest
    kind's names were checked at load (its argument holds no {ref}), so every name it has
    is one; ``in_spec`` tells a check it judges a value read from the evidence."""

    def __contains__(self, name) -> bool:
        return True


READ = _Read()


def in_spec(documents) -> bool:
    """True when a check judges the spec's own argument (at load), not one read."""
    return documents is not READ


def dynamic(value) -> bool:
    """A value read per binding ({ref} or {template}): accepted as it stands at load, and
    checked once read."""
    return isinstance(value, (ArgRef, ArgTemplate))


def written(arg) -> str:
    """An argument as its spec author wrote it (YAML flow style), for ``not``'s words and
    ``count``'s (a scalar's text is worked out once: ``count``'s ``where: {not: {equals:
    null}}`` words a failure of ``not`` for every null it counts)."""
    if type(arg) in _SCALARS:
        return _written_scalar(type(arg), arg)
    return shown(arg, bare_keys=True)


@functools.lru_cache(maxsize=1024)
def _written_scalar(kind: type, arg) -> str:
    return shown(arg, bare_keys=True)


def got(arg) -> str:
    """What a check got, for its message: the value's JSON type and the value as written
    (``integer 5``, ``string "5"``, ``null``)."""
    return "null" if arg is None else f"{json_type(arg)} {written(arg)}"


class JsonForms(Protocol):
    """How the editor schema spells what a node cannot know (authoring/schema.py): a shared
    definition, and the forms in which a spec writes a value."""

    def ref(self, name: str) -> dict: ...           # {"$ref": "#/definitions/<name>"}
    def value(self, schema: dict) -> dict: ...      # schema, a ${constant} or {literal: ...}
    def dynamic(self, schema: dict) -> dict: ...    # schema, a {ref} or a {template}


class Schema:
    """One node of an argument schema (see the module docstring)."""

    def problem(self, arg, documents) -> str | None:
        """What ``arg`` misses of this node, or None."""
        raise NotImplementedError

    def json_schema(self, forms: JsonForms) -> dict:
        """The JSON Schema of the value itself (its dynamic forms included when accepted)."""
        raise NotImplementedError

    def argument_schema(self, forms: JsonForms) -> dict:
        """The JSON Schema of a kind's whole argument of this node, as a spec writes it."""
        return forms.value(self.json_schema(forms))

    def member_schema(self, forms: JsonForms) -> dict:
        """The JSON Schema of a member (of ``Keys``, an item of ``ListOf``) of this node."""
        return self.json_schema(forms)

    def inner(self, arg) -> Iterator[tuple[str, Any]]:
        """The (kind name, argument) pairs of the assertions ``arg`` wraps."""
        return iter(())

    def nodes(self) -> Iterator[Schema]:
        """This node and the nodes it is made of (the named values the schema defines)."""
        yield self

    def met_once_read(self, skeleton) -> bool:
        """True when every argument read from ``skeleton`` (an argument as written, each
        part read per binding an ``inline.Dynamic``) meets this node, whatever the parts
        read: its check once read can then be left out (engine/inline.py). False unless a
        node knows it (the check then runs)."""
        return False

    def as_written(self, arg):
        """A compiled argument as the spec wrote it, for a failure's words (``not``'s)."""
        return arg


class _Anything(Schema):
    """Any value (``equals``): nothing to check, ``{}`` in the editor."""

    def problem(self, arg, documents) -> None:
        return None

    def met_once_read(self, skeleton) -> bool:
        return True

    def json_schema(self, forms) -> dict:
        return {}

    argument_schema = member_schema = json_schema


ANYTHING = _Anything()


@dataclass(frozen=True, eq=False)
class ArgumentValue(Schema):
    """One value, declared once: ``words`` (what a problem says it wants), ``test`` and its
    JSON Schema. ``dynamic``: a {ref} or {template} is accepted (checked once read).
    ``name``: a shared definition of the editor schema (``argument_<name>``), referenced
    wherever the value is a member."""

    words: str
    test: Callable[[Any], bool]
    schema: dict
    many: str = ""  # the words for several of them (a list's items)
    name: str | None = None
    accepts_dynamic: bool = True
    # ``test`` reads the value's own type alone, never its members: a value whose members
    # are read per binding meets it whenever the value as written does (``met_once_read``)
    shallow: bool = False

    def problem(self, value, documents=None, what: str = "") -> str | None:
        """None when ``value`` is one (or is read per binding: checked once read); ``what``
        says which member or item it is."""
        if (self.accepts_dynamic and dynamic(value)) or self.test(value):
            return None
        return f"{what}{' ' if what else ''}wants {self.words}, got {got(value)}"

    def met_once_read(self, skeleton) -> bool:
        return self.shallow and not isinstance(skeleton, Dynamic) and bool(self.test(skeleton))

    def json_schema(self, forms) -> dict:
        return forms.dynamic(self.schema) if self.accepts_dynamic else self.schema

    def definition(self, forms) -> dict:
        """The shared definition of a named value."""
        return dict(forms.value(self.json_schema(forms)), description=self.words)

    def member_schema(self, forms) -> dict:
        return forms.ref(f"argument_{self.name}") if self.name else self.json_schema(forms)

    def argument_schema(self, forms) -> dict:
        return forms.ref(f"argument_{self.name}") if self.name else \
            forms.value(self.json_schema(forms))


@dataclass(frozen=True, eq=False)
class Choice(Schema):
    """One of a few names: ``monotonic: increasing``."""

    options: tuple

    def problem(self, arg, documents) -> str | None:
        return None if arg in self.options else \
            f"wants one of {', '.join(self.options)}, got {got(arg)}"

    def json_schema(self, forms) -> dict:
        return {"enum": list(self.options)}


@dataclass(frozen=True, eq=False)
class ListOf(Schema):
    """A list (or a {ref} to one), at least one long when ``non_empty``, of ``item``s
    (an ``ArgumentValue``, or anything)."""

    item: ArgumentValue | None = None
    non_empty: bool = False

    def problem(self, arg, documents) -> str | None:
        if dynamic(arg):
            return None
        if not isinstance(arg, list) or self.non_empty and not arg and in_spec(documents):
            wanted = f"{'a non-empty' if self.non_empty else 'a'} list" + \
                (f" of {self.item.many}" if self.item else "")
            return f"wants {wanted}, got {got(arg)}"
        if self.item is not None:
            for index, value in enumerate(arg):
                problem = self.item.problem(value, documents, f"item {index}")
                if problem:
                    return problem
        return None

    def json_schema(self, forms) -> dict:
        out: dict = {"type": "array"}
        if self.non_empty:
            out["minItems"] = 1
        if self.item is not None:
            out["items"] = self.item.member_schema(forms)
        return forms.dynamic(out)

    def nodes(self) -> Iterator[Schema]:
        yield self
        if self.item is not None:
            yield from self.item.nodes()


@dataclass(frozen=True, eq=False)
class Assertion(Schema):
    """One inner assertion, ``{<kind>: <argument>}`` (``not``'s argument, ``count``'s
    ``where``): compiled by the compiler as an assertion of its own and checked by its own
    kind (``inner``), once read too."""

    def problem(self, arg, documents) -> str | None:
        return None if isinstance(arg, dict) and len(arg) == 1 else \
            "wants exactly one inner assertion kind"

    def json_schema(self, forms) -> dict:
        return forms.ref("assertion")

    argument_schema = member_schema = json_schema

    def inner(self, arg) -> Iterator[tuple[str, Any]]:
        if isinstance(arg, dict) and len(arg) == 1:
            yield from arg.items()


ASSERTION = Assertion()


class _Condition(Schema):
    """A condition (``when: {given: ..., <kind>: ...}``): the compiler compiles and checks
    it wherever it is in an argument; nothing is left to check here."""

    def problem(self, arg, documents) -> None:
        return None

    def json_schema(self, forms) -> dict:
        return forms.ref("condition")

    argument_schema = member_schema = json_schema


CONDITION = _Condition()


@dataclass(frozen=True, eq=False)
class Keys(Schema):
    """A mapping of some of the ``members`` (name -> node), at least one of
    ``at_least_one`` (all the members' names when None), every name of ``required``; for
    each ``(low, high, strict)`` of ``order`` that are both there, ``low <= high``
    (``low < high`` when ``strict``), else nothing could hold."""

    members: dict
    at_least_one: tuple | None = None
    required: tuple = ()
    order: tuple = ()
    allowed: tuple = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "allowed", tuple(self.members))
        if self.at_least_one is None:
            object.__setattr__(self, "at_least_one", self.allowed)

    def problem(self, arg, documents) -> str | None:
        if not isinstance(arg, dict):
            return f"wants a mapping with {', '.join(self.allowed)}, got {got(arg)}"
        unknown = sorted(set(arg) - set(self.allowed))
        if unknown:
            return f"unknown argument {', '.join(unknown)}; allowed: {', '.join(self.allowed)}"
        if self.at_least_one and not set(arg) & set(self.at_least_one):
            return f"wants at least one of {', '.join(self.at_least_one)}"
        missing = [name for name in self.required if name not in arg]
        if missing:
            return f"wants {', '.join(repr(name) for name in missing)}"
        for key, member in arg.items():
            problem = self._member_problem(key, member, documents)
            if problem:
                return problem
        return self._order_problem(arg) if in_spec(documents) else None

    def _member_problem(self, key, member, documents) -> str | None:
        """A value's problem says which member wants it (``min wants a number``); a nested
        node's speaks for itself (``unknown argument key; allowed: keys, when``); an inner
        assertion's argument is its own kind's to check (``inner``)."""
        node = self.members[key]
        if isinstance(node, ArgumentValue):
            return node.problem(member, documents, key)
        return node.problem(member, documents)

    def _order_problem(self, arg: dict) -> str | None:
        for low, high, strict in self.order:
            if low in arg and high in arg and not (dynamic(arg[low]) or dynamic(arg[high])):
                if arg[low] > arg[high] or strict and arg[low] == arg[high]:
                    return (f"{low} {written(arg[low])} and {high} {written(arg[high])} leave "
                            f"nothing that can hold")
        return None

    def json_schema(self, forms) -> dict:
        """(``order``, which bounds may be together, is a relation between members: lint's
        alone.)"""
        out: dict = {"type": "object", "additionalProperties": False,
                     "properties": {key: node.member_schema(forms)
                                    for key, node in self.members.items()}}
        if self.required:
            out["required"] = list(self.required)
        elif self.at_least_one:
            out["anyOf"] = [{"required": [key]} for key in self.at_least_one]
        return out

    def inner(self, arg) -> Iterator[tuple[str, Any]]:
        if isinstance(arg, dict):
            for key, node in self.members.items():
                if key in arg:
                    yield from node.inner(arg[key])

    def nodes(self) -> Iterator[Schema]:
        yield self
        for node in self.members.values():
            yield from node.nodes()


@dataclass(frozen=True, eq=False)
class Formula(Schema):
    """A formula (its text, or ``{expr, refs, rel_tol, abs_tol}``): compiled by the compiler
    (engine/formula.py); what is checked here are the tolerances (``math.isclose``'s), each
    when given a finite number >= 0 (not bool, not text), in the spec's form and the
    compiled one alike."""

    TOLERANCES = ("rel_tol", "abs_tol")

    def problem(self, arg, documents) -> str | None:
        if not isinstance(arg, dict):
            return None
        for name in self.TOLERANCES:
            if name not in arg:
                continue
            value = arg[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                return (f"{name} is a tolerance: a finite number >= 0 (e.g. 1.0e-9), "
                        f"got {shown(value)}")
        return None

    def json_schema(self, forms) -> dict:
        tolerance = {"type": "number", "minimum": 0, "description": "a tolerance (math.isclose)"}
        return {"anyOf": [{"type": "string"}, {
            "type": "object", "required": ["expr"], "additionalProperties": False,
            "properties": {"expr": {"type": "string"}, "refs": {"type": "object"},
                           **{name: forms.value(tolerance) for name in self.TOLERANCES}}}]}

    argument_schema = json_schema

    def as_written(self, arg):
        """The formula's text (its compiled form is not what the spec wrote)."""
        return arg["compiled"].source if isinstance(arg, dict) and "compiled" in arg else arg


@dataclass(frozen=True, eq=False)
class JsonTypes(Schema):
    """One or more JSON type names (``type: [integer, "null"]``)."""

    def problem(self, arg, documents) -> str | None:
        names = [arg] if isinstance(arg, str) else arg
        if not isinstance(names, list) or not names or any(n not in JSON_TYPES for n in names):
            return f"wants one or more of {', '.join(JSON_TYPES)}, got {got(arg)}"
        return None

    def json_schema(self, forms) -> dict:
        types = {"enum": list(JSON_TYPES)}
        return {"anyOf": [types, {"type": "array", "minItems": 1, "items": types}]}


@dataclass(frozen=True, eq=False)
class DocumentNames(Schema):
    """A non-empty list of names of the spec's documents (the manifest kinds)."""

    def problem(self, arg, documents) -> str | None:
        if not isinstance(arg, list) or not arg:
            return f"wants a list of document names, got {got(arg)}"
        unknown = [name for name in arg if name not in documents]
        return f"unknown documents {', '.join(map(str, unknown))}" if unknown else None

    def json_schema(self, forms) -> dict:
        return {"type": "array", "minItems": 1, "items": {"type": "string"},
                "description": "names of documents of the spec"}


def named_values(schemas) -> dict[str, ArgumentValue]:
    """The named values the given argument schemas use, by name (the editor schema's
    ``argument_<name>`` definitions); two values of one name are a mistake."""
    found: dict[str, ArgumentValue] = {}
    for schema in schemas:
        for node in schema.nodes():
            if isinstance(node, ArgumentValue) and node.name:
                if found.setdefault(node.name, node) is not node:
                    raise ValueError(f"two argument values are named {node.name!r}")
    return found
