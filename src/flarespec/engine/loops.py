"""Element loops: a rule's element plan compiled into one generated function.

An element plan (plans.py) decides one element of a leaf iteration per call: the engine's
loop moves the cursor, calls the plan, the plan calls a getter per reference, a getter
calls its reader. An *element loop* is the same decision for all the elements under one
parent as one generated function ``loop(element, values)`` that yields the positions of
the elements not known to pass, in order, exactly as ``Element.unknown(plan, values)``
does. What it changes is only how values are reached:

* a reference to the element's own value by a fixed selection (engine/readers.py) is read
  inline, by the readers' one ``step_lines``, and a prefix several references share (the
  ``/json/choices/0`` of ``.../token_ids``, ``.../text`` and ``.../finish_reason``) is read
  once per element;
* the element's ``@index`` is the loop's index;
* any other reference is its getter, called as the plan calls it (the cursor is moved
  first, and the getters are called in the plan's order, so a document loads when it did).

The verdict is the plan's: the kind's ``verdict`` bound to a static argument, or
``holds_for`` with the argument built in the materializer's order; an empty selection is
decided as the plan decides it; anything that raises is "not known". A rule the loop
cannot express (a ``when``, a hook, a kind that needs a binding's context, an argument
that is a condition or a template, more than MAX_GENERATED_STEPS literal steps to read)
has none and keeps its plan. Names, constants and callables reach the generated code only
as names in its namespace, never as text.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from flarespec.engine.problems import ArgumentNotSingle, Ineligible
from flarespec.engine.readers import (
    MAX_GENERATED_STEPS,
    compiled,
    constant,
    namespace,
    step_lines,
)
from flarespec.engine.refs import ArgRef

Loop = Callable[[Any, list], Iterator[int]]


def element_loop(rule, refs) -> Loop | None:
    """The rule's element loop over ``refs`` (plans.py's element references: their
    ``getter``, ``own_steps``, ``own_index`` and ``is_static``, which raise Ineligible for a
    reference the loop cannot read), or None."""
    if rule.hook is not None or rule.kind.context or rule.when is not None:
        return None
    try:
        return _Builder(refs).build(rule)
    except Ineligible:
        return None


class _Builder:
    def __init__(self, refs):
        self._refs = refs
        self._names = namespace()
        self._reads: dict[tuple, str] = {(): "value"}  # steps from the element -> variable
        self._lines: list[str] = []
        self._indent = 12
        self._calls_getters = False
        self._singles = 0

    def _constant(self, value: Any) -> str:
        return constant(self._names, value)

    def _emit(self, line: str) -> None:
        self._lines.append(" " * self._indent + line)

    # ------------------------------------------------------------------ references
    def _read(self, steps: tuple) -> str:
        """The variable holding the element's value at ``steps`` (MISSING when nothing is
        there), each prefix read once."""
        for end in range(1, len(steps) + 1):
            prefix = steps[:end]
            if prefix not in self._reads:
                if len(self._reads) > MAX_GENERATED_STEPS:
                    raise Ineligible("more steps than one generated function reads")
                variable = self._reads[prefix] = f"r{len(self._reads)}"
                for line in step_lines(self._reads[steps[:end - 1]], variable, steps[end - 1],
                                       self._constant):
                    self._emit(line)
        return self._reads[steps]

    def _source(self, ref) -> tuple[str, str]:
        """(``own``, the variable of the element's value there), (``index``, "index") or
        (``getter``, the getter's name in the namespace)."""
        if self._refs.own_index(ref):
            return "index", "index"
        steps = self._refs.own_steps(ref)
        if steps is not None:
            return "own", self._read(steps)
        self._calls_getters = True
        return "getter", self._constant(self._refs.getter(ref))

    def _selection(self, ref) -> str:
        """An expression: the list of values ``ref`` selects for this element."""
        form, name = self._source(ref)
        if form == "index":
            return "[index]"
        if form == "own":
            return f"([] if {name} is _MISSING else [{name}])"
        return f"{name}(x)"

    def _single(self, arg: ArgRef) -> str:
        """A variable holding the one value of a single-valued ``{ref}`` argument (its
        default when nothing is selected and it has one; else not known)."""
        form, name = self._source(arg.ref)
        if form == "index":
            return "index"
        self._singles += 1
        variable = f"a{self._singles}"
        default = f"{variable} = {self._constant(arg.default)}" if arg.has_default else None
        if form == "own":
            self._emit(f"if {name} is _MISSING: {default or 'raise _ArgumentNotSingle'}")
            self._emit(f"else: {variable} = {name}")
            return variable
        self._emit(f"{variable} = {name}(x)")
        self._emit(f"if len({variable}) == 1: {variable} = {variable}[0]")
        if default is not None:
            self._emit(f"elif not {variable}: {default}")
        self._emit("else: raise _ArgumentNotSingle")
        return variable

    def _argument(self, arg) -> str:
        """An expression: the argument's value for this element (statements before it read
        its references, in the materializer's order)."""
        if self._refs.is_static(arg):
            return self._constant(arg)
        if isinstance(arg, ArgRef):
            return self._selection(arg.ref) if arg.all else self._single(arg)
        if isinstance(arg, dict):
            members = [(self._constant(key), self._argument(value)) for key, value in arg.items()]
            return "{" + ", ".join(f"{key}: {value}" for key, value in members) + "}"
        if isinstance(arg, list):
            return "[" + ", ".join(self._argument(value) for value in arg) + "]"
        raise Ineligible("an argument that is a condition or a template")

    # ------------------------------------------------------------------ the loop
    def build(self, rule) -> Loop:
        kind = rule.kind
        self._names["_ArgumentNotSingle"] = ArgumentNotSingle
        found = self._selection(rule.given)
        self._emit(f"found = {found}")
        if not kind.accepts_empty:
            empty_passes = bool(rule.optional)
            self._emit(f"if not found: ok = {empty_passes}")
            self._emit("else:")
            self._indent += 4
        if self._refs.is_static(rule.arg):
            verdict = self._constant(kind.verdict(rule.arg))
            self._emit(f"ok = {verdict}(found)")
        else:
            holds_for = self._constant(kind.holds_for)
            argument = self._argument(rule.arg)
            self._emit(f"ok = {holds_for}(None, found, {argument})")
        head = ["def loop(x, values):", "    cursor = x.cursor",
                "    for index, value in enumerate(values):"]
        if self._calls_getters:
            head += ["        cursor.index = index", "        cursor.value = value"]
        lines = [*head, "        try:", *self._lines, "        except Exception:",
                 "            ok = False", "        if ok is not True:", "            yield index"]
        try:
            return compiled(lines, self._names, "loop", f"<element loop {rule.id}>")
        except (SyntaxError, RecursionError, MemoryError):  # too large to generate
            raise Ineligible("too large") from None
