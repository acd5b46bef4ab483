"""Document shapes: the declared structure of a loaded document, checked before any rule reads it.

A spec declares, for every document it loads, the JSON types of the members its rules read
(``shapes:`` in a spec; docs/spec-language.md). The engine checks a document's shape right
after loading it; a document whose shape does not hold is reported once per problem under the
document's ``<rule>.shape`` and is then unavailable, as a document that failed to load: every
rule that needs it is skipped for that binding, so a wrong type never reaches a rule (no
cascade) and never passes unseen.

A shape node (after ``spec.compile`` expanded named shapes and ``use``) is a mapping:

``type``      one JSON type name or a list of them: null, boolean, integer (a JSON integer
              token: never a boolean, never ``1.0``), number (an integer, a float, or the
              Prometheus loader's exact Decimal of a non-integral value; its NaN and
              infinities are floats, numbers that no ``min``/``max`` admits),
              string, array (never an object), object; ``any`` accepts every value
``members``   object members by name, each a node; required unless ``optional: true``
``closed``    true: an object member not named in ``members`` is a violation
``values``    the node every member value of an object satisfies (an object used as a map)
``items``     the node every element of an array satisfies
``length``    an array's or string's length: an integer, or ``{min, max}``
``min/max``   inclusive bounds of a number (NaN is within none)
``pattern``   an RE2 pattern a string matches whole
``one_of``    the allowed values (type-strict)
``example``   a value of the node, for writers (never checked against packets)
``dropped``   compiled only, for writers, never checked against packets: the members the
              ``extends`` chain removed here (``drop_members``) and no later file declared
              again; a writer stops writing them (fixtures/writers.py ``conform``). Written
              by the resolver alone (compiler/resolve.py), never by a spec file

One function per node decides and reports: it returns None when the value has the shape,
else the list of problems, so the verdict and the report cannot drift. Compiled once per
process from the plain node (a compiled spec is pickled without its closures).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable

from flarespec.engine.values import full_match, json_type, strict_equal
from flarespec.loaders.locations import child_location
from flarespec.engine.outcome import shown

ANY = "any"
SHAPE_RULE = "shape"  # a document's shape violations: <document rule>.shape
# the Python types of each JSON type after strict parsing: `type(v) in ...` keeps bool apart
PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),), "boolean": (bool,), "integer": (int,), "number": (int, float, Decimal),
    "string": (str,), "array": (list,), "object": (dict,)}
TYPE_NAMES = (*PYTHON_TYPES, ANY)
NODE_KEYS = ("type", "members", "optional", "closed", "values", "items", "length", "min",
             "max", "pattern", "one_of", "description", "example")
# keys of a node as a spec file writes it, resolved away before a shape is built
AUTHORING_KEYS = ("use", "drop_members")
# the key of a compiled node naming the members the extends chain dropped (see above)
DROPPED = "dropped"
_MISSING = object()
# one array or object used as a map reports at most this many problems of its elements
MAX_PROBLEMS_PER_CONTAINER = 20


class Problem:
    """One place where a value does not have its shape. ``steps`` are the keys and indices
    from the document's root (collected in reverse while unwinding, see ``location``)."""

    __slots__ = ("steps", "message", "expected", "actual")

    def __init__(self, message: str, expected: Any, actual: Any):
        self.steps: list = []
        self.message, self.expected, self.actual = message, expected, actual

    def at(self, step) -> "Problem":
        self.steps.append(step)
        return self

    @property
    def location(self) -> str:
        location = "$"
        for step in reversed(self.steps):
            location = child_location(location, step)
        return location


def type_list(node: dict) -> list[str]:
    declared = node.get("type", ANY)
    return [declared] if isinstance(declared, str) else list(declared)


def described(value: Any) -> str:
    """A value's JSON type and text, for a message: ``number 528.0``, ``object {"0": …}``
    (``null``, ``true``: the text alone says the type)."""
    if value is None or isinstance(value, bool):
        return shown(value)
    return f"{json_type(value)} {shown(value, 60)}"


class Shape:
    """A document's shape: the plain node, and its checker built on first use."""

    def __init__(self, node: dict, rule: str):
        self.node, self.rule = node, rule
        self._check: Callable[[Any], list | None] | None = None

    def __getstate__(self):
        return {"node": self.node, "rule": self.rule}

    def __setstate__(self, state):
        self.node, self.rule, self._check = state["node"], state["rule"], None

    def problems(self, value: Any) -> list[Problem]:
        """Every problem of ``value`` (empty when it has the shape), document order."""
        if self._check is None:
            self._check = build(self.node)
        found = self._check(value)
        return found or []


