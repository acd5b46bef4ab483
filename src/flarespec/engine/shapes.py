"""Document shapes: the declared structure of a loaded document, checked before any rule reads it.

A spec declares, for every document it loads, the JSON types of the members its rules read
(``shapes:`` in a spec; docs/spec-language.md). The engine checks a document's shape right
after loading it; a document whose shape does not hold is reported once per problem under the
document's ``<rule>.shape`` and is then unavailable, as a document that failed to load: every
rule that needs it is skipped for that binding, so a wrong type never reaches a rule (no
cascade) and never passes unseen.

A shape node (after ``spec.compile`` expanded named shapes and ``use``) is a mapping:

``type``      one JSON type name or a list of them: null, boolean, integer (a JSON integer
              token: never a boolean, never ``1.0``), number (integer or finite float),
              string, array (never an object), object; ``any`` accepts every value
``members``   object members by name, each a node; required unless ``optional: true``
``closed``    true: an object member not named in ``members`` is a violation
``values``    the node every member value of an object satisfies (an object used as a map)
``items``     the node every element of an array satisfies
``length``    an array's or string's length: an integer, or ``{min, max}``
``min/max``   inclusive bounds of a number
``pattern``   an RE2 pattern a string matches whole
``one_of``    the allowed values (type-strict)

One function per node decides and reports: it returns None when the value has the shape,
else the list of problems, so the verdict and the report cannot drift. Compiled once per
process from the plain node (a compiled spec is pickled without its closures).
"""

from __future__ import annotations

from typing import Any, Callable

from flarespec.engine.kinds import compiled_pattern, json_type, strict_equal
from flarespec.engine.paths import child_location
from flarespec.engine.report import shown

ANY = "any"
SHAPE_RULE = "shape"  # a document's shape violations: <document rule>.shape
# the Python types of each JSON type after strict parsing: `type(v) in ...` keeps bool apart
PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),), "boolean": (bool,), "integer": (int,), "number": (int, float),
    "string": (str,), "array": (list,), "object": (dict,)}
TYPE_NAMES = (*PYTHON_TYPES, ANY)
NODE_KEYS = ("type", "members", "optional", "closed", "values", "items", "length", "min",
             "max", "pattern", "one_of", "description")
# keys of a node as a spec file writes it, resolved away before a shape is built
AUTHORING_KEYS = ("use", "drop_members")
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
    """A value's JSON type and text, for a message: ``number 528.0``, ``object {"0": …}``."""
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
    names = type_list(node)
    allowed = None if ANY in names else tuple(t for n in names for t in PYTHON_TYPES[n])
    expected = " or ".join(names)
    scalar = _scalar_checks(node)
    members = [(name, build(child), not child.get("optional", False))
               for name, child in (node.get("members") or {}).items()]
    closed = bool(node.get("closed"))
    values = build(node["values"]) if "values" in node else None
    items = _items(node["items"]) if "items" in node else None

    def check(value):
        if allowed is not None and type(value) not in allowed:
            return [Problem(f"is {json_type(value)}, expected {expected}", expected,
                            described(value))]
        problems = None
        if scalar:
            problems = _first(scalar, value)
        if type(value) is dict:
            if members:
                problems = _members(value, members, problems)
            if closed:
                problems = _closed(value, members, problems)
            if values is not None:
                problems = _each(value.items(), values, problems)
        elif type(value) is list and items is not None:
            problems = items(value, problems)
        return problems
    return check


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


def _items(node: dict):
    """The array-element check. Elements that only need a type (token ids: integers) are
    tested in one C-level pass first; only an array with a bad element is walked."""
    check = build(node)
    names = type_list(node)
    plain = set(node) <= {"type", "description"} and ANY not in names
    allowed = tuple(t for n in names for t in PYTHON_TYPES[n]) if plain else ()
    lower = node.get("min") if set(node) <= {"type", "description", "min"} else None
    if plain or (lower is not None and names == ["integer"]):
        if lower is None:
            def items(value: list, problems):
                for element in value:
                    if type(element) not in allowed:
                        return _each(enumerate(value), check, problems)
                return problems
        else:
            def items(value: list, problems):
                for element in value:
                    if type(element) is not int or element < lower:
                        return _each(enumerate(value), check, problems)
                return problems
        return items
    return lambda value, problems: _each(enumerate(value), check, problems)


def _scalar_checks(node: dict) -> list[Callable[[Any], Problem | None]]:
    checks = []
    if "one_of" in node:
        options = node["one_of"]

        def one_of(value):
            if not any(strict_equal(value, option) for option in options):
                return Problem(f"is {shown(value, 60)}, expected one of {shown(options)}",
                               options, value)
        checks.append(one_of)
    if "min" in node or "max" in node:
        low, high = node.get("min"), node.get("max")

        def bounds(value):
            if type(value) not in (int, float):
                return None
            if low is not None and value < low:
                return Problem(f"is {shown(value)}, expected at least {low}", {"min": low},
                               value)
            if high is not None and value > high:
                return Problem(f"is {shown(value)}, expected at most {high}", {"max": high},
                               value)
        checks.append(bounds)
    if "length" in node:
        checks.append(_length(node["length"]))
    if "pattern" in node:
        pattern = node["pattern"]
        program = compiled_pattern(pattern)

        def matches(value):
            if type(value) is not str:
                return None
            try:
                if program.fullmatch(value):
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
