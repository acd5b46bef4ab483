"""Pass plans: each rule's verdict compiled once into closures over raw values.

A rule runs once per binding, often a million times over a stream. The reporting path
interprets the rule each time: it looks at what kind of reference each argument is, walks
pointer templates by rendering their placeholders to strings, and builds matches with
locations. A plan decides all of that once per rule: a reference becomes a getter
(``x -> list of values``) specialised for its target and selector, an argument a
materializer (``x -> value``), and the rule a function ``x -> True`` when its kind's
verdict (``Kind.holds_for``: the kind's own function, "no first failure") holds for the
selected values.

Two forms, by what ``x`` is:

* a **scope plan** takes the binding's scope, as the reporting path does;
* an **element plan**, for a rule over a leaf iteration, takes an ``Element``: the parent
  scope, the element's index and raw value. The engine then makes no scope and no binding
  for an element that passes, and each document the rule reads is looked up once per
  parent rather than once per element (in the order the elements first ask for them, so
  a document that fails to load is reported exactly where it always was). A rule whose
  references need more than that (a pin, metadata, a template, another iteration's
  binding) has no element plan and uses its scope plan.

A plan only ever says "passes". It returns False, or raises, whenever it is not sure,
and the engine then runs the rule on the reporting path (``Evaluation._apply_once``),
which does everything again the slow way and words the violations. Anything a scope
plan's getter is not specialised for goes through ``Evaluation.values``, the general
resolver.
"""

from __future__ import annotations

from typing import Any, Callable

from flarespec.engine.paths import INDEX
from flarespec.engine.refs import ArgRef, ArgTemplate, Condition, Ref

Getter = Callable[[Any], list]
Plan = Callable[[Any], bool]
_NOT_BUILT = object()


class ArgumentNotSingle(Exception):
    """A single-valued ``{ref}`` argument found no value or several: not known to pass."""


class Ineligible(Exception):
    """This form of plan cannot express the rule (its other form, or the reporting path,
    takes it)."""


class Element:
    """What an element plan sees of one element of a leaf iteration: its parent scope,
    index and value, and the documents read so far under that parent. One per parent,
    updated in place per element (nothing is allocated per element)."""

    __slots__ = ("parent", "index", "value", "_documents", "_document")

    def __init__(self, evaluation, parent: dict):
        self.parent, self.index, self.value = parent, 0, None
        self._documents: dict[str, Any] = {}
        self._document = evaluation.document

    def document(self, name: str) -> Any:
        value = self._documents.get(name, _NOT_BUILT)
        if value is _NOT_BUILT:
            value = self._documents[name] = self._document(name, self.parent).value
        return value


class Planner:
    """Builds and keeps the plans of one evaluation (they close over its documents)."""

    def __init__(self, evaluation):
        self._evaluation = evaluation
        self._scope_refs = _ScopeRefs(evaluation)
        self._plans: dict[tuple, Callable | None] = {}

    def plan(self, rule) -> Plan | None:
        """The rule's scope plan, or None when its kind asks the engine for more than the
        values (``context=True``) or it is a hook."""
        key = ("scope", rule.id)
        if key not in self._plans:
            self._plans[key] = self._built(rule, self._scope_refs)
        return self._plans[key]

    def element_plan(self, rule) -> Plan | None:
        """The element plan of a rule over a leaf iteration, or None when it has none."""
        key = ("element", rule.id)
        if key not in self._plans:
            refs = _ElementRefs(self._evaluation, rule.for_each)
            self._plans[key] = self._built(rule, refs)
        return self._plans[key]

    def condition(self, condition: Condition) -> Callable[[dict], bool] | None:
        """``scope -> bool`` for the engine's ``holds``, or None when the condition's kind
        needs a binding's context (then the engine's general path decides)."""
        key = ("condition", id(condition))  # conditions live as long as the spec
        if key not in self._plans:
            self._plans[key] = None if condition.kind.context else \
                _condition(condition, self._scope_refs)
        return self._plans[key]

    def element(self, parent: dict) -> Element:
        return Element(self._evaluation, parent)

    def _built(self, rule, refs) -> Plan | None:
        if rule.hook is not None or rule.kind.context:
            return None
        try:
            return _rule_plan(rule, refs)
        except Ineligible:
            return None