def build(node: dict) -> Callable[[Any], list | None]:
    """The checker of one node: value -> None, or the list of its problems."""
    return _compiled(node)[0]


def holds(node: dict) -> Callable[[Any], bool]:
    """The verdict of one node alone: value -> True when it has the shape."""
    return _compiled(node)[2]


def _compiled(node: dict) -> tuple[Callable, Callable, Callable]:
    """(checker, report, verdict) of one node.

    The verdict is one generated function (``_generated``): it decides, and makes no
    problem, location or message. Only a value it refuses is walked by the reporting loops
    (``_members``, ``_each``...), which word every problem. Where no function can be
    generated (a shape nested deeper than Python's block limit), the report decides alone:
    one verdict and one report, never two verdicts. ``tests/engine/test_shapes.py`` checks
    on generated nodes and values that the verdict is True exactly when the report is
    empty."""
    names = type_list(node)
    allowed = _allowed(node)
    expected = " or ".join(names)
    scalar = _scalar_checks(node)
    members = [(name, _compiled(child)[0], not child.get("optional", False))
               for name, child in (node.get("members") or {}).items()]
    closed = bool(node.get("closed"))
    values = _compiled(node["values"])[0] if "values" in node else None
    items = _compiled(node["items"])[0] if "items" in node else None

    def report(value):
        if allowed is not None and type(value) not in allowed:
            return [Problem(f"is {json_type(value)}, expected {expected}", expected,
                            described(value))]
        problems = _first(scalar, value) if scalar else None
        if type(value) is dict:
            if members:
                problems = _members(value, members, problems)
            if closed:
                problems = _closed(value, members, problems)
            if values is not None:
                problems = _each(value.items(), values, problems)
        elif type(value) is list and items is not None:
            problems = _each(enumerate(value), items, problems)
        return problems

    fast: list = []  # the generated verdict, made on first use (a child's only if asked)

    def verdict(value) -> bool:
        if not fast:
            fast.append(_generated(node) or (lambda v: not report(v)))
        return fast[0](value)

    def check(value):
        return None if verdict(value) else report(value)
    return check, report, verdict


def _generated(node: dict) -> Callable[[Any], bool] | None:
    """The node's verdict as one generated Python function: every member test inline and
    every array a plain loop, so a valid document costs no call per element (0.07 s where
    composed closures took 0.10-0.15 s on an R=20 packet). Names and values reach the code
    only as constants of its namespace, never as text, so nothing of a spec is executed.
    None when the shape nests deeper than the generated code may (the closures decide)."""
    namespace: dict[str, Any] = {"_MISSING": _MISSING, "_NUMBERS": PYTHON_TYPES["number"],
                                 "dict": dict, "list": list, "type": type}
    lines = ["def verdict(v0):"]
    counter = [0]

    def constant(value) -> str:
        name = f"_c{len(namespace)}"
        namespace[name] = value
        return name

    def fresh() -> str:
        counter[0] += 1
        return f"v{counter[0]}"

    def emit(node: dict, var: str, indent: int) -> None:
        pad = " " * indent
        allowed = _allowed(node)
        if allowed is not None:
            lines.append(f"{pad}if type({var}) not in {constant(allowed)}: return False")
        for test in _scalar_checks(node, bounds=False):
            lines.append(f"{pad}if {constant(test)}({var}) is not None: return False")
        for key, op in (("min", ">="), ("max", "<=")):  # "not within": NaN is outside
            if key in node:
                lines.append(f"{pad}if type({var}) in _NUMBERS and not {var} {op} "
                             f"{constant(node[key])}: return False")
        object_body = "members" in node or "values" in node or node.get("closed")
        if object_body:
            only = allowed == (dict,)
            lines.append(f"{pad}if type({var}) is dict:" if not only else f"{pad}if True:")
            inner = pad + " "
            for name, child in (node.get("members") or {}).items():
                member = fresh()
                lines.append(f"{inner}{member} = {var}.get({constant(name)}, _MISSING)")
                if child.get("optional", False):
                    lines.append(f"{inner}if {member} is not _MISSING:")
                    emit(child, member, indent + 2)
                    lines.append(f"{inner} pass")
                else:
                    lines.append(f"{inner}if {member} is _MISSING: return False")
                    emit(child, member, indent + 1)
            if node.get("closed"):
                named = frozenset(node.get("members") or {})
                lines.append(f"{inner}if not {var}.keys() <= {constant(named)}: return False")
            if "values" in node:
                element = fresh()
                lines.append(f"{inner}for {element} in {var}.values():")
                emit(node["values"], element, indent + 2)
                lines.append(f"{inner} pass")
        if "items" in node:
            only = allowed == (list,)
            lines.append(f"{pad}if type({var}) is list:" if not only else f"{pad}if True:")
            element = fresh()
            lines.append(f"{pad} for {element} in {var}:")
            emit(node["items"], element, indent + 2)
            lines.append(f"{pad}  pass")

    emit(node, "v0", 1)
    lines.append(" return True")
    try:
        exec(compile("\n".join(lines), "<shape verdict>", "exec"), namespace)
    except (SyntaxError, RecursionError, MemoryError):  # too deeply nested to generate
        return None
    return namespace["verdict"]


