"""Pass plans: each rule's verdict compiled once into closures over raw values.

A rule runs once per binding, often a million times over a stream. The reporting path
interprets the rule each time: it builds matches with locations and words every failure.
A plan decides what it can once per rule: a reference becomes its accessor's ``values``
(engine/access.py: the one accessor every caller uses), an argument a materializer
(``x -> value``), and the rule a function ``x -> True`` when its kind's verdict
(``Kind.holds_for``: the kind's own function, "no first failure"; for a static argument
``Kind.verdict``, the same derivation bound once) holds for the selected values.

Two forms, by what ``x`` is:

* a **scope plan** takes the binding's scope, as the reporting path does;
* an **element plan**, for a rule over a leaf iteration, takes an ``Element``: the parent
  scope with the iteration bound to a cursor moved in place, run by one loop per parent
  (``Element.unknown``). The engine then makes no scope and no binding for an element that
  passes, and what the parent fixes (documents, ancestors' values, a pointer's root) is
  read once per parent (``Accessor.element_values``). A rule whose references need more
  than that (a pin, a label, a template, another iteration's binding) has no element plan
  and uses its scope plan.

A plan only ever says "passes". It returns False, or raises, whenever it is not sure,
and the engine then runs the rule on the reporting path (``Evaluation._apply_once``),
which reads the same accessors with locations, asks the same kind function, and words
the violations.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from flarespec.engine.loops import Loop, element_loop
from flarespec.engine.problems import ArgumentNotSingle, Ineligible
from flarespec.engine.refs import ArgRef, ArgTemplate, Condition, Ref

Getter = Callable[[Any], list]
Plan = Callable[[Any], bool]
_NOT_BUILT = object()


class Element(dict):
    """What an element plan sees of one element of a leaf iteration: a scope (iteration
    name -> binding, as the references' accessors read it) made once per parent, whose
    own iteration is bound to a cursor moved from element to element in place (nothing is
    allocated per element)."""

    __slots__ = ("cursor", "held")

    def __init__(self, parent: dict, name: str):
        super().__init__(parent)
        self.cursor = self[name] = _Cursor()
        self.held: dict = {}  # what the accessors read once for this parent (access.py)

    @property
    def index(self) -> int:
        return self.cursor.index

    def move(self, index: int, value: Any) -> None:
        self.cursor.index, self.cursor.value = index, value

    def unknown(self, plan: Plan, values: list) -> Iterator[int]:
        """The positions of the elements (``values``, the parent's) that ``plan`` does not
        know to pass, in order: one loop per parent, the cursor moved in place. A plan that
        raises does not know."""
        cursor = self.cursor
        for index, value in enumerate(values):
            cursor.index, cursor.value = index, value
            try:
                if plan(self) is True:
                    continue
            except Exception:  # not known: the reporting path decides
                pass
            yield index


class _Cursor:
    """The element bound in an ``Element``: a binding's ``match``, ``value``, ``index``
    and ``file`` (the file is not needed to read values: None)."""

    __slots__ = ("index", "value")
    file = None

    def __init__(self):
        self.index, self.value = 0, None

    @property
    def match(self) -> "_Cursor":
        return self


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

    def element_loop(self, rule) -> Loop | None:
        """The element loop (engine/loops.py) of a rule that has an element plan, or None
        when the loop cannot express it (its element plan decides it then)."""
        key = ("loop", rule.id)
        if key not in self._plans:
            refs = _ElementRefs(self._evaluation, rule.for_each)
            self._plans[key] = element_loop(rule, refs)
        return self._plans[key]

    def condition(self, condition: Condition) -> Callable[[dict], bool] | None:
        """``scope -> bool`` for the engine's ``holds``, or None when the condition's kind
        needs a binding's context (then the engine's general path decides)."""
        key = ("condition", id(condition))  # conditions live as long as the spec
        if key not in self._plans:
            self._plans[key] = None if condition.kind.context else \
                _condition(condition, self._scope_refs)
        return self._plans[key]

    @staticmethod
    def element(parent: dict, name: str) -> Element:
        return Element(parent, name)

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
    empty_passes = rule.optional and not rule.kind.accepts_empty
    needs_some = not rule.kind.accepts_empty
    verdict, arg = _verdict(rule.kind, rule.arg, refs)
    own = refs.own_selector(rule.given) if verdict is not None and when is None else None
    if own is not None:
        def passes_own(x) -> bool:  # passes_static, reading the element's value here
            found = own(x.cursor.value)
            if not found and needs_some:
                return empty_passes
            return verdict(found)
        return passes_own
    if verdict is not None and when is None:
        def passes_static(x) -> bool:  # a static argument: its verdict bound once
            found = given(x)
            if not found and needs_some:
                return empty_passes
            return verdict(found)
        return passes_static
    holds_for = rule.kind.holds_for
    if when is None:
        def passes_materialized(x) -> bool:  # the argument read per binding
            found = given(x)
            if not found and needs_some:
                return empty_passes
            return holds_for(None, found, arg(x))
        return passes_materialized

    def passes(x) -> bool:
        if not when(x):
            return True
        found = given(x)
        if not found and needs_some:
            return empty_passes
        if verdict is not None:
            return verdict(found)
        return holds_for(None, found, arg(x))
    return passes


def _verdict(kind, arg, refs) -> tuple[Callable[[list], bool] | None, Callable | None]:
    """(the kind's verdict over a selection's values bound to a static argument, None) or
    (None, the argument's materializer)."""
    if refs.is_static(arg):
        return kind.verdict(arg), None
    return None, _materializer(arg, refs)


# --------------------------------------------------------------------------- conditions

def _condition(condition: Condition, refs) -> Callable[[Any], bool]:
    """A ``when`` as ``x -> bool``: the kind's verdict over the compiled getters (a
    condition is only true or false: nothing to word); as the engine's ``holds`` when the
    kind needs a binding's context."""
    if condition.kind.context:
        return refs.holds(condition)
    given = refs.getter(condition.given)
    needs_some = not condition.kind.accepts_empty
    verdict, arg = _verdict(condition.kind, condition.arg, refs)
    if verdict is not None:
        def decide_static(x) -> bool:
            found = given(x)
            if not found and needs_some:
                return False
            return verdict(found)
        return decide_static
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

        def mapping(x) -> dict:  # a loop, not a comprehension: one frame per argument
            built = {}
            for key, member in members:
                built[key] = member(x)
            return built
        return mapping
    parts = [_materializer(value, refs) for value in arg]  # a list
    return lambda x: [part(x) for part in parts]


def _ref_argument(arg: ArgRef, refs) -> Callable[[Any], Any]:
    get = refs.getter(arg.ref)
    if arg.all:
        return get
    has_default, default = arg.has_default, arg.default
    own = refs.own_selector(arg.ref)

    def single(x):  # reading the element's own value from the cursor here when it can
        found = get(x) if own is None else own(x.cursor.value)
        if len(found) == 1:
            return found[0]
        if not found and has_default:
            return default
        raise ArgumentNotSingle(arg.ref.source)
    return single


# --------------------------------------------------------------------------- references

class _ScopeRefs:
    """References for a scope plan (``x`` is the binding's scope): each reference's one
    accessor (engine/access.py)."""

    def __init__(self, evaluation):
        self._evaluation = evaluation
        self.is_static = evaluation.is_static

    def holds(self, condition: Condition) -> Callable[[dict], bool]:
        holds = self._evaluation.holds
        return lambda scope: holds(condition, scope)

    def template(self, template) -> Callable[[dict], str]:
        filler = self._evaluation.filler
        return lambda scope: template.render(filler(scope))

    def getter(self, ref: Ref) -> Getter:
        return self._evaluation.accessor(ref).values

    def own_selector(self, ref: Ref) -> Callable[[Any], list] | None:
        """``value -> values`` of a reference that reads only the element's own value (an
        element plan's), else None."""
        return None


class _ElementRefs(_ScopeRefs):
    """References for an element plan of the leaf iteration ``name`` (``x`` is an
    ``Element``): the same accessors, for a reference that reads only the element, its
    ancestors, the constants and documents that depend on nothing deeper; anything else
    (a pin, a label, another iteration's binding, a condition or a template that would
    need a full binding) is Ineligible and the rule takes its scope plan."""

    def __init__(self, evaluation, name: str):
        super().__init__(evaluation)
        spec = evaluation.spec
        self._name = name
        self._bound = set(spec.iterations[name].chain)  # the element's and its ancestors'
        self._documents = {document: set(chain) for document, chain
                           in evaluation.document_chains.items()}

    def holds(self, condition: Condition):
        raise Ineligible("a condition whose kind needs a binding's context")

    def template(self, template):
        raise Ineligible("a template argument")

    def getter(self, ref: Ref) -> Getter:
        if ref.pinned or ref.metadata not in (None, "index"):
            raise Ineligible(ref.source)
        target = ref.target
        if not (target == "constants" or target in self._bound or
                target in self._documents and self._documents[target] <= self._bound):
            raise Ineligible(f"{ref.source} reads beyond the element and its parent")
        for placeholder in ref.placeholders:
            if placeholder.reference or placeholder.meta not in (None, "index") or \
                    placeholder.name not in self._bound:
                raise Ineligible(f"{{{placeholder}}} needs more than a bound index or member")
        return self._evaluation.accessor(ref).element_values(self._name)

    def own_selector(self, ref: Ref) -> Callable[[Any], list] | None:
        self.getter(ref)  # Ineligible as the getter is
        return self._evaluation.accessor(ref).own_selector(self._name)

    def own_steps(self, ref: Ref) -> tuple | None:
        """The fixed steps of a reference that reads only the element's own value (an
        element loop reads them inline), else None."""
        self.getter(ref)  # Ineligible as the getter is
        return self._evaluation.accessor(ref).own_steps(self._name)

    def own_index(self, ref: Ref) -> bool:
        """True for the element's own ``@index``."""
        self.getter(ref)
        return ref.metadata == "index" and ref.target == self._name and not ref.pinned
