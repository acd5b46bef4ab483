"""A child's constant written out where a parent computes it, disagreeing: a fact restated.

A parent may compute a constant from others (``size: "${base.size + extra}"`` in a row of
a list, docs/spec-language.md, "Derived constants"). A child that restates the constant
holding it (a whole list, to change one row) with the value written out keeps that value
when the constants it was computed from change: a new ``base.size`` in the child while its
row still holds the old sum. For every literal of the linted file's own
constants that stands where the nearest ancestor defining that constant writes a ``${...}``,
this computes the ancestor's text with the spec's constants and warns (``CODE``) where the
literal disagrees with it: write the ``${...}``, or change what it reads. A literal that
agrees passes the cross-check (it is restated, and docs/editing-specs.md says to write the
``${...}`` instead). Where a literal stands: a mapping member by its key;
a list item by its first member when every item of both lists is a mapping with that first
member, distinct in each list (``name: big``), else by position. Warnings: a child
may mean a value that no longer follows the formula, but it should say so by changing the
constants it reads.
"""

from __future__ import annotations

from flarespec.compiler.errors import WARNING, SpecIssue
from flarespec.compiler.resolve import ResolvedSpec
from flarespec.compiler.tokens import TokenError, lookup_constant, substitute
from flarespec.compiler.yamlmarks import plain

CODE = "spec.constant-restated"
_ABSENT = object()


def restated_constant_warnings(resolved: ResolvedSpec) -> list[SpecIssue]:
    """Warnings for the literals of the spec file's own constants (``chain[0]``) standing
    where an ancestor computes the value (see the module docstring)."""
    own = resolved.chain[0].data.get("constants")
    if len(resolved.chain) < 2 or not isinstance(own, dict):
        return []
    constants = resolved.data.get("constants", {})
    found: list[SpecIssue] = []
    for name, value in own.items():
        parent, layer = _inherited(resolved, name)
        if parent is not _ABSENT:
            _compare(value, parent, (name,), own.key_marks.get(name), constants, layer, found)
    return found


def _inherited(resolved: ResolvedSpec, name: str):
    """(value, spec id) of constant ``name`` in the nearest ancestor that defines it."""
    for layer in resolved.chain[1:]:
        constants = layer.data.get("constants")
        if isinstance(constants, dict) and name in constants:
            return constants[name], layer.id
    return _ABSENT, None


def _compare(child, parent, path: tuple, mark, constants: dict, layer: str,
             found: list) -> None:
    if isinstance(parent, str) and "${" in parent:
        if not (isinstance(child, str) and "${" in child):
            _check(plain(child), parent, path, mark, constants, layer, found)
    elif isinstance(child, dict) and isinstance(parent, dict):
        marks = getattr(child, "key_marks", {})
        for key, item in child.items():
            if key in parent:
                _compare(item, parent[key], path + (key,), marks.get(key, mark), constants,
                         layer, found)
    elif isinstance(child, list) and isinstance(parent, list):
        marks = getattr(child, "item_marks", [mark] * len(child))
        for index, item, counterpart in _pairs(child, parent):
            _compare(item, counterpart, path + (str(index),), marks[index], constants, layer,
                     found)


def _check(literal, text: str, path: tuple, mark, constants: dict, layer: str,
           found: list) -> None:
    try:
        computed = substitute(text, lambda dotted: lookup_constant(constants, dotted))
    except (KeyError, TokenError):  # resolution reports what cannot be computed
        return
    if literal != computed:
        found.append(SpecIssue(
            f"constants {'.'.join(path)} is {literal!r}, but {layer} computes it as {text!r}, "
            f"which is {plain(computed)!r} with this spec's constants: write {text!r} (it "
            f"then follows them), or change the constants it reads", mark, CODE, WARNING))


def _pairs(child: list, parent: list):
    """(index in child, child item, parent item) of the items that stand at one place."""
    key = _identity(child) if _identity(child) == _identity(parent) else None
    if key is None:
        yield from ((index, *pair) for index, pair in enumerate(zip(child, parent)))
        return
    by_identity = {item[key]: item for item in parent}
    for index, item in enumerate(child):
        if item[key] in by_identity:
            yield index, item, by_identity[item[key]]


def _identity(items: list) -> str | None:
    """The first member every item (a mapping) starts with, its values distinct scalars."""
    if not items or not all(isinstance(item, dict) and item for item in items):
        return None
    key = next(iter(items[0]))
    values = [item.get(key, _ABSENT) for item in items]
    if not all(next(iter(item)) == key for item in items) or not all(
            isinstance(value, (str, int)) and not isinstance(value, bool) for value in values):
        return None
    return key if len(set(values)) == len(values) else None
