"""Pass plans: each rule's pass-check compiled once into closures over raw values.

A rule runs once per binding, often a million times over a stream. The reporting path
interprets the rule each time: it looks at what kind of reference each argument is, walks
pointer templates by rendering their placeholders to strings, and builds matches with
locations. A plan decides all of that once per rule: a reference becomes a getter
(``scope -> list of values``) specialised for its target and selector, an argument a
materializer (``scope -> value``), and the rule a function ``scope -> True`` when its
kind's pass-check (passes.py) holds for every selected value.

A plan only ever says "passes". It returns False, or raises, whenever it is not sure,
and the engine then runs the rule on the reporting path (``Evaluation._apply_once``),
which does everything again the slow way and words the violations. Anything a getter is
not specialised for (pins, metadata, ``[key=value]`` pointer segments, JSONPaths the fast
walker cannot take) goes through ``Evaluation.values``, the general resolver.
"""

from __future__ import annotations

from typing import Any, Callable

from flarespec.engine.passes import checks
from flarespec.engine.paths import _INDEX, _Placeholder
from flarespec.engine.refs import ArgRef, ArgTemplate, Condition, Ref

Getter = Callable[[dict], list]
Plan = Callable[[dict], bool]


class ArgumentNotSingle(Exception):
    """A single-valued ``{ref}`` argument found no value or several: not known to pass."""


class Planner:
    """Builds and keeps the plans of one evaluation (they close over its documents)."""

    def __init__(self, evaluation):
        self._evaluation = evaluation
        self._iterations = set(evaluation.spec.iterations)
        self._plans: dict[str, Plan | None] = {}

    def plan(self, rule) -> Plan | None:
        """The rule's plan, or None when its kind has no pass-check (or it is a hook)."""
        if rule.id not in self._plans:
            self._plans[rule.id] = self._rule_plan(rule)
        return self._plans[rule.id]

    def _rule_plan(self, rule) -> Plan | None:
        if rule.hook is not None:
            return None
        check, collective = checks(rule.kind.name)
        if check is None:
            return None
        when = self._condition(rule.when) if rule.when is not None else None
        given = self.getter(rule.given)
        arg = self.materializer(rule.arg)
        empty_passes = rule.optional and not rule.kind.accepts_empty
        needs_some = not rule.kind.accepts_empty

        def passes(scope: dict) -> bool:
            if when is not None and not when(scope):
                return True
            found = given(scope)
            if not found and needs_some:
                return empty_passes
            value = arg(scope)
            if collective:
                return check(found, value) is True
            for item in found:
                if check(item, value) is not True:
                    return False
            return True
        return passes

    # ------------------------------------------------------------------ conditions
    def _condition(self, condition: Condition) -> Callable[[dict], bool]:
        """A ``when`` as ``scope -> bool``, by the kind's exact pass-check when it has one
        (a condition is only true or false: nothing to word); else the engine's ``holds``."""
        check, collective = checks(condition.kind.name)
        holds = self._evaluation.holds
        if check is None:
            return lambda scope: holds(condition, scope)
        given = self.getter(condition.given)
        arg = self.materializer(condition.arg)
        needs_some = not condition.kind.accepts_empty

        def decide(scope: dict) -> bool:
            found = given(scope)
            if not found and needs_some:
                return False
            value = arg(scope)
            if collective:
                return check(found, value)
            return all(check(item, value) for item in found)
        return decide

    # ------------------------------------------------------------------ arguments
    def materializer(self, arg) -> Callable[[dict], Any]:
        """``scope -> the argument's value``, as ``Evaluation.materialize`` gives it."""
        if self._is_static(arg):
            return lambda scope: arg
        if isinstance(arg, ArgRef):
            return self._ref_argument(arg)
        if isinstance(arg, Condition):
            holds = self._evaluation.holds
            return lambda scope: holds(arg, scope)
        if isinstance(arg, ArgTemplate):
            filler, template = self._evaluation._filler, arg.template
            return lambda scope: template.render(filler(scope))
        if isinstance(arg, dict):
            members = [(key, self.materializer(value)) for key, value in arg.items()]
            return lambda scope: {key: member(scope) for key, member in members}
        parts = [self.materializer(value) for value in arg]  # a list
        return lambda scope: [part(scope) for part in parts]

    def _is_static(self, arg) -> bool:
        return self._evaluation._is_static(arg)

    def _ref_argument(self, arg: ArgRef) -> Callable[[dict], Any]:
        get = self.getter(arg.ref)
        if arg.all:
            return get
        has_default, default = arg.has_default, arg.default

        def single(scope: dict):
            found = get(scope)
            if len(found) == 1:
                return found[0]
            if not found and has_default:
                return default
            raise ArgumentNotSingle(arg.ref.source)
        return single

    # ------------------------------------------------------------------ references
    def getter(self, ref: Ref) -> Getter:
        """``scope -> the values ref selects``, specialised for its target and selector."""
        general = self._evaluation.values
        if ref.pinned or ref.metadata or ref.pointer is not None and not _plain(ref):
            return lambda scope: general(ref, scope)
        select = _pointer_walk(ref) if ref.pointer is not None else _jsonpath_walk(ref)
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


def _jsonpath_walk(ref: Ref) -> Callable[[Any, dict], list]:
    values = ref.jsonpath.values
    return lambda value, scope: values(value)


def _plain(ref: Ref) -> bool:
    """A pointer whose every segment is a literal key or one ``{name@index}``."""
    return all(segment.filter_value is None and _segment_step(segment) is not None
               for segment in ref.pointer.segments)


def _segment_step(segment) -> tuple | None:
    """("key", text) for a literal segment, ("index", binding name) for ``{name@index}``."""
    template = segment.key
    if template.literal is not None:
        return "key", template.literal
    if len(template.parts) == 1 and isinstance(template.parts[0], _Placeholder):
        name, _, meta = template.single.partition("@")
        if meta == "index" and "." not in name and ":" not in name:
            return "index", name
    return None


def _pointer_walk(ref: Ref) -> Callable[[Any, dict], list]:
    """A plain pointer as a walk over raw values: literal keys looked up, ``{x@index}``
    taken from the binding as an integer (the reporting path renders it to text and reads
    it back: the same element, and for an object the same member, its decimal text)."""
    steps = [_segment_step(segment) for segment in ref.pointer.segments]
    steps = [(kind, text, int(text) if kind == "key" and _INDEX.fullmatch(text) else None)
             for kind, text in steps]

    def walk(value: Any, scope: dict) -> list:
        for kind, text, number in steps:
            if kind == "index":
                number = scope[text].index
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
