"""Fixed selections as generated code: one definition of a literal step, spelled once.

A *fixed* selection is a path of literal steps alone: a JSONPath of member names and
indices (``$.json.choices[0].text``) or a pointer without placeholders or filters
(``/json/choices/0/text``). Each step is a ``Step``: ``(name, index)``, the member name an
object is read by and the index a list is read by, either None when the step does not
read that kind of container (a JSONPath name reads no list, a JSONPath index no object; a
pointer segment reads an object by its text and a list by the index the text spells, if
it spells one). A step that finds nothing ends the selection with no value.

``step_lines`` is that step as Python source. It is the only definition: ``fixed_reader``
compiles a whole path into one straight-line function (what ``PointerTemplate.values``
and ``CompiledJsonPath.values`` run for a fixed path: no loop over steps, no dispatch per
step), and a pass (engine/passes.py) inlines the steps of all its references,
each shared prefix read once. Names reach the code only as constants of its namespace,
never as text, so nothing of a spec is executed; indices are ints, written as literals.
No generated function reads more than ``MAX_GENERATED_STEPS`` steps: a longer path is read
by ``walk_steps``, the same step as a loop (tested against it), and a pass that would read
more reads the rest through the references' accessors.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

Step = tuple  # (member name or None, list index or None)
# A pointer key that reads a list's element: ASCII digits (int() would also read "١" or
# "０"), a sign allowed (a negative index counts from the end)
INDEX = re.compile(r"-?[0-9]+")
_IS_INDEX = INDEX.fullmatch
MISSING = object()  # what a step that finds nothing gives the steps after it
# The most steps one generated function reads: a longer fixed path is read by
# ``walk_steps`` (the same reads, a loop), a pass needing more reads through accessors.
# Spec paths are bounded at load (jsonpath.MAX_SEGMENTS); this keeps the code generator
# from pathological input whatever its caller (160k steps compiled in 18 s and 2.5 GB).
MAX_GENERATED_STEPS = 64
_READERS: dict[tuple, Callable[..., list]] = {}


class Local:
    """A step's key read from a local variable of the generated code. An int (``by_local``:
    a pointer segment filled with an element's own index, ``/events/{own@index}``, what
    ``paths._index_step`` reads) names an object's member by its decimal text and a list's
    element at it. Any value a pointer's placeholder is filled with (``by_filled``: a bound
    element's member, ``paths.PointerTemplate._walk``'s placeholder step): an int as
    above; anything else by its text (itself when a str, else ``str`` of it), an object's
    member of that text and a list's element at the index the text spells (``INDEX``, as a
    pointer's literal key); ``MISSING`` in the local (the member is not there: the filler
    raises) raises ``LookupError``."""

    __slots__ = ("variable", "filled")

    def __init__(self, variable: str, filled: bool = False):
        self.variable, self.filled = variable, filled


def by_local(variable: str) -> Step:
    """The step that reads by the int in the local ``variable`` (``Local``)."""
    local = Local(variable)
    return local, local


def by_filled(variable: str) -> Step:
    """The step that reads by the filled value in the local ``variable`` (``Local``)."""
    local = Local(variable, filled=True)
    return local, local


def _filled_lines(source: str, target: str, key: str, constant: Callable[[Any], str],
                  missing: str) -> list[str]:
    text, index = f"{target}_text", constant(_IS_INDEX)
    return [f"if {key} is _MISSING: raise LookupError",
            f"if type({key}) is int:",
            *("    " + line for line in step_lines(source, target, by_local(key), constant,
                                                    missing)),
            "else:",
            f"    {text} = {key} if type({key}) is str else str({key})",
            f"    if isinstance({source}, dict) and {text} in {source}: {target} = {source}[{text}]",
            f"    elif isinstance({source}, list) and {index}({text}) and "
            f"-len({source}) <= int({text}) < len({source}): {target} = {source}[int({text})]",
            f"    else: {missing}"]


def step_lines(source: str, target: str, step: Step, constant: Callable[[Any], str],
               missing: str | None = None) -> list[str]:
    """Python lines setting ``target`` to what ``step`` reads from ``source``; when it reads
    nothing, the statement ``missing`` runs (by default: ``target`` is set to MISSING,
    named ``_MISSING`` in the namespace, which the steps after it read nothing from: the
    sentinel is neither an object nor a list)."""
    name, index = step
    if isinstance(name, Local) and name.filled:
        return _filled_lines(source, target, name.variable, constant,
                             missing or f"{target} = _MISSING")
    lines, keyword = [], "if"
    if name is not None:
        key = f"str({name.variable})" if isinstance(name, Local) else constant(name)
        lines.append(f"if isinstance({source}, dict) and {key} in {source}: {target} = {source}[{key}]")
        keyword = "elif"
    if index is not None:
        if isinstance(index, Local):
            index = index.variable
        elif type(index) is not int:
            raise TypeError(f"a step's index is an int, not {index!r}")
        lines.append(f"{keyword} isinstance({source}, list) and -len({source}) <= {index} < "
                     f"len({source}): {target} = {source}[{index}]")
    lines.append(f"else: {missing or f'{target} = _MISSING'}")
    return lines


def namespace() -> dict:
    """The globals of one generated function (a plain dict: the interpreter caches the
    look-ups of an exact dict's names only). ``constant(namespace, value)`` adds a value."""
    return {"_MISSING": MISSING, "isinstance": isinstance, "dict": dict, "list": list, "len": len}


def constant(namespace: dict, value: Any) -> str:
    """``value`` put into ``namespace`` under a fresh name, which is returned."""
    name = f"_c{len(namespace)}"
    namespace[name] = value
    return name


def compiled(lines: list[str], namespace: dict, name: str, filename: str) -> Callable:
    """The function ``name`` that ``lines`` define, with ``namespace`` as its globals. It
    is taken out of them: a function in its own globals would be a reference cycle, and
    whatever the namespace holds would wait for the cyclic collector. The code is compiled
    once per source text (``_code``): a second packet's evaluation in the same process (the
    pair of ``measure``) generates the same text, and runs it in a namespace of its own."""
    exec(_code("\n".join(lines), filename), namespace)
    return namespace.pop(name)


@functools.lru_cache(maxsize=256)
def _code(source: str, filename: str):
    """``source`` compiled (a code object is immutable: one serves every namespace). Spec
    values never appear in the text, only the names of namespace constants."""
    return compile(source, filename, "exec")


def walk_steps(steps: tuple[Step, ...], value: Any) -> list:
    """``[the value at steps]`` or [] when a step finds nothing: ``step_lines``'s reads as
    a loop, for a path too long to generate."""
    for name, index in steps:
        if name is not None and isinstance(value, dict) and name in value:
            value = value[name]
        elif index is not None and isinstance(value, list) and -len(value) <= index < len(value):
            value = value[index]
        else:
            return []
    return [value]


def fixed_reader(steps: tuple[Step, ...]) -> Callable[..., list]:
    """``(value, fill=None) -> [the value at steps]`` or [] when a step finds nothing: a
    fixed selection's ``values`` (``fill`` is accepted and unused, as a pointer reader's
    is). One function per distinct path, made on first use; beyond MAX_GENERATED_STEPS
    steps ``walk_steps`` over them."""
    steps = tuple(steps)
    if len(steps) > MAX_GENERATED_STEPS:
        return lambda value, fill=None: walk_steps(steps, value)
    reader = _READERS.get(steps)
    if reader is None:
        names = namespace()
        lines = ["def read(v, fill=None):"]
        for step in steps:
            lines += ["    " + line for line in
                      step_lines("v", "v", step, lambda value: constant(names, value), "return []")]
        lines += ["    return [v]"]
        reader = _READERS[steps] = compiled(lines, names, "read", "<fixed reader>")
    return reader
