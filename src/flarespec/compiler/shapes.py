"""Compiling the ``shapes`` of a spec: named shapes expanded into plain nodes, every key checked.

A node as a spec writes it is a mapping (engine/shapes.py lists its keys) or a string: a type
name (``integer``) or the name of another entry of ``shapes`` (``sha256``). ``use: NAME`` in a
mapping starts from that named shape and overrides it key by key (``members`` merged member
by member), so a nullable copy of a shape is ``{use: usage, type: [null, object]}``. Problems
are reported at the spec's file:line:column with code ``spec.document-shape``.
"""

from __future__ import annotations

from typing import Any, Callable

from flarespec.engine.values import compiled_pattern
from flarespec.engine.shapes import AUTHORING_KEYS, DROPPED, NODE_KEYS, PYTHON_TYPES, TYPE_NAMES
from flarespec.compiler.errors import did_you_mean
from flarespec.compiler.yamlmarks import plain

CODE = "spec.document-shape"


class ShapeCompiler:
    def __init__(self, named: dict, issue: Callable[..., None]):
        self.named = named or {}
        self.issue = issue  # (message, container, key, code)
        self._expanded: dict[str, dict | None] = {}
        self._expanding: list[str] = []
        for name in self.named:
            if name in TYPE_NAMES:
                issue(f"shape {name!r} has the name of a type; choose another name",
                      self.named, name, CODE)

    def document(self, name: str, container, key) -> dict | None:
        """The expanded node of the named shape a document declares, or None (reported)."""
        if name not in self.named:
            self.issue(f"shape {name!r} is not declared in shapes"
                       f"{did_you_mean(name, self.named)}", container, key, CODE)
            return None
        return self.named_node(name)

    def all_named(self) -> None:
        """Check every named shape, used by a document or not."""
        for name in self.named:
            self.named_node(name)

    def named_node(self, name: str) -> dict | None:
        if name in self._expanded:
            return self._expanded[name]
        if name in self._expanding:
            cycle = " -> ".join([*self._expanding[self._expanding.index(name):], name])
            self.issue(f"shape {name!r} refers to itself ({cycle}); shapes are finite trees",
                       self.named, name, CODE)
            return None
        self._expanding.append(name)
        node = self.node(self.named[name], self.named, name)
        self._expanding.pop()
        self._expanded[name] = node
        return node

    def node(self, source: Any, container, key) -> dict | None:
        if source is None:  # YAML's bare `null`: the type null
            source = "null"
        if isinstance(source, str):
            if source in TYPE_NAMES:
                return {"type": source}
            if source in self.named:
                return self.named_node(source)
            self.issue(f"{source!r} is neither a type ({', '.join(TYPE_NAMES)}) nor a named "
                       f"shape{did_you_mean(source, [*TYPE_NAMES, *self.named])}",
                       container, key, CODE)
            return None
        if not isinstance(source, dict):
            self.issue(f"a shape is a mapping or a type or shape name, got {plain(source)!r}",
                       container, key, CODE)
            return None
        result: dict = {}
        if "use" in source:
            base = self.node(source["use"], source, "use") if isinstance(source["use"], str) \
                else self._bad(source, "use", "the name of a shape")
            result = dict(base or {})
        for name, value in source.items():
            if name == DROPPED and getattr(source, "key_marks", {}).get(name, name) is None:
                result[name] = [*result.get(name, []), *value]  # the resolver's: unmarked
                continue
            if name in AUTHORING_KEYS:
                if name == "drop_members":
                    self.issue("drop_members removes members a parent's shape declares; "
                               "nothing of that name is inherited here", source, name, CODE)
                continue
            if name not in NODE_KEYS:
                self.issue(f"unknown shape key {name!r}; allowed: "
                           f"{', '.join((*NODE_KEYS, *AUTHORING_KEYS))}"
                           f"{did_you_mean(name, NODE_KEYS)}", source, name, CODE)
                continue
            checked = self.key(name, value, source)
            if checked is _INVALID:
                continue
            if name == "members" and isinstance(result.get("members"), dict):
                checked = {**result["members"], **checked}
            result[name] = checked
        if DROPPED in result:  # a member declared again (over `use`) is written again
            result[DROPPED] = [n for n in result[DROPPED] if n not in result.get("members", {})]
            if not result[DROPPED]:
                del result[DROPPED]
        self._check_bounds(result, source)
        if isinstance(result.get("example"), _Example):
            result["example"] = result["example"].value
            self._check_example(result, source)
        return result

    def _check_bounds(self, node: dict, source) -> None:
        """A node's ``min`` above its ``max`` (after ``use``) leaves no number its shape."""
        if "min" in node and "max" in node and node["min"] > node["max"]:
            self.issue(f"shape min {node['min']!r} is above max {node['max']!r}: no number has "
                       f"this shape", source, "min" if "min" in source else "max", CODE)

    def _check_example(self, node: dict, source) -> None:
        """A writer writes the example as the member's value: it must have the shape."""
        from flarespec.engine.shapes import build

        problems = build({k: v for k, v in node.items() if k != "example"})(node["example"])
        if problems:
            first = problems[0]
            self.issue(f"example {plain(node['example'])!r} does not have its own shape: "
                       f"{first.location} {first.message}", source, "example", CODE)

    def key(self, name: str, value: Any, source) -> Any:
        if name == "type":
            value = _null_named(value)
            names = [value] if isinstance(value, str) else value
            if not isinstance(names, list) or not names or \
                    any(not isinstance(n, str) or n not in TYPE_NAMES for n in names):
                return self._bad(source, name, f"one or a list of {', '.join(TYPE_NAMES)}")
            return value if isinstance(value, str) else list(value)
        if name == "members":
            if not isinstance(value, dict):
                return self._bad(source, name, "a mapping of member name to shape")
            members = {}
            for member, child in value.items():
                node = self.node(child, value, member)
                if node is not None:
                    members[member] = node
            return members
        if name in ("values", "items"):
            node = self.node(value, source, name)
            return _INVALID if node is None else node
        if name in ("optional", "closed"):
            return value if isinstance(value, bool) else self._bad(source, name, "true or false")
        if name in ("min", "max"):
            return value if type(value) in PYTHON_TYPES["number"] \
                else self._bad(source, name, "a number")
        if name == "length":
            return self._length(value, source)
        if name == "pattern":
            return self._pattern(value, source)
        if name == "one_of":
            return plain(value) if isinstance(value, list) and value \
                else self._bad(source, name, "a non-empty list of values")
        if name == "example":
            return _Example(plain(value))
        return value if isinstance(value, str) else self._bad(source, name, "text")  # description

    def _length(self, value, source):
        def count(v):
            return type(v) is int and v >= 0
        if count(value):
            return value
        if isinstance(value, dict) and value and set(value) <= {"min", "max"} \
                and all(count(v) for v in value.values()):
            if value.get("min", 0) > value.get("max", value.get("min", 0)):
                return self._bad(source, "length", "{min, max} with min at most max")
            return dict(value)
        return self._bad(source, "length", "a whole number, or {min, max} of whole numbers")

    def _pattern(self, value, source):
        if not isinstance(value, str):
            return self._bad(source, "pattern", "a regular expression string (RE2)")
        try:
            compiled_pattern(value)
        except Exception as error:  # re2.error: the message says why
            reason = error.args[0] if error.args else error
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            return self._bad(source, "pattern", f"an RE2 pattern ({reason})")
        return value

    def _bad(self, source, name: str, wanted: str):
        self.issue(f"shape key {name!r} wants {wanted}, got {plain(source[name])!r}",
                   source, name, CODE)
        return _INVALID


_INVALID = None


class _Example:
    """An ``example`` value while its node is compiled (its own value may be null)."""

    def __init__(self, value):
        self.value = value


def _null_named(value):
    """YAML reads a bare ``null`` as None: in a type it names the type null."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return ["null" if name is None else name for name in value]
    return value
