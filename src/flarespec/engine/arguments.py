"""Arguments: references read through their accessors, placeholders filled, arguments materialized.

One ``References`` per ``Evaluation`` (engine/evaluate.py). Every reference is read through its one
``Accessor`` (engine/access.py); a placeholder (``{item.id}``, ``{doc:$.x}``) is filled from
the scope; an argument's ``{ref}``, ``{template}`` and conditions are materialized per
binding, a static argument once.
"""

from __future__ import annotations

import weakref
from functools import lru_cache

from flarespec.engine.access import Accessor
from flarespec.engine.paths import Match
from flarespec.engine.problems import ArgumentUnresolved, Unavailable, Unresolvable
from flarespec.engine.refs import ArgRef, ArgTemplate, Condition, Ref, compile_ref


@lru_cache(maxsize=None)
def placeholder_ref(text: str) -> Ref:
    """The reference a reference placeholder ``{target:selector}`` reads (its text, as
    ``Placeholder.text`` holds it), compiled once per text for every reader: the run-time
    filler, the fixture writer. The compiler has checked it where it stands."""
    return compile_ref(text)


class References:
    """The references and arguments of one evaluation: each reference's one accessor
    (engine/access.py), the values and matches it selects per binding, placeholders filled,
    arguments read. It reads conditions and bindings through the evaluation, which holds it
    (a weak proxy back: no reference cycle)."""

    def __init__(self, evaluation):
        self._evaluation = weakref.proxy(evaluation)
        self._accessors: dict[int, Accessor] = {}
        self._static: dict[int, bool] = {}

    def close(self) -> None:
        """The run is over: the accessors refer back to the evaluation, free them now."""
        self._accessors.clear()

    def accessor(self, ref: Ref) -> Accessor:
        """The reference's one accessor for this evaluation (engine/access.py), compiled
        when first asked for. Keyed by identity: references live as long as the spec."""
        accessor = self._accessors.get(id(ref))
        if accessor is None:
            accessor = self._accessors[id(ref)] = Accessor(self._evaluation, ref)
        return accessor

    def resolve(self, ref: Ref, scope: dict) -> tuple[list[Match], str | None]:
        return self.accessor(ref).matches(scope)

    def values(self, ref: Ref, scope: dict) -> list:
        """The values ``resolve`` would select, without matches or locations (what a
        passing check and an argument need)."""
        return self.accessor(ref).values(scope)

    def file_of(self, ref: Ref, scope: dict) -> str | None:
        try:
            return self.resolve(ref, scope)[1]
        except Unavailable:
            return None

    def filler(self, scope: dict):
        """``placeholder -> its value here`` (a parsed placeholder, engine/placeholders.py)."""
        def fill(placeholder):
            if placeholder.reference:
                matches, _ = self.resolve(placeholder_ref(placeholder.text), scope)
                if len(matches) != 1:
                    raise Unresolvable(f"{{{placeholder}}} matched {len(matches)} places, "
                                       f"expected exactly one")
                return matches[0].value
            return self.binding_value(placeholder, scope)
        return fill

    @staticmethod
    def binding_value(placeholder, scope: dict):
        """A binding placeholder's value: what ``Placeholder.read`` reads of the bound
        element (its index, label or member: the label rendered only when read; KeyError
        when ``name`` is not bound here)."""
        binding = scope.get(placeholder.name)
        if binding is None:
            raise KeyError(placeholder.text)
        found, value = placeholder.read(binding.value, binding.index, binding.rendered_label)
        if not found:
            raise Unresolvable(f"{{{placeholder}}} has no value here")
        return value

    def materialize(self, arg, scope: dict):
        if self.is_static(arg):
            return arg
        if isinstance(arg, ArgRef):
            found = self.values(arg.ref, scope)
            if arg.all:
                return found
            if len(found) == 1:
                return found[0]
            if not found and arg.has_default:
                return arg.default
            raise ArgumentUnresolved(arg.ref, len(found))
        if isinstance(arg, Condition):
            return self._evaluation.holds(arg, scope)
        if isinstance(arg, ArgTemplate):
            return arg.template.render(self.filler(scope))
        if isinstance(arg, dict):
            return {key: self.materialize(value, scope) for key, value in arg.items()}
        if isinstance(arg, list):
            return [self.materialize(value, scope) for value in arg]
        return arg

    def is_static(self, arg) -> bool:
        known = self._static.get(id(arg))
        if known is None:
            if isinstance(arg, (ArgRef, ArgTemplate, Condition)):
                known = False
            elif isinstance(arg, dict):
                known = all(self.is_static(v) for v in arg.values())
            elif isinstance(arg, list):
                known = all(self.is_static(v) for v in arg)
            else:
                known = True
            if isinstance(arg, (dict, list)):
                self._static[id(arg)] = known
        return known
