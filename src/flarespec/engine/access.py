"""Access: one compiled accessor per reference, used by every caller.

A reference (``engine/refs.py``) names a target (the spec's constants, an iteration's
bound element, a document, or their metadata) and a selector (a JSONPath or a pointer
template). Its ``Accessor`` decides once, for one evaluation, how to reach the target: a
*root* function ``scope -> (value, base, file)`` chosen by the kind of target. Then:

* ``values(scope)``: the selected values alone (a passing check, an argument, a
  condition, an iteration's elements: no location is built);
* ``matches(scope)``: the selected places with their locations, and the file they lie in
  (the reporting path, iterations, hooks).

Both start from the same root and walk the one selector (``CompiledJsonPath.values/find``
or ``PointerTemplate.values/find``, which share their walker). A rule's plan, a condition,
an argument, an iteration and a hook all ask the same accessor (``References.accessor``),
so a reference cannot mean two things depending on who reads it.

A *scope* is a mapping of iteration name -> binding (``scopes.Binding`` or the element
plan's cursor, which has the same ``match``, ``index`` and ``file``).
"""

from __future__ import annotations

from typing import Any, Callable

from flarespec.engine.paths import Match

Root = Callable[[dict], tuple[Any, Any, "str | None"]]
_NOT_HELD = object()


def _held(values: Callable[[dict], list], key) -> Callable[[dict], list]:
    """``values`` read once per parent of an element plan, kept in the element's ``held``
    (not kept when it raises)."""
    def held_values(x) -> list:
        held = x.held
        found = held.get(key)
        if found is None:
            found = held[key] = values(x)
        return found
    return held_values


def _bound_names(pointer) -> frozenset[str] | None:
    """The iterations whose elements a pointer's placeholders read, for a pointer whose
    every placeholder reads a bound element's index or member (``{item@index}``,
    ``{item.name}``, ``{item.a.b}``: no reference, no label); None for any other pointer
    (or none)."""
    if pointer is None or not pointer.dynamic:
        return None
    placeholders = pointer.placeholders
    if any(p.reference or p.meta not in (None, "index") for p in placeholders):
        return None
    return frozenset(p.name for p in placeholders)


