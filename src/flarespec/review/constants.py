"""A constant's change in ``spec diff``, classed through what reads it.

A constant is read two ways: spelled as ``${name}`` (substituted when the spec resolves:
the rules that spell it changed, and review/diff.py has classed those changes) or read at
run time through a ``constants:`` reference. For a rule whose assertion reads it by a plain
reference, the assertion is compared with the constant's old and new values put in, by the
kind's own ``diff`` (engine/kinds.py ``argument_changes``), so raising a floor constant is a
tightening of the rules that read it; any other reader makes it review.

The references are read as the spec's run reads them: compiled by the engine's
``compile_ref``, walked by its JSONPath and pointers, and a reference's ``default`` given
when it selects nothing (it was ignored: a constant added where a default stood was
"review"). The compiler itself holds no reader of a constants reference argument (it
compiles one into an ``ArgRef`` that the engine reads per binding), so this module mirrors
that engine rule (``_argument``).
"""

from __future__ import annotations

from flarespec.compiler.references import referenced_members
from flarespec.engine.directions import ABSENT, NEUTRAL, REVIEW, same
from flarespec.engine.kinds import argument_changes
from flarespec.engine.paths import PathSyntaxError
from flarespec.engine.refs import ArgRef, compile_ref
from flarespec.review.changes import NAMED_SUBJECTS, Change, SpecSide, change_at, rule_index, \
    strings
from flarespec.review.tree import leaf_changes, path_steps, what_happened


def runtime_constants(value) -> set[str]:
    """The constants ``constants:`` references read (compiler/references.py, which lint's
    placeholder check reads too)."""
    return {member for text in strings(value) for target, member in referenced_members(text)
            if target == "constants"}


def _readers(side: SpecSide) -> dict[str, tuple[set[str], set[str]]]:
    """For each subject that reads constants: (constants spelled as ``${}``, constants read at
    run time through ``constants:`` references, its iteration's included)."""
    data = side.data
    over = {name: runtime_constants(it) | _iteration_constants(data, it.get("parent"))
            for name, it in (data.get("iterations") or {}).items()}
    runtime: dict[str, set[str]] = {}
    for rule in data.get("rules") or []:
        runtime[f"rule {rule['id']}"] = runtime_constants(rule) | \
            over.get(rule.get("for_each"), set())
    for section, noun in NAMED_SUBJECTS:
        for name, value in (data.get(section) or {}).items():
            runtime[f"{noun} {name}"] = runtime_constants(value)
    runtime["metric"] = runtime_constants(data.get("metric")) | \
        over.get((data.get("metric") or {}).get("for_each"), set())
    return {subject: (side.substituted.get(subject, set()), runtime.get(subject, set()))
            for subject in set(runtime) | set(side.substituted)}


def _iteration_constants(data: dict, name) -> set[str]:
    iterations, names = data.get("iterations") or {}, set()
    seen = set()
    while name in iterations and name not in seen:
        seen.add(name)
        names |= runtime_constants(iterations[name])
        name = iterations[name].get("parent")
    return names


def constant_changes(before: SpecSide, after: SpecSide, changes: list[Change]) -> list[Change]:
    old, new = before.data.get("constants") or {}, after.data.get("constants") or {}
    readers = _readers(before)
    for subject, (spelled, runtime) in _readers(after).items():
        old_spelled, old_runtime = readers.get(subject, (set(), set()))
        readers[subject] = (old_spelled | spelled, old_runtime | runtime)
    known = bool(before.substituted or after.substituted)
    result = []
    for name in list(old) + [k for k in new if k not in old]:
        o, n = old.get(name, ABSENT), new.get(name, ABSENT)
        if same(o, n):
            continue
        cls, reason, rules = _constant_class(name, readers, changes, before, after, known)
        side = after if n is not ABSENT else before
        for path, before_value, after_value in leaf_changes(o, n, name):
            moved_cls, moved_reason = cls, reason
            if getattr(path, "reordered_by", None) and rules:
                moved_cls, moved_reason = REVIEW, (
                    f"the same entries (matched by {path.reordered_by}) in another order: "
                    "what reads the list in order (an iteration, a position, the order the "
                    "fixture writer and the packets follow) may change; " + reason)
            result.append(change_at(side, side, ("constants",) + tuple(path_steps(path)),
                                    cls=moved_cls, subject=f"constant {name}", path=path,
                                    what=what_happened(path, before_value, after_value),
                                    old=before_value, new=after_value,
                                    reason=moved_reason, rules=rules))
    return result