def _allowed(node: dict) -> tuple[type, ...] | None:
    """The Python types a node's JSON types allow after strict parsing (None: any)."""
    names = type_list(node)
    return None if ANY in names else tuple(t for n in names for t in PYTHON_TYPES[n])


def _is_bare(node: dict) -> bool:
    """A node that is only a type (not ``any``): checking it is ``type(v) in allowed``."""
    return set(node) <= {"type", "description", "optional", "example"} \
        and ANY not in type_list(node)


def _first(checks, value) -> list | None:
    for test in checks:
        problem = test(value)
        if problem is not None:
            return [problem]
    return None


def _members(value: dict, members, problems):
    for name, check, required in members:
        member = value.get(name, _MISSING)
        if member is _MISSING:
            if required:
                problems = (problems or [])
                problems.append(Problem(f"required member {name!r} is missing",
                                        "present", "absent").at(name))
            continue
        found = check(member)
        if found:
            problems = (problems or []) + [problem.at(name) for problem in found]
    return problems


def _closed(value: dict, members, problems):
    named = {name for name, _, _ in members}
    for key in value:
        if key not in named:
            problems = (problems or [])
            problems.append(Problem(f"member {key!r} is not allowed here (closed object; "
                                    f"allowed: {', '.join(sorted(named)) or 'none'})",
                                    "absent", described(value[key])).at(key))
    return problems


def _each(pairs, check, problems):
    """Check every (key or index, element); at most MAX_PROBLEMS_PER_CONTAINER elements'
    problems are kept (a million bad elements are one clear report, not a million)."""
    bad = 0
    for key, element in pairs:
        found = check(element)
        if found:
            bad += 1
            if bad <= MAX_PROBLEMS_PER_CONTAINER:
                problems = (problems or []) + [problem.at(key) for problem in found]
    if bad > MAX_PROBLEMS_PER_CONTAINER:
        problems.append(Problem(f"{bad - MAX_PROBLEMS_PER_CONTAINER} more elements do not "
                                f"have their shape (not listed)", "the element shape",
                                f"{bad} elements without it"))
    return problems


def _scalar_checks(node: dict, *, bounds: bool = True) -> list[Callable[[Any], Problem | None]]:
    """The tests of a node's value constraints, each value -> Problem or None (``bounds``:
    with ``min``/``max``, which the generated verdict tests inline)."""
    checks = []
    if "one_of" in node:
        options = node["one_of"]

        def one_of(value):
            if not any(strict_equal(value, option) for option in options):
                return Problem(f"is {shown(value, 60)}, expected one of {shown(options)}",
                               options, value)
        checks.append(one_of)
    if bounds and ("min" in node or "max" in node):
        low, high = node.get("min"), node.get("max")

        def bounds(value):
            if type(value) not in PYTHON_TYPES["number"]:
                return None
            if low is not None and not value >= low:  # "not within": NaN is outside
                return Problem(f"is {shown(value)}, expected at least {low}", {"min": low},
                               value)
            if high is not None and not value <= high:
                return Problem(f"is {shown(value)}, expected at most {high}", {"max": high},
                               value)
        checks.append(bounds)
    if "length" in node:
        checks.append(_length(node["length"]))
    if "pattern" in node:
        pattern = node["pattern"]
        matches_whole = full_match(pattern)

        def matches(value):
            if type(value) is not str:
                return None
            try:
                if matches_whole(value):
                    return None
            except UnicodeEncodeError:  # a lone surrogate is no Unicode text
                pass
            return Problem(f"{shown(value, 60)} does not match /{pattern}/", pattern, value)
        checks.append(matches)
    return checks


def _length(declared) -> Callable[[Any], Problem | None]:
    low, high = (declared, declared) if isinstance(declared, int) else \
        (declared.get("min"), declared.get("max"))
    wanted = f"exactly {low}" if low == high and low is not None else " and ".join(
        part for part in (f"at least {low}" if low is not None else "",
                          f"at most {high}" if high is not None else "") if part)

    def length(value):
        if type(value) not in (list, str, dict):
            return None
        size = len(value)
        if (low is not None and size < low) or (high is not None and size > high):
            return Problem(f"has length {size}, expected {wanted}", declared, size)
    return length