class Accessor:
    __slots__ = ("ref", "metadata", "values", "_root", "_evaluation", "_pinned", "_jsonpath",
                 "_pointer", "_bound", "_template")

    def __init__(self, evaluation, ref):
        self.ref = ref
        self.metadata = ref.metadata
        self._evaluation = evaluation
        self._pinned = ref.pinned
        self._jsonpath = ref.jsonpath
        self._pointer = ref.pointer
        self._template = ref.template
        self._root = self._metadata_root() if ref.metadata else self._value_root()
        # a JSONPath template is read by the general path only, per binding; an element
        # plan holds it per parent unless it names the element's own iteration
        self._bound = frozenset(p.name for p in ref.template.placeholders
                                if not p.reference) if ref.template is not None \
            else _bound_names(ref.pointer)
        self.values = self._values()

    # ------------------------------------------------------------------ reading
    def _values(self) -> Callable[[dict], list]:
        """``values(scope)``: the values the reference selects here, in document order.
        The common forms (an unpinned JSONPath, or a pointer whose placeholders are bound
        indices, over a document, a binding or the constants) are one closure each; any
        other goes through the root and the general filler."""
        split = None if self._template is not None else self._split()
        if split is None:
            return self._general()
        root, select = split
        target, plain = self.ref.target, self._plain()
        if target == "constants":
            constants = self._evaluation.spec.constants
            return lambda scope: select(constants, scope)
        if target in self._evaluation.spec.iterations:
            def from_binding(scope: dict) -> list:  # root(scope), inline
                binding = scope.get(target)
                if binding is None:
                    return select(root(scope), scope)
                return select(binding.match.value, scope)
            return from_binding
        document = self._evaluation.documents.document
        if plain is not None:
            return lambda scope: plain(document(target, scope).value)  # root and select, inline
        return lambda scope: select(document(target, scope).value, scope)  # root, inline

    def _plain(self) -> Callable[[Any], list] | None:
        """``value -> the selected values`` when the selection needs nothing of the scope (a
        JSONPath, a pointer without placeholders): ``_selector`` without its scope."""
        if self.metadata or self._template is not None:
            return None
        if self._jsonpath is not None:
            return self._jsonpath.reader()
        if not self._pointer.dynamic:
            return self._pointer.reader()  # its fill is never asked for
        return None

    def _split(self) -> tuple[Callable[[dict], Any], Callable[[Any, dict], list]] | None:
        """A common form as (``scope -> the value selected from``, ``(that value, scope) ->
        the selected values``); None for the others (pinned, metadata, a pointer filled by
        the general filler)."""
        select = None if self.metadata or self._template is not None else self._selector()
        if self._pinned or select is None:
            return None
        root, target = self._root, self.ref.target
        if target == "constants":
            constants = self._evaluation.spec.constants
            return (lambda scope: constants), select
        if target in self._evaluation.spec.iterations:
            def bound_value(scope: dict):
                binding = scope.get(target)
                return root(scope)[0] if binding is None else binding.match.value
            return bound_value, select
        document = self._evaluation.documents.document
        return (lambda scope: document(target, scope).value), select

    def element_values(self, own: str) -> Callable[[dict], list]:
        """``values`` for an element plan of the leaf iteration ``own`` (plans.py: ``x`` is
        its ``Element``, whose ``cursor`` is the element and whose ``held`` is kept for
        one parent). What does not depend on the element (a document, an ancestor's value,
        the constants, a pointer filled by ancestors' indices) is read once per parent, on
        the first element that asks (so documents load when they always did; a read that
        raises is not kept, and raises again for the next element); the element's own value
        is read from the cursor. Only for the forms an element plan admits (unpinned;
        metadata ``index``; placeholders that read bound elements' indices or members)."""
        ref = self.ref
        names = self._bound or frozenset()
        if ref.target != own and own not in names:
            return _held(self.values, self)
        if self.metadata == "index" and ref.target == own:
            return lambda x: [x.cursor.index]
        split = self._split()
        if split is None:
            return self.values
        root, select = split
        if ref.target == own:
            plain = self.own_selector(own)
            if plain is not None:
                return lambda x: plain(x.cursor.value)
            return lambda x: select(x.cursor.value, x)
        key = (self, "root")
        split_at = self._pointer.split_at_index()
        if split_at is not None and split_at[0].name == own and split_at[0].meta == "index":
            # a pointer of literal keys ending in the element's index (a document's
            # /events/{own@index}): the keys walked once per parent, the index per element
            _, prefix, step = split_at

            def from_held_container(x) -> list:
                found = x.held.get(key)
                if found is None:
                    found = x.held[key] = prefix(root(x))
                return step(found[0], x.cursor.index) if found else []
            return from_held_container
        # a pointer filled from the element (by_index) into what the parent fixes: the root
        # and the filler made once per parent (over the bindings it names: the cursor is
        # one of them, moved in place; never over the element, which holds them)
        index_fill, walk = self._index_filler(), self._pointer.reader()
        names = tuple(names)

        def from_held_root(x) -> list:  # e.g. /shelves/{shelf@index}/items/{own@index}
            found = x.held.get(key)
            if found is None:
                found = x.held[key] = (root(x), index_fill({name: x[name] for name in names}))
            return walk(*found)
        return from_held_root

    def own_selector(self, own: str) -> Callable[[Any], list] | None:
        """``value -> the selected values`` when the reference reads the element of the
        leaf iteration ``own`` by a selection that needs nothing else (unpinned, no
        metadata: a JSONPath, or a pointer without placeholders): what ``element_values``
        reads from the cursor's value, for a plan that reads that value itself; else None."""
        if self.ref.target != own or self._pinned:
            return None
        return self._plain()

    def own_steps(self, own: str) -> tuple | None:
        """The fixed steps (engine/readers.py) by which the reference reads the element of
        the leaf iteration ``own`` when ``own_selector`` is that fixed selection's reader
        (a JSONPath of names and indices, a pointer of literal keys); else None."""
        if self.ref.target != own or self._pinned or self.metadata or self._template:
            return None
        if self._jsonpath is not None:
            return self._jsonpath.fixed_steps()
        return self._pointer.fixed_steps()

    def _selector(self) -> Callable[[Any, dict], list] | None:
        """``(value, scope) -> selected values`` for a JSONPath, or a pointer whose every
        placeholder is a bound element's index (``{item@index}``: read straight from the
        binding, as the general filler reads it); None for any other pointer."""
        if self._jsonpath is not None:
            values = self._jsonpath.values
            return lambda value, scope: values(value)
        pointer = self._pointer
        walk = pointer.reader()
        if not pointer.dynamic:
            return lambda value, scope: walk(value)
        if self._bound is None:
            return None
        index_fill = self._index_filler()

        def by_index(value, scope: dict) -> list:
            return walk(value, index_fill(scope))
        return by_index

    # The closures below capture what they read, never the accessor: an accessor holding a
    # function that holds it would be a reference cycle, and everything it reaches (the
    # evaluation, its documents) would wait for the cyclic collector to be freed.

    def _index_filler(self) -> Callable[[dict], Callable[[str], Any]]:
        """``scope -> the filler`` of a pointer whose placeholders read bound elements: an
        index straight from the binding, a member as the general filler reads it
        (``References.binding_value``), each when the walk asks for it."""
        if all(placeholder.meta == "index" for placeholder in self._pointer.placeholders):
            return lambda scope: lambda placeholder: scope[placeholder.name].index
        binding_value = self._evaluation.references.binding_value
        return lambda scope: lambda placeholder: binding_value(placeholder, scope)

    def _general(self) -> Callable[[dict], list]:
        """``values`` of the other forms: through the root and the general filler."""
        evaluation, pinned, root = self._evaluation, self._pinned, self._root
        metadata, jsonpath, template = self.metadata, self._jsonpath, self._template
        walk = self._pointer.reader() if jsonpath is None and template is None \
            and not metadata else None

        def general_values(scope: dict) -> list:
            if pinned:
                scope = evaluation.bindings.pin(scope, pinned)
            value, _, _ = root(scope)
            if metadata:
                return [value]
            if jsonpath is not None:
                return jsonpath.values(value)
            if template is not None:
                return template.compiled(evaluation.references.filler(scope)).values(value)
            return walk(value, evaluation.references.filler(scope))
        return general_values

    def matches(self, scope: dict) -> tuple[list[Match], str | None]:
        """The places the reference selects here, and the file they lie in (None for
        constants)."""
        if self._pinned:
            scope = self._evaluation.bindings.pin(scope, self._pinned)
        value, base, file = self._root(scope)
        if self.metadata:
            return [Match(value, base)], file
        if self._jsonpath is not None:
            return self._jsonpath.find(value, base), file
        if self._template is not None:
            path = self._template.compiled(self._evaluation.references.filler(scope))
            return path.find(value, base), file
        return self._pointer.find(value, self._evaluation.references.filler(scope), base), file

    # ------------------------------------------------------------------ roots
    def _value_root(self) -> Root:
        evaluation, target = self._evaluation, self.ref.target
        if target == "constants":
            constants = evaluation.spec.constants
            return lambda scope: (constants, "$", None)
        document = evaluation.documents.document
        if target in evaluation.spec.iterations:
            def from_binding(scope: dict):
                binding = scope.get(target)
                if binding is None:  # not bound here: as a document name, which it is not
                    loaded = document(target, scope)
                    return loaded.value, "$", loaded.path
                match = binding.match
                return match.value, match, binding.file
            return from_binding

        def from_document(scope: dict):  # base: "$", a `from` document's string member's
            loaded = document(target, scope)
            return loaded.value, loaded.base, loaded.path
        return from_document

    def _metadata_root(self) -> Root:
        """(the metadata value, ``@name``, file): a binding's ``index``/``label``, a
        document's ``path``/``sha256``/``size``."""
        evaluation, target, name = self._evaluation, self.ref.target, self.ref.metadata
        base = "@" + name

        def metadata(scope: dict):
            binding = scope.get(target)
            if binding is not None:
                return getattr(binding, name), base, binding.file
            loaded = evaluation.documents.document(target, scope)
            if name == "path":
                return loaded.path, base, loaded.path
            if name == "sha256":
                return evaluation.documents.digest(loaded.path), base, loaded.path
            return evaluation.documents.files.size(loaded.path), base, loaded.path
        return metadata