def _rule_plan(rule, refs) -> Plan:
    when = _condition(rule.when, refs) if rule.when is not None else None
    given = refs.getter(rule.given)
    arg = _materializer(rule.arg, refs)
    empty_passes = rule.optional and not rule.kind.accepts_empty
    needs_some = not rule.kind.accepts_empty
    holds_for = rule.kind.holds_for

    def passes(x) -> bool:
        if when is not None and not when(x):
            return True
        found = given(x)
        if not found and needs_some:
            return empty_passes
        return holds_for(None, found, arg(x))
    return passes


# --------------------------------------------------------------------------- conditions

def _condition(condition: Condition, refs) -> Callable[[Any], bool]:
    """A ``when`` as ``x -> bool``: the kind's verdict over the compiled getters (a
    condition is only true or false: nothing to word); as the engine's ``holds`` when the
    kind needs a binding's context."""
    if condition.kind.context:
        return refs.holds(condition)
    given = refs.getter(condition.given)
    arg = _materializer(condition.arg, refs)
    needs_some = not condition.kind.accepts_empty
    holds_for = condition.kind.holds_for

    def decide(x) -> bool:
        found = given(x)
        if not found and needs_some:
            return False
        return holds_for(None, found, arg(x))
    return decide


# --------------------------------------------------------------------------- arguments

def _materializer(arg, refs) -> Callable[[Any], Any]:
    """``x -> the argument's value``, as ``Evaluation.materialize`` gives it."""
    if refs.is_static(arg):
        return lambda x: arg
    if isinstance(arg, ArgRef):
        return _ref_argument(arg, refs)
    if isinstance(arg, Condition):
        return refs.holds(arg)
    if isinstance(arg, ArgTemplate):
        return refs.template(arg.template)
    if isinstance(arg, dict):
        members = [(key, _materializer(value, refs)) for key, value in arg.items()]
        return lambda x: {key: member(x) for key, member in members}
    parts = [_materializer(value, refs) for value in arg]  # a list
    return lambda x: [part(x) for part in parts]


def _ref_argument(arg: ArgRef, refs) -> Callable[[Any], Any]:
    get = refs.getter(arg.ref)
    if arg.all:
        return get
    has_default, default = arg.has_default, arg.default

    def single(x):
        found = get(x)
        if len(found) == 1:
            return found[0]
        if not found and has_default:
            return default
        raise ArgumentNotSingle(arg.ref.source)
    return single


# --------------------------------------------------------------------------- references

class _ScopeRefs:
    """References compiled for a scope plan (``x`` is the binding's scope)."""

    def __init__(self, evaluation):
        self._evaluation = evaluation
        self._iterations = set(evaluation.spec.iterations)
        self.is_static = evaluation._is_static

    def holds(self, condition: Condition) -> Callable[[dict], bool]:
        holds = self._evaluation.holds
        return lambda scope: holds(condition, scope)

    def template(self, template) -> Callable[[dict], str]:
        filler = self._evaluation._filler
        return lambda scope: template.render(filler(scope))

    def getter(self, ref: Ref) -> Getter:
        """``scope -> the values ref selects``, specialised for its target and selector."""
        general = self._evaluation.values
        if ref.pinned or ref.metadata or ref.pointer is not None and not _plain(ref):
            return lambda scope: general(ref, scope)
        select = _selector(ref, lambda name: lambda scope: scope[name].index)
        target = ref.target
        if target == "constants":
            constants = self._evaluation.spec.constants
            return lambda scope: select(constants, scope)
        if target in self._iterations:
            def from_binding(scope: dict) -> list:
                binding = scope.get(target)
                if binding is None:
                    return general(ref, scope)
                return select(binding.match.value, scope)
            return from_binding
        document = self._evaluation.document
        return lambda scope: select(document(target, scope).value, scope)


