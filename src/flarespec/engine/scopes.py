"""Scopes: the bindings rules run over, one per element of an iteration.

One ``Bindings`` per ``Evaluation`` (engine/evaluate.py), which holds it. A scope maps
iteration name -> ``Binding``; the scopes of an iteration are made under each scope of its
parent. Leaf iterations make theirs afresh per rule (never kept); ``pin`` picks a sibling
by position. While an element of the streamed iteration is bound (``enter`` ... ``leave``,
engine/schedule.py), the bindings below it are made under that element alone and kept only
until it is left.

The bindings an iteration makes in one run are bounded (``MAX_BINDINGS``): its elements
are counted once per parent binding (a rule reading them again does not count them again;
parent bindings made again, for a pin or a rule after the streamed iteration, do), and
past the bound the iteration is ``iteration.<name>.too-many-bindings``, reported once, and
its rules run for no further parent: the report fails, so no metric. Iterations over
constants alone are bounded when the spec is compiled (compiler/compile.py).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from flarespec.engine.paths import Match
from flarespec.engine.problems import Unavailable, Unresolvable

# The bindings one iteration may make in one run (docs/security.md): as many as the events
# of the largest SSE stream a document may hold (2^20); 8.6 times the most of the bundled
# spec at 100 repetitions (121,491 elements; one of its documents' size limits stops it
# near 180). Nested iterations multiply: two over 15,000 elements made 225M bindings and
# ran for hours; at the bound a rule takes seconds (2 s in an element loop, 25 s filling a
# template per binding).
MAX_BINDINGS = 1 << 20


class Binding:
    """One element of an iteration. Its label is rendered only when first asked for (by a
    violation, mostly): most bindings pass, and a million rendered labels cost seconds.
    Nothing is allocated per binding for that: it keeps its parent's scope (never its own,
    which holds it: a reference cycle per binding would leave every discarded binding to the
    cyclic garbage collector) and the shared renderer."""

    __slots__ = ("name", "match", "index", "file", "parent", "_label", "_render", "counted")

    def __init__(self, name: str, match: Match, index: int, file: str | None, parent: dict,
                 render):
        self.name, self.match, self.index, self.file = name, match, index, file
        self.parent, self._label, self._render = parent, None, render
        self.counted = 0  # a bit per child iteration whose elements under it were counted

    @property
    def label(self) -> str:
        return self.rendered_label()

    def rendered_label(self) -> str:
        """The label, rendered when first asked for."""
        if self._label is None:
            self._label = ""  # a label template naming its own label sees "", as it always did
            self._label = self._render(self)
        return self._label

    @property
    def value(self) -> Any:
        return self.match.value

    @property
    def location(self) -> str:
        return self.match.location


class Bindings:
    """The iterations' bindings of one evaluation: made, kept (or not: leaf iterations),
    bounded, pinned, and those under the streamed element bound now. It reads references
    and reports through the evaluation's ``References`` and ``Reporter`` (which hold the
    evaluation by a weak proxy: no reference cycle; the bindings it keeps hold it, until
    ``close``)."""

    def __init__(self, evaluation, schedule):
        spec = self.spec = evaluation.spec
        self._reporter, self._references = evaluation.reporter, evaluation.references
        self._schedule = schedule
        self._subtree = schedule.subtree if schedule else frozenset()
        self._within: dict | None = None  # the streamed element bound now, if any
        self._within_scopes: dict[str, list[dict]] = {}
        self._within_groups: dict[str, tuple] = {}
        self._within_siblings: list[tuple] = []  # _siblings keys made under that element
        self._scopes: dict[str, list[dict]] = {}
        self._scope_groups: dict[str, tuple] = {}
        # iterations with no child iteration and no per-binding document: their bindings
        # are made afresh for each rule (``rule_scopes``) and never kept
        self.leaves = set(spec.iterations) - {it.parent for it in spec.iterations.values()} \
            - {document.each for document in spec.documents.values()}
        # (iteration, parent key) already reported -> the violation's group (engine/sink.py)
        self._unresolved: dict[tuple, tuple] = {}
        # iterations whose elements could not be found under some parent (document failed)
        self.incomplete: set[str] = set()
        # the bindings each iteration made (bounded: MAX_BINDINGS), the bit marking a parent
        # binding whose elements of it were counted, and each iteration past the bound ->
        # its violation's group
        self._bindings_made: dict[str, int] = {}
        self._iteration_bits = {name: 1 << bit for bit, name in enumerate(spec.iterations)}
        self._over_bound: dict[str, tuple] = {}
        # the elements of a pinned iteration, per (iteration, ancestor bindings): see pin
        self._siblings: dict[tuple, tuple[tuple, list[dict]]] = {}

    def enter(self, element: dict) -> None:
        """An element of the streamed iteration is bound: the bindings below it are made
        under it alone, until ``leave``."""
        self._within = element

    def leave(self) -> None:
        """The streamed element is done: what was made under it is dropped (pinned
        elements under it are made anew under the next)."""
        self._within = None
        self._within_scopes.clear()
        self._within_groups.clear()
        for key in self._within_siblings:
            self._siblings.pop(key, None)
        self._within_siblings.clear()

    def close(self) -> None:
        """The run is over: bindings refer back to the evaluation, free them now."""
        self._scopes.clear()
        self._siblings.clear()

    def scopes(self, name: str, *, everywhere: bool = False) -> list[dict]:
        """The iteration's bindings: every one, or (while an element of the streamed
        iteration is bound, engine/schedule.py, and unless ``everywhere``) those under
        that element. Made once (per element, below the streamed iteration); a cache hit
        replays what making them touched (engine/sink.py)."""
        within = self._within
        if within is not None and not everywhere and name in self._subtree:
            if name == self._schedule.stream:
                return [within]
            cache, groups = self._within_scopes, self._within_groups
        else:
            cache, groups = self._scopes, self._scope_groups
        cached = cache.get(name)
        if cached is not None:
            if groups.get(name):
                self._reporter.sink.touch(groups[name])
            return cached
        iteration = self.spec.iterations[name]
        recording = self._reporter.sink.recording()
        try:
            parents = self.scopes(iteration.parent, everywhere=everywhere) \
                if iteration.parent else [{}]
            cached = []
            for parent in parents:
                cached.extend(self._children(iteration, parent))
        finally:
            groups[name] = self._reporter.sink.recorded(recording)
        cache[name] = cached
        return cached

    def rule_scopes(self, name: str) -> Iterable[dict]:
        """The bindings a rule runs over. Those of a leaf iteration (no child iteration, no
        per-binding document) are made afresh for each rule and never kept: a stream of a
        million events would otherwise hold a million scopes per such iteration."""
        if name not in self.leaves:
            return self.scopes(name)
        iteration = self.spec.iterations[name]
        parents = self.scopes(iteration.parent) if iteration.parent else [{}]
        return (scope for parent in parents for scope in self._each_child(iteration, parent))

    def _children(self, iteration, parent: dict) -> list[dict]:
        return list(self._each_child(iteration, parent))

    def _each_child(self, iteration, parent: dict) -> Iterator[dict]:
        found = self.elements(iteration, parent)
        if found is None:
            return
        matches, file = found
        for index, match in enumerate(matches):
            yield self.child(iteration, parent, index, match, file)

    def child(self, iteration, parent: dict, index: int, match: Match, file) -> dict:
        scope = dict(parent)
        scope[iteration.name] = Binding(iteration.name, match, index, file, parent,
                                        self._render_label)
        return scope

    def elements(self, iteration, parent: dict, select=None):
        """The (matches, file) an iteration runs over under ``parent`` (or, with ``select =
        references.values``, their values alone), or None when they cannot be found (reported
        once, however often it is iterated)."""
        try:
            found = (select or self._references.resolve)(iteration.over, parent)
            made = self._made(iteration, parent, len(found if select else found[0]))
            if made > MAX_BINDINGS:
                self._too_many_bindings(iteration, parent, made)
                return None
            return found
        except Unavailable:
            self.incomplete.add(iteration.name)
            return None
        except Unresolvable as problem:
            self.incomplete.add(iteration.name)
            reported = (iteration.name, binding_key(parent))
            groups = self._unresolved.get(reported)
            if groups is not None:  # reported once: where it was first needed
                self._reporter.sink.touch(groups)
                return None
            group = self._reporter.sink.open_group()
            try:
                ref_text = self._reporter.shown_ref(iteration.over, parent)
                self._reporter.violation(f"iteration.{iteration.name}.unresolved", "error",
                                        f"cannot iterate {iteration.name} over {ref_text}: "
                                        f"{problem}", None, ref_text, scope=parent)
            finally:
                group = self._reporter.sink.close_group(group)
            self._unresolved[reported] = (group,) if group else ()
            return None

    def _made(self, iteration, parent: dict, count: int) -> int:
        """The bindings ``iteration`` has made in this run, the ``count`` elements it has
        under ``parent`` included unless counted already (marked on the parent binding; an
        iteration without a parent counts once)."""
        made, name = self._bindings_made, iteration.name
        binding = parent.get(iteration.parent) if iteration.parent else None
        if binding is None:
            if name not in made:
                made[name] = count
            return made[name]
        bit = self._iteration_bits[name]
        if not binding.counted & bit:
            binding.counted |= bit
            made[name] = made.get(name, 0) + count
        return made[name]

    def _too_many_bindings(self, iteration, parent: dict, made: int) -> None:
        """``iteration.<name>.too-many-bindings``, once per run (where it was first needed);
        the iteration then runs its rules for no further parent."""
        self.incomplete.add(iteration.name)
        groups = self._over_bound.get(iteration.name)
        if groups is not None:
            self._reporter.sink.touch(groups)
            return
        group = self._reporter.sink.open_group()
        try:
            ref_text = self._reporter.shown_ref(iteration.over, parent)
            self._reporter.violation(f"iteration.{iteration.name}.too-many-bindings", "error",
                                    f"iteration {iteration.name} over {ref_text} makes more than "
                                    f"{MAX_BINDINGS:,} bindings in one run (the engine's bound); "
                                    f"its rules are not run for the rest", None, ref_text,
                                    scope=parent, expected=f"at most {MAX_BINDINGS:,} bindings",
                                    actual=f"{made:,} so far")
        finally:
            group = self._reporter.sink.close_group(group)
        self._over_bound[iteration.name] = (group,) if group else ()

    def _render_label(self, binding: Binding) -> str:
        template = self.spec.iterations[binding.name].label
        if template is not None:
            try:
                return str(template.render(self._references.filler({**binding.parent,
                                                          binding.name: binding})))
            except (KeyError, Unresolvable, Unavailable):  # unfillable: the default label
                pass
        return self._default_label(binding.match)

    @staticmethod
    def _default_label(match: Match) -> str:
        value = match.value
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            return value["id"]
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            return value["name"]
        return match.location

    def pin(self, scope: dict, pinned: dict) -> dict:
        """The scope with some iterations pinned to one element: ``at: {phase: 1}`` picks by
        position, ``at: {group: previous}`` (or ``next``) the sibling of the bound element."""
        for name, index in pinned.items():
            iteration = self.spec.iterations[name]
            ancestors = iteration.chain[:-1]
            if any(ancestor not in scope for ancestor in ancestors):
                raise Unresolvable(f"{name} cannot be pinned here: its parent is not bound")
            siblings = self._siblings_of(iteration, {a: scope[a] for a in ancestors})
            if index in ("previous", "next"):
                if name not in scope:
                    raise Unresolvable(f"{name} is not bound, so it has no {index} element")
                index = scope[name].index + (1 if index == "next" else -1)
            if not (isinstance(index, int) and 0 <= index < len(siblings)):
                raise Unresolvable(f"{name} has no element {index!r} here "
                                   f"({len(siblings)} elements)")
            # keep unrelated bindings; drop the pinned iteration's old descendants
            kept = {key: binding for key, binding in scope.items()
                    if name not in self.spec.iterations[key].chain}
            scope = {**kept, **siblings[index]}
        return scope

    def _siblings_of(self, iteration, parent: dict) -> list[dict]:
        """The elements of ``iteration`` under ``parent``, made once per parent: a rule
        pinned to ``previous`` asks for them once per element, which would otherwise
        rebuild the list each time (quadratic). Keyed by the parent bindings' identity;
        the entry keeps them alive so an id is never reused while cached."""
        bindings = tuple(parent.values())
        key = (iteration.name, *map(id, bindings))
        cached = self._siblings.get(key)
        if cached is None:
            recording = self._reporter.sink.recording()
            try:
                children = self._children(iteration, parent)
            finally:
                groups = self._reporter.sink.recorded(recording)
            cached = self._siblings[key] = (bindings, children, groups)
            if self._within is not None and iteration.name in self._subtree:
                self._within_siblings.append(key)
        elif cached[2]:
            self._reporter.sink.touch(cached[2])
        return cached[1]


def binding_key(scope: dict) -> tuple:
    """A binding's position: the indices of its iterations, outermost first."""
    return tuple(binding.index for binding in scope.values())


def scope_label(scope: dict) -> str | None:
    """A scope's label: its bindings' labels, outermost first (None for no binding)."""
    if not scope:
        return None
    return " / ".join(binding.label for binding in scope.values())