def _constant_class(name, readers, changes, before, after, known) -> tuple[str, str, list]:
    spelled = sorted(s for s, (subst, _) in readers.items() if name in subst)
    at_run_time = sorted(s for s, (_, runtime) in readers.items() if name in runtime)
    classes: dict[str, set[str]] = {}
    for subject in spelled:
        for change in changes:
            if change.subject == subject and change.path and change.cls != NEUTRAL:
                classes.setdefault(change.cls, set()).add(subject)
    for subject in at_run_time:
        for cls in _run_time_classes(subject, name, before, after):
            classes.setdefault(cls, set()).add(subject)
    rules = sorted(set(spelled) | set(at_run_time))
    if not known and not at_run_time:
        return REVIEW, f"which rules spell it as ${{{name}}} is unknown for plain data", rules
    if not rules:
        return NEUTRAL, "nothing in the spec reads it", rules
    if not classes:
        return NEUTRAL, "the rules that read it accept the same inputs", rules
    if len(classes) == 1:
        (cls, subjects), = classes.items()
        through = "the rules that read it" if len(subjects) == len(rules) else \
            ", ".join(sorted(subjects))
        return cls, f"{cls} through {through}", rules
    return REVIEW, "; ".join(f"{cls} through {', '.join(sorted(s))}"
                             for cls, s in sorted(classes.items())), rules


def _run_time_classes(subject: str, name: str, before: SpecSide, after: SpecSide) -> set[str]:
    """The classes of a constant change for one rule that reads it at run time: its
    assertion compared with the constant's old and new values put in, when the reference
    is a plain one in the assertion; otherwise review."""
    if not subject.startswith("rule "):
        return {REVIEW}
    rule_id = subject[len("rule "):]
    old_rule = rule_index(before).get(rule_id, (None, None))[1]
    new_rule = rule_index(after).get(rule_id, (None, None))[1]
    if old_rule is None or new_rule is None:
        return set()  # added or removed: classed as a rule
    outside_assert = {k: v for k, v in new_rule.items() if k != "assert"}
    if name in runtime_constants(outside_assert) or \
            name in _iteration_constants(after.data, new_rule.get("for_each")):
        return {REVIEW}
    try:
        old_assert = _put_constants(old_rule.get("assert"), before.data.get("constants") or {})
        new_assert = _put_constants(new_rule.get("assert"), after.data.get("constants") or {})
    except LookupError:
        return {REVIEW}
    if not isinstance(old_assert, dict) or not isinstance(new_assert, dict):
        return {REVIEW}
    found = {cls for _, (cls, _, _), _, _ in argument_changes(old_assert, new_assert)}
    return found - {NEUTRAL}


# the keys of a mapping the compiler reads as a reference argument (compiler/compile.py,
# ``walk``: anything else is a mapping of arguments, and ``{literal: ...}`` is never read)
_REFERENCE_KEYS = frozenset({"ref", "default", "all", "at"})


def _put_constants(value, constants: dict):
    """``value`` with every reference argument to the constants (``{ref: "constants:…"}``,
    no placeholders, as the compiler reads one: with its ``default`` and ``all``) replaced by
    what the engine would pass the kind; a ``{literal: …}`` is left as written.
    LookupError when a reference cannot be read without a binding."""
    if isinstance(value, list):
        return [_put_constants(item, constants) for item in value]
    if not isinstance(value, dict) or (set(value) == {"literal"}):
        return value
    ref = value.get("ref")
    if isinstance(ref, str) and ref.startswith("constants:") and set(value) <= _REFERENCE_KEYS:
        return _argument(ref, value, constants)
    return {key: _put_constants(item, constants) for key, item in value.items()}


def _argument(source: str, written: dict, constants: dict):
    """The value a constants reference argument gives the kind: compiled as the compiler
    compiles it (engine/refs.py ``compile_ref``, an ``ArgRef`` with its ``all`` and
    ``default``), read by the engine's own walkers (the spec's JSONPath or pointer), and
    chosen as engine/arguments.py ``materialize`` chooses (every value with ``all``, else the
    one value, else the default when nothing is selected); LookupError otherwise."""
    if "{" in source:
        raise LookupError(source)
    try:
        argument = ArgRef(compile_ref(source), bool(written.get("all")), "default" in written,
                          written.get("default"))
    except PathSyntaxError as problem:
        raise LookupError(source) from problem
    ref = argument.ref
    found = ref.jsonpath.values(constants) if ref.jsonpath is not None else \
        ref.pointer.values(constants, None) if ref.pointer is not None else []
    if argument.all:
        return found
    if len(found) == 1:
        return found[0]
    if not found and argument.has_default:
        return argument.default
    raise LookupError(source)