class _ElementRefs:
    """References compiled for an element plan of the leaf iteration ``name`` (``x`` is an
    ``Element``); anything that needs more than the element and its parent is Ineligible."""

    def __init__(self, evaluation, name: str):
        spec = evaluation.spec
        self._name = name
        self._ancestors = set(spec.iterations[name].chain[:-1])
        self._constants = spec.constants
        self._documents = {document: set(chain) for document, chain
                           in evaluation._document_chains.items()}
        self.is_static = evaluation._is_static

    def holds(self, condition: Condition):
        raise Ineligible("a condition whose kind needs a binding's context")

    def template(self, template):
        raise Ineligible("a template argument")

    def getter(self, ref: Ref) -> Getter:
        if ref.metadata == "index" and not ref.pinned:  # {ref: "item:@index"}
            index = self._index_of(ref.target)
            return lambda element: [index(element)]
        if ref.pinned or ref.metadata or ref.pointer is not None and not _plain(ref):
            raise Ineligible(ref.source)
        select = _selector(ref, self._index_of)
        target, constants = ref.target, self._constants
        if target == "constants":
            return lambda element: select(constants, element)
        if target == self._name:
            return lambda element: select(element.value, element)
        if target in self._ancestors:
            return lambda element: select(element.parent[target].match.value, element)
        if target in self._documents and self._documents[target] <= self._ancestors:
            return lambda element: select(element.document(target), element)
        raise Ineligible(f"{ref.source} reads beyond the element and its parent")

    def _index_of(self, name: str) -> Callable[[Element], int]:
        if name == self._name:
            return lambda element: element.index
        if name in self._ancestors:
            return lambda element: element.parent[name].index
        raise Ineligible(f"{{{name}@index}} is not bound here")


def _selector(ref: Ref, index_of) -> Callable[[Any, Any], list]:
    """``(value, x) -> the values the ref's selector picks in value``."""
    if ref.pointer is not None:
        return _pointer_walk(ref, index_of)
    values = ref.jsonpath.values
    return lambda value, x: values(value)


def _plain(ref: Ref) -> bool:
    """A pointer whose every segment is a literal key or one ``{name@index}``."""
    return all(segment.filter_value is None and _segment_step(segment) is not None
               for segment in ref.pointer.segments)


def _segment_step(segment) -> tuple | None:
    """("key", text) for a literal segment, ("index", binding name) for ``{name@index}``."""
    template = segment.key
    if template.literal is not None:
        return "key", template.literal
    if template.single is not None:
        name, _, meta = template.single.partition("@")
        if meta == "index" and "." not in name and ":" not in name:
            return "index", name
    return None


def _pointer_walk(ref: Ref, index_of) -> Callable[[Any, Any], list]:
    """A plain pointer as a walk over raw values: literal keys looked up, ``{x@index}``
    taken from the binding as an integer (the reporting path renders it to text and reads
    it back: the same element, and for an object the same member, its decimal text).
    ``index_of(name)`` gives the function that reads that index from ``x``."""
    steps = []
    for kind, text in map(_segment_step, ref.pointer.segments):
        if kind == "index":
            steps.append((index_of(text), None, None))
        else:
            steps.append((None, text, int(text) if INDEX.fullmatch(text) else None))

    def walk(value: Any, x) -> list:
        for index, text, number in steps:
            if index is not None:
                number = index(x)
                text = str(number)
            if isinstance(value, dict):
                if text not in value:
                    return []
                value = value[text]
            elif isinstance(value, list):
                if number is None or not -len(value) <= number < len(value):
                    return []
                value = value[number]
            else:
                return []
        return [value]
    return walk
