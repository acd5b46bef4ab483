"""Pass tests: the rules of one iteration compiled into one generated function.

A rule runs once per binding, often a million times over a stream, and most bindings pass.
The reporting path (``Evaluation._apply_once``) is the definition of a rule: it builds
matches with locations, asks the kind's function and words every failure. Interpreting it
for every binding is what a run would spend its time on, so the engine first asks a *pass
test*, which may only ever say "holds" or "not known", and sends the (rule, binding) pairs
not known to hold to the reporting path, which decides and words them.

The pass tests of the rules that run together over one iteration (a *pass*: ``Group``) are
one generated function, made once per evaluation:

* **scope form** ``check(scope) -> [positions not known to pass]``, called once per binding;
* **element form** ``check(element, values) -> [(position, index)...]`` for rules over a
  leaf iteration, called once per parent: one loop over the parent's elements, the
  element bound to a cursor moved in place (``Element``), so nothing is allocated for an
  element that passes and what the parent fixes is read once per parent.

Inside it each shared value is read once: a document's root once per binding (per parent),
a fixed selection (engine/readers.py: a path of literal steps) as inline steps, each prefix
several rules read once, and so is a pointer of literal keys and placeholders filled by
bound elements (``/shelves/{shelf@index}/items/{item@index}``, ``/rows/{item.key}``: each
placeholder's step by the index or member it is filled with, ``readers.by_local`` and
``by_filled``; in the element form one placeholder of the element's own, the keys before
it read once per parent); any other reference through its one accessor
(engine/access.py), its result kept for the rules after it. Each rule is then tested on
the raw values by its kind's inline test (``Kind.inline``, for a static argument, or for
the skeleton of an argument read here when the kind takes one: engine/inline.py), else its
kind's verdict bound to a static argument (``Kind.verdict``), else ``Kind.holds_for`` on
the argument read here (a check hook by ``Hook.holds``, a ``when`` by its condition's
verdict, a ``requires`` by ``Evaluation.required_failed``); an empty selection is decided
as the reporting path decides it. Anything that raises, and anything but True, is "not
known".

Reads keep the report's order: a read that may load a document (or walk an iteration) first
puts the sink at its rule's position (engine/sink.py), so a document's load problems are
filed where the first rule in rule order that needed it would file them.

Names, constants and callables reach the generated code only as names in its namespace,
never as text: nothing of a spec is executed. A function reads at most
``readers.MAX_GENERATED_STEPS`` inline steps; a reference beyond that reads through its
accessor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from flarespec.engine.hooks import HOOKS
from flarespec.engine.inline import Dynamic, dynamic_source, inline_source, static
from flarespec.engine.problems import ArgumentNotSingle
from flarespec.engine.placeholders import Placeholder
from flarespec.engine.readers import (
    MAX_GENERATED_STEPS,
    by_filled,
    by_local,
    compiled,
    constant,
    namespace,
    step_lines,
)
from flarespec.engine.refs import ArgRef, ArgTemplate, Condition, refs_in

UNREAD = object()  # a shared value not read yet (or whose read raised: read again)


class Element(dict):
    """What an element pass sees of one element of a leaf iteration: a scope (iteration
    name -> binding, as the references' accessors read it) made once per parent, whose own
    iteration is bound to a cursor moved from element to element in place."""

    __slots__ = ("cursor", "held")

    def __init__(self, parent: dict, name: str):
        super().__init__(parent)
        self.cursor = self[name] = _Cursor()
        self.held: dict = {}  # what the accessors read once for this parent (access.py)


class _Cursor:
    """The element bound in an ``Element``: a binding's ``match``, ``value``, ``index``,
    ``file`` and ``label`` (neither is needed to read values: None; the element form admits
    no placeholder of a label, so ``rendered_label`` is None too)."""

    __slots__ = ("index", "value")
    file = None
    label = rendered_label = None

    def __init__(self):
        self.index, self.value = 0, None

    @property
    def match(self) -> "_Cursor":
        return self


@dataclass(frozen=True)
class Group:
    """Rules (by number, in rule order) whose pass tests are one function over ``iteration``
    (None: the one binding of no iteration); ``element``: the element form."""

    iteration: str | None
    numbers: tuple[int, ...]
    element: bool
    check: Callable
    steps: int = 0  # the literal steps its function reads inline (readers.MAX_GENERATED_STEPS)


class Passes:
    """The pass tests of one evaluation (they read its documents), made on first use."""

    def __init__(self, evaluation):
        self._evaluation = evaluation
        self._programs: dict[tuple, dict[int, Group]] = {}
        self._alone: dict[tuple, Group | None] = {}
        self._conditions: dict[int, Callable | None] = {}
        spec = evaluation.spec
        self._numbers = {id(rule): number for number, rule in enumerate(spec.rules)}
        self._tracked = {rule_id for rule in spec.rules for rule_id in rule.requires}

    # ------------------------------------------------------------------ what runs how
    def groups(self, numbers) -> dict[int, Group]:
        """Rule number -> its pass, for the rules among ``numbers`` that run in one: no
        kind asking for a binding's context (a check hook runs in one: ``_hook``), no other
        rule requiring them (those run one by one, ``alone``: each binding's verdict is
        recorded). A pass runs when its first rule is due; rules another one requires end
        the passes before them, so what they record is recorded when it always was, and a
        rule that requires them is skipped in a pass where it would be skipped alone
        (``_requires``)."""
        numbers = tuple(numbers)
        program = self._programs.get(numbers)
        if program is None:
            program = self._programs[numbers] = self._program(numbers)
        return program

    def _program(self, numbers: tuple) -> dict[int, Group]:
        rules, program = self._evaluation.spec.rules, {}
        segment: dict[tuple, list[int]] = {}

        def close():
            for (iteration, element), members in segment.items():
                group = self._group(iteration, tuple(members), element)
                for number in group.numbers if group is not None else ():
                    program[number] = group
            segment.clear()

        for number in numbers:
            rule = rules[number]
            if rule.id in self._tracked:
                close()
            if not self.fusable(rule):
                continue
            segment.setdefault((rule.for_each, self.element_form(rule)), []).append(number)
        close()
        return program

    def fusable(self, rule) -> bool:
        return (rule.hook is not None or not rule.kind.context) and rule.id not in self._tracked

    def element_form(self, rule) -> bool:
        """True when the rule is tested by the element form: over a leaf iteration, no
        ``when``, what it requires over enclosing iterations, every reference reads the
        element, its ancestors, the constants or documents that depend on nothing deeper
        (no pin, no label, no template)."""
        evaluation = self._evaluation
        if rule.hook is not None or rule.kind.context or rule.when is not None \
                or rule.for_each not in evaluation.bindings.leaves \
                or not evaluation.requires_enclosing(rule):
            return False
        bound = set(evaluation.spec.iterations[rule.for_each].chain)
        chains = evaluation.documents.chains
        for item in _arguments(rule.arg):
            if isinstance(item, (Condition, ArgTemplate)):
                return False
        for ref in refs_in([rule.given, rule.arg]):
            if ref.pinned or ref.metadata not in (None, "index") or ref.template is not None:
                return False
            target = ref.target
            if not (target == "constants" or target in bound or
                    target in chains and set(chains[target]) <= bound):
                return False
            for placeholder in ref.placeholders:
                if placeholder.reference or placeholder.meta not in (None, "index") or \
                        placeholder.name not in bound:
                    return False
        return True

    def alone(self, rule, element: bool = False) -> Group | None:
        """The pass of one rule by itself (a rule that requires or is required, run one by
        one), or None for a hook or a kind that needs a binding's context."""
        key = (rule.id, element)
        if key not in self._alone:
            number = self._numbers[id(rule)]
            self._alone[key] = None if rule.hook is not None or rule.kind.context else \
                self._group(rule.for_each, (number,), element)
        return self._alone[key]

    def condition(self, condition: Condition) -> Callable[[dict], bool] | None:
        """``scope -> bool`` for the engine's ``holds`` (raising when it cannot tell), or
        None when the condition's kind needs a binding's context. A condition is true or
        false, so no inline test (whose False means "not known") decides it."""
        key = id(condition)  # conditions live as long as the spec
        if key not in self._conditions:
            self._conditions[key] = None if condition.kind.context else \
                _Builder(self._evaluation, None, condition=True).condition(condition)
        return self._conditions[key]

    def _group(self, iteration, numbers: tuple, element: bool) -> Group | None:
        """The pass of these rules, or None when its function cannot be generated (too
        large to compile): its rules then run one by one."""
        rules = [self._evaluation.spec.rules[number] for number in numbers]
        builder = _Builder(self._evaluation, iteration if element else None)
        try:
            check = builder.build(numbers, rules)
        except (SyntaxError, RecursionError, MemoryError):
            return None
        return Group(iteration, numbers, element, check, builder.steps)


def _arguments(arg):
    """Every value inside an argument (its members, its items), the argument first."""
    yield arg
    if isinstance(arg, dict):
        for value in arg.values():
            yield from _arguments(value)
    elif isinstance(arg, list):
        for value in arg:
            yield from _arguments(value)


class _Builder:
    """The source of one pass function. ``own``: the leaf iteration of the element form,
    or None for the scope form."""

    def __init__(self, evaluation, own: str | None, *, condition: bool = False):
        self._evaluation = evaluation
        self._own = own
        self._positioned = not condition  # a condition reads where its caller is
        self._names = namespace()
        self._names.update(_UNREAD=UNREAD, _ArgumentNotSingle=ArgumentNotSingle,
                           _at=evaluation.reporter.sink.at, _document=evaluation.documents.document)
        self._constants: dict[int, str] = {}
        self._hoisted: list[str] = []  # pure reads, before the rules (per call or element)
        self._outer: list[str] = []  # element form: per parent, before the loop
        self._guarded: list[str] = []  # variables set to _UNREAD where reads start
        self._per_element: set[str] = set()  # element form: those set anew per element
        self._reads: dict[tuple, str] = {}  # (root, steps) -> variable
        self._getters: dict[str, tuple[str, str]] = {}  # reference -> (variable, reader)
        self._chain: tuple = ()
        self._steps = 0
        self._lines: list[str] = []
        self._indent = 0
        self._position = "None"
        self._calls_getters = False
        self._temporaries = 0

    @property
    def steps(self) -> int:
        return self._steps

    # ------------------------------------------------------------------ helpers
    def _constant(self, value: Any) -> str:
        key = id(value)
        name = self._constants.get(key)
        if name is None or self._names.get(name) is not value:
            name = self._constants[key] = constant(self._names, value)
        return name

    def _emit(self, line: str) -> None:
        self._lines.append(" " * self._indent + line)

    def _at(self, indent: str = "") -> None:
        """The sink put at this rule's position before a read that may touch it."""
        if self._positioned:
            self._emit(f"{indent}_at({self._position})")

    def _fresh(self, prefix: str) -> str:
        self._temporaries += 1
        return f"{prefix}{self._temporaries}"

    # ------------------------------------------------------------------ reads
    def _pure_root(self, ref) -> str | None:
        """The variable of a root read without touching anything (a bound element's value,
        the constants), hoisted; None for a document or anything else."""
        target = self._evaluation.spec.iterations
        if ref.target == "constants":
            key = ("constants",)
            if key not in self._reads:
                variable = self._reads[key] = self._fresh("k")
                line = f"{variable} = {self._constant(self._evaluation.spec.constants)}"
                (self._outer if self._own else self._hoisted).append(line)
            return self._reads[key]
        if ref.target not in target:
            return None
        return self._bound_root(ref.target)

    def _bound_root(self, name: str) -> str | None:
        """The variable of the value bound to the iteration ``name`` here (the element's:
        ``value``), hoisted; None when ``name`` is not bound here."""
        iterations = self._evaluation.spec.iterations
        if name not in (iterations[self._own].chain if self._own else self._chain):
            return None
        key = ("binding", name)
        if key not in self._reads:
            if name == self._own:
                self._reads[key] = "value"
            else:
                variable = self._reads[key] = self._fresh("b")
                line = f"{variable} = x[{self._constant(name)}].match.value"
                (self._outer if self._own else self._hoisted).append(line)
        return self._reads[key]

    def _steps_of(self, ref) -> tuple | None:
        if ref.pinned or ref.metadata or ref.template is not None:
            return None
        if ref.jsonpath is not None:
            return ref.jsonpath.fixed_steps()
        return ref.pointer.fixed_steps()

    def _fixed(self, ref, steps: tuple | None = None) -> str | None:
        """The variable holding the value a fixed selection reads (``_MISSING`` when a step
        finds nothing), or None when the reference is not read inline; ``steps``: these
        steps of the reference's target instead of its own."""
        steps = self._steps_of(ref) if steps is None else steps
        if steps is None or self._steps + len(steps) > MAX_GENERATED_STEPS:
            return None
        root = self._pure_root(ref)
        if root is not None:
            pure = ref.target == "constants" or ref.target != self._own
            into = (self._outer if self._own else self._hoisted) if pure else self._hoisted
            return self._step_reads(root, ("pure", ref.target), steps, into, guarded=False)
        if ref.target not in self._evaluation.spec.documents:
            return None
        key = ("document", ref.target)
        variable = self._reads.get(key)
        if variable is None:
            variable = self._reads[key] = self._fresh("d")
            self._guarded.append(variable)
        self._emit(f"if {variable} is _UNREAD:")
        self._at("    ")
        self._emit(f"    {variable} = _document({self._constant(ref.target)}, x).value")
        return self._step_reads(variable, key, steps, self._lines, guarded=True)

    def _step_reads(self, root: str, key: tuple, steps: tuple, into: list[str], *,
                    guarded: bool, per_element: bool = False) -> str:
        variable = root
        for end in range(1, len(steps) + 1):
            prefix = key + tuple(steps[:end])
            found = self._reads.get(prefix)
            if found is None or guarded:
                target = found or self._fresh("r")
                if found is None:
                    self._reads[prefix] = target
                    self._steps += 1
                lines = step_lines(variable, target, steps[end - 1], self._constant)
                if guarded:
                    if found is None:
                        self._guarded.append(target)
                        if per_element:
                            self._per_element.add(target)
                    into.append(" " * self._indent + f"if {target} is _UNREAD:")
                    into.extend(" " * (self._indent + 4) + line for line in lines)
                else:
                    into.extend(lines)
                found = target
            variable = found
        return variable

    def _filled(self, ref) -> str | None:
        """The variable holding what a pointer of literal keys and placeholders filled by
        bound elements reads (``/shelves/{shelf@index}/items/{item@index}``,
        ``/rows/{item.key}``), inline: the keys as a fixed selection's, each
        placeholder's step by the value the filler gives it here (the binding's index, or a
        member of its element: ``readers.by_filled``), as ``PointerTemplate._walk`` takes
        it. In the element form, one placeholder of the element's own: the keys before it
        read once per parent (a document's lazily), the steps from it per element. None
        for any other reference (it reads through its accessor)."""
        if ref.pinned or ref.metadata or ref.template is not None or ref.pointer is None:
            return None
        steps = ref.pointer.filled_steps()
        if steps is None:
            return None
        places = [number for number, step in enumerate(steps) if isinstance(step, Placeholder)]
        if not places or not all(self._fillable(steps[number], len(places)) for number in places):
            return None
        reads = len(steps) + sum(len(steps[number].members) for number in places)
        if self._steps + reads > MAX_GENERATED_STEPS:
            return None
        container = self._fixed(ref, steps[:places[0]])
        if container is None:
            return None
        rest = tuple(self._filler_step(step) if isinstance(step, Placeholder) else step
                     for step in steps[places[0]:])
        return self._step_reads(container, ("filled", container), rest, self._lines,
                                guarded=True, per_element=self._own is not None)

    def _fillable(self, placeholder: Placeholder, count: int) -> bool:
        """A placeholder ``_filled`` reads: a bound element's index or member (in the
        element form the element's own, alone in its pointer)."""
        if placeholder.reference or placeholder.meta not in (None, "index"):
            return False
        if self._own is not None:
            return count == 1 and placeholder.name == self._own
        return placeholder.name in self._chain

    def _filler_step(self, placeholder: Placeholder) -> tuple:
        """The step by what ``placeholder`` is filled with here: the loop's ``index`` or the
        binding's (an int), else the member of the bound element its member path reads
        (``values.member_at`` with digits indexing a list: fixed steps), read hoisted."""
        key = ("filler", placeholder)
        if key in self._reads:
            return self._reads[key]
        name = placeholder.name
        if placeholder.meta == "index":
            if name == self._own:
                variable = "index"
            else:
                variable = self._fresh("i")
                self._hoisted.append(f"{variable} = x[{self._constant(name)}].index")
            step = by_local(variable)
        else:
            members = tuple((member, int(member) if member.isascii() and member.isdigit()
                             else None) for member in placeholder.members)
            variable = self._step_reads(self._bound_root(name), ("pure", name), members,
                                        self._hoisted, guarded=False)
            step = by_filled(variable)
        self._reads[key] = step
        return step

    def _getter(self, ref) -> str:
        """A variable holding the reference's values here, read through its accessor (once
        per binding, or per element in the element form). Two rules' equal references (the
        same source, pins and metadata: equal reprs) share it: they read the same."""
        key = repr(ref)
        known = self._getters.get(key)
        if known is None:
            accessor = self._evaluation.references.accessor(ref)
            variable = self._fresh("g")
            self._guarded.append(variable)
            self._per_element.add(variable)
            if self._own is not None:
                self._calls_getters = True
                read = self._constant(accessor.element_values(self._own))
            else:
                read = self._constant(accessor.values)
            known = self._getters[key] = (variable, read)
        variable, read = known
        self._emit(f"if {variable} is _UNREAD:")
        self._at("    ")
        self._emit(f"    {variable} = {read}(x)")
        return variable

    def _selection(self, ref) -> tuple[str, str]:
        """(``one``, a variable of one value or _MISSING) or (``list``, an expression of
        the selected values' list)."""
        if self._own is not None and ref.metadata == "index" and ref.target == self._own \
                and not ref.pinned:
            return "one", "index"
        variable = self._fixed(ref)
        if variable is None:
            variable = self._filled(ref)
        if variable is not None:
            return "one", variable
        return "list", self._getter(ref)

    def _skeleton(self, arg):
        """The argument's skeleton here (engine/inline.py): a static part as it is, each part
        read per binding a ``Dynamic`` whose source holds it as read. Statements before it
        read its references, in the order the reporting path's ``materialize`` reads them."""
        if self._evaluation.references.is_static(arg):
            return arg
        if isinstance(arg, ArgRef):
            return Dynamic(self._read_argument(arg))
        if isinstance(arg, dict):
            return {key: self._skeleton(value) for key, value in arg.items()}
        if isinstance(arg, list):
            return [self._skeleton(value) for value in arg]
        # a condition or a template: read as the reporting path reads it (scope form only)
        self._at()
        materialize = self._constant(self._evaluation.references.materialize)
        return Dynamic(f"{materialize}({self._constant(arg)}, x)")

    def _read_argument(self, arg: ArgRef) -> str:
        """An expression of one ``{ref}`` argument's value here (its all/one/default)."""
        form, read = self._selection(arg.ref)
        if arg.all:
            return f"([] if {read} is _MISSING else [{read}])" if form == "one" else read
        if read == "index":
            return "index"
        variable = self._fresh("a")
        if form == "one":
            missing = f"{variable} = {self._constant(arg.default)}" if arg.has_default \
                else "raise _ArgumentNotSingle"
            self._emit(f"if {read} is _MISSING: {missing}")
            self._emit(f"else: {variable} = {read}")
            return variable
        self._emit(f"if len({read}) == 1: {variable} = {read}[0]")
        if arg.has_default:
            self._emit(f"elif not {read}: {variable} = {self._constant(arg.default)}")
        self._emit("else: raise _ArgumentNotSingle")
        return variable

    def _source(self, skeleton) -> str:
        """An expression of the argument's whole value from its skeleton."""
        if isinstance(skeleton, Dynamic):
            return skeleton.source
        if static(skeleton):
            return self._constant(skeleton)
        if isinstance(skeleton, dict):
            members = ", ".join(f"{self._constant(key)}: {self._source(value)}"
                                for key, value in skeleton.items())
            return "{" + members + "}"
        return "[" + ", ".join(self._source(value) for value in skeleton) + "]"

    # ------------------------------------------------------------------ tests
    def _test(self, kind, given, arg, empty: str, *, inline: bool) -> None:
        """Lines setting ``ok``: the kind's verdict on the selection (``empty`` when it is
        empty and the kind does not decide that itself)."""
        form, read = self._selection(given)
        if form == "one" and read != "index":
            if not kind.accepts_empty:
                self._emit(f"if {read} is _MISSING: ok = {empty}")
                self._emit("else:")
                self._indent += 4
                self._verdict_one(kind, read, arg, inline)
                self._indent -= 4
                return
            found = f"([] if {read} is _MISSING else [{read}])"
            self._verdict_list(kind, found, arg, inline)
            return
        if form == "one":  # the element's index
            self._verdict_one(kind, read, arg, inline)
            return
        if not kind.accepts_empty:
            self._emit(f"if not {read}: ok = {empty}")
            self._emit("else:")
            self._indent += 4
            self._verdict_list(kind, read, arg, inline)
            self._indent -= 4
            return
        self._verdict_list(kind, read, arg, inline)

    def _inline(self, kind, subject: str, skeleton, inline: bool) -> str | None:
        """The kind's inline test over ``subject`` (engine/inline.py), for a static argument
        or, when the kind takes one, the skeleton of one read here; None when there is none
        (or it cannot be made: the verdict decides)."""
        if not inline:
            return None
        try:
            if static(skeleton):
                source = inline_source(kind, subject, skeleton, self._constant)
            else:
                source = dynamic_source(kind, subject, skeleton,
                                        self._source(skeleton), self._constant)
        except Exception:
            return None
        return None if source is None else f"({source})"

    def _verdict_one(self, kind, value: str, arg, inline: bool) -> None:
        if kind.collective:
            self._verdict_list(kind, f"[{value}]", arg, inline)
            return
        skeleton = self._skeleton(arg)
        source = self._inline(kind, value, skeleton, inline)
        if source is not None:
            self._emit(f"ok = {source}")
        elif static(skeleton):
            self._emit(f"ok = {self._constant(kind.verdict(arg, alone=True))}({value})")
        else:
            argument = self._source(skeleton)
            self._emit(f"ok = {self._constant(kind.holds_for)}(None, [{value}], {argument})")

    def _verdict_list(self, kind, values: str, arg, inline: bool) -> None:
        skeleton = self._skeleton(arg)
        if kind.collective:
            source = self._inline(kind, "found", skeleton, inline)
            if source is not None:
                self._emit(f"found = {values}")
                self._emit(f"ok = {source}")
                return
        else:
            source = self._inline(kind, "subject", skeleton, inline)
            if source is not None:
                self._emit("ok = True")
                self._emit(f"for subject in {values}:")
                self._emit(f"    if {source} is not True:")
                self._emit("        ok = False")
                self._emit("        break")
                return
        if static(skeleton):
            self._emit(f"ok = {self._constant(kind.verdict(arg))}({values})")
        else:
            argument = self._source(skeleton)
            self._emit(f"ok = {self._constant(kind.holds_for)}(None, {values}, {argument})")

    def _rule(self, position: int, number: int, rule) -> None:
        """One rule's block: ``ok`` set inside a try (what raises is not known), its
        position recorded when ``ok`` is not True."""
        self._position = self._constant((number,))
        self._chain = self._evaluation.spec.iterations[rule.for_each].chain \
            if rule.for_each else ()
        self._emit("try:")
        self._indent += 4
        if rule.requires:
            self._requires(rule)
        if rule.when is not None:
            self._when(rule.when)
        if rule.hook is not None:
            self._hook(rule)
        else:
            self._test(rule.kind, rule.given, rule.arg, "True" if rule.optional else "False",
                       inline=True)
        self._indent = self._base
        self._emit("except Exception:")
        self._emit("    ok = False")
        if self._own is None:
            self._emit(f"if ok is not True: yield {position}")
        else:
            self._emit(f"if ok is not True: yield {position}, index")

    def _hook(self, rule) -> None:
        """A check hook's verdict (``Hook.holds``) on its arguments read here, as the
        reporting path's ``materialize`` reads them, with a context of this binding (the
        scope form's ``x`` is the binding's scope); a read or a hook that raises is "not
        known", and the reporting path runs it again."""
        args = self._source(self._skeleton(rule.arg))
        self._at()  # the hook may read a document through its context
        holds, context = HOOKS[rule.hook].holds, self._evaluation.context
        self._emit(f"ok = {self._constant(holds)}({self._constant(context)}(x), {args})")

    def _when(self, condition: Condition) -> None:
        """The rule's ``when``, decided here as the engine's ``holds`` decides it (its
        kind's verdict, never an inline test: the same lines as ``condition`` makes, its
        reads shared with the rules'); false: the rule holds for the binding. A read that
        raises leaves the rule "not known", for the reporting path to decide. A condition
        whose kind needs a binding's context is asked of ``holds``."""
        if condition.kind.context:
            self._at()
            holds = self._constant(self._evaluation.holds)
            self._emit(f"if not {holds}({self._constant(condition)}, x): ok = True")
        else:
            self._test(condition.kind, condition.given, condition.arg, "False", inline=False)
            self._emit("if not ok: ok = True")
        self._emit("else:")
        self._indent += 4

    def _requires(self, rule) -> None:
        """A rule whose required rule failed here is skipped (``ok``: nothing to report, its
        cause is reported), as it is alone: asked per binding, in the element form once per
        parent (what it requires runs over enclosing iterations: ``element_form``). An
        answer that raised is "not known": the reporting path asks again."""
        failed = f"{self._constant(self._evaluation.required_failed)}({self._constant(rule)}, x)"
        if self._own is None:
            self._emit(f"if {failed}: ok = True")
        else:
            skipped = self._fresh("s")
            self._outer += [f"try: {skipped} = {failed}", f"except Exception: {skipped} = None"]
            self._emit(f"if {skipped} is None: ok = False")
            self._emit(f"elif {skipped}: ok = True")
        self._emit("else:")
        self._indent += 4

    # ------------------------------------------------------------------ functions
    def build(self, numbers: tuple, rules: list) -> Callable:
        self._base = 8 if self._own is not None else 4
        self._indent = self._base
        for position, (number, rule) in enumerate(zip(numbers, rules)):
            self._rule(position, number, rule)
        guarded = " = ".join(self._guarded)
        if self._own is None:
            lines = ["def check(x):"]
            lines += ["    " + line for line in self._hoisted]
            if guarded:
                lines.append(f"    {guarded} = _UNREAD")
            lines += [*self._lines, "    return", "    yield"]
        else:
            per_element = [v for v in self._guarded if v in self._per_element]
            per_parent = [v for v in self._guarded if v not in self._per_element]
            lines = ["def check(x, values):", "    cursor = x.cursor"]
            lines += ["    " + line for line in self._outer]
            if per_parent:
                lines.append(f"    {' = '.join(per_parent)} = _UNREAD")
            lines.append("    for index, value in enumerate(values):")
            if self._calls_getters:
                lines += ["        cursor.index = index", "        cursor.value = value"]
            lines += ["        " + line for line in self._hoisted]
            if per_element:
                lines.append(f"        {' = '.join(per_element)} = _UNREAD")
            lines += self._lines
        return compiled(lines, self._names, "check", f"<pass {numbers[0]}..{numbers[-1]}>")

    def condition(self, condition: Condition) -> Callable[[dict], bool]:
        """``decide(scope) -> bool``: the condition's verdict (raising when it cannot be
        read here: the engine's general path then decides)."""
        self._chain = ()
        self._base = self._indent = 4
        self._test(condition.kind, condition.given, condition.arg, "False", inline=False)
        guarded = " = ".join(self._guarded)
        lines = ["def decide(x):"] + ["    " + line for line in self._hoisted]
        if guarded:
            lines.append(f"    {guarded} = _UNREAD")
        lines += [*self._lines, "    return ok"]
        return compiled(lines, self._names, "decide", "<condition>")
