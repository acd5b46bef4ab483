"""Rule literals that repeat a constant: the drift a child spec cannot see.

A child spec changes a value by overriding its constant; a rule that spelled the value out
instead of writing ``${name}`` keeps checking the old value, silently. This finds, in the
spec file itself (not its parents, which are linted on their own), every literal of a
rule, document, iteration, identity, metric or pair entry that equals a constant's value,
and every path spelled from a constant holding a dotted key (``/a/b`` or ``$.a.b`` for
``a.b``), and says which ``${...}`` to write instead. Keys too, where a key is a name of
data: a shape member, an ``includes`` member or an identity's field named
as a constant's text, and a shape member standing at the member path a dotted-key constant
names (``analysis: {members: {rate: ...}}`` for ``key: analysis.rate``: write
``${field.key}:`` beside ``analysis``). These are warnings: two values may be equal by
coincidence.
"""

from __future__ import annotations

import json
import re

from flarespec.compiler.errors import WARNING, SpecIssue
from flarespec.compiler.load import SpecFile
from flarespec.compiler.resolve import ResolvedSpec
from flarespec.compiler.tokens import DOTTED_KEY, PATH_FILTERS

CODE = "spec.literal-equals-constant"
# Numbers below this (in magnitude) are too common to mean a constant: 0, 1, 2, 16, 64 …
MIN_NUMBER = 100
# Strings shorter than this (``ns``, ``r``) are too common to mean a constant.
MIN_TEXT = 3
_SECTIONS = ("applies_to", "documents", "iterations", "identities", "rules", "metric", "pair")
_PROSE = frozenset({"description", "clause", "title", "limits", "since", "changed_in", "id",
                    "renamed_from", "requires", "for_each", "each", "parent", "rule", "loader",
                    "hook", "identity", "label", "message"})


def literal_constant_warnings(spec: SpecFile | ResolvedSpec) -> list[SpecIssue]:
    """Warnings (code ``spec.literal-equals-constant``) for the literals of the spec file
    that equal a constant's value or spell a path from a dotted-key constant.

    A ``ResolvedSpec`` checks its own file (``chain[0]``) against the merged constants (a
    child's literal may repeat a parent's constant); a ``SpecFile`` against its own.
    """
    if isinstance(spec, ResolvedSpec):
        data, constants = spec.chain[0].data, spec.data.get("constants", {})
    else:
        data, constants = spec.data, spec.data.get("constants", {})
    index = _ConstantIndex(constants)
    found: list[SpecIssue] = []
    for section in _SECTIONS:
        if section in data:
            _walk(data[section], data.key_marks.get(section), index, found)
    _key_warnings(data, index, found)
    return found


class _ConstantIndex:
    """Every constant value by what it looks like, and the dotted keys' path forms."""

    def __init__(self, constants: dict):
        self.by_value: dict[str, list[str]] = {}
        self.paths: list[tuple[re.Pattern, str]] = []
        self.formats: list[tuple[str, str]] = []  # (shape "r{}.{}", "${name}")
        # a name for a key: text of a constant that is no list position (a key names a
        # member; `${kinds.0}` names a position, which a key never means)
        self.names: dict[str, list[str]] = {}
        self.member_paths: list[tuple[tuple[str, ...], str]] = []  # (("a", "b"), name)
        self._add(constants, "")

    def _add(self, value, name: str) -> None:
        if name and _worth_matching(value):
            self.by_value.setdefault(_key(value), []).append(name)
        if name and isinstance(value, str) and _worth_matching(value) and not _indexed(name):
            self.names.setdefault(value, []).append(name)
            if "." in value and DOTTED_KEY.fullmatch(value):
                self.member_paths.append((tuple(value.split(".")), name))
        if isinstance(value, dict):
            for key, item in value.items():
                self._add(item, f"{name}.{key}" if name else key)
        elif isinstance(value, list):
            for position, item in enumerate(value):
                self._add(item, f"{name}.{position}")
        elif isinstance(value, str) and "." in value and DOTTED_KEY.fullmatch(value):
            for form, build in PATH_FILTERS.items():
                spelled = build(value).lstrip("$")
                self.paths.append((re.compile(re.escape(spelled) + r"(?![A-Za-z0-9_])"),
                                   f"${{{name}|{form}}}"))
        elif isinstance(value, str) and _is_format(value):
            self.formats.append((_shape(value), f"${{{name}}}"))

    def suggestions(self, value) -> list[str]:
        names = self.by_value.get(_key(value), []) if _worth_matching(value) else []
        # a named member reads better than a list position: ${prefix.seed_kind}, not ${m.7.kind}
        return [f"${{{n}}}" for n in sorted(names, key=lambda n: (_indexed(n), len(n), n))]


def _worth_matching(value) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return abs(value) >= MIN_NUMBER
    if isinstance(value, str):
        return len(value) >= MIN_TEXT and "${" not in value
    return bool(value) and not _holds_substitution(value)


def _holds_substitution(value) -> bool:
    if isinstance(value, str):
        return "${" in value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_holds_substitution(item) for item in items)


def _key(value) -> str:
    return json.dumps(value, sort_keys=True)


def _indexed(name: str) -> bool:
    return any(part.isdigit() for part in name.split("."))


def _walk(value, mark, index: _ConstantIndex, found: list) -> None:
    suggestions = index.suggestions(value)
    if suggestions:
        others = f" (or {', '.join(suggestions[1:3])})" if len(suggestions) > 1 else ""
        found.append(SpecIssue(f"{_shown(value)} equals a constant: use {suggestions[0]}{others}",
                               mark, CODE, WARNING))
        return
    if isinstance(value, str):
        _spelled_paths(value, mark, index, found)
    elif isinstance(value, dict):
        marks = getattr(value, "key_marks", {})
        for key, item in value.items():
            if key not in _PROSE:
                _walk(item, marks.get(key, mark), index, found)
    elif isinstance(value, list):
        marks = getattr(value, "item_marks", [mark] * len(value))
        for item, item_mark in zip(value, marks):
            _walk(item, item_mark, index, found)


# ------------------------------------------------------------------ keys naming data
# Where a key is a name of data, not a word of the spec language: a shape's members, the
# members an `includes` argument lists, an identity's fields (docs/spec-language.md,
# constants). Keys elsewhere (a rule's, a kind's, a hook's arguments) are the language's.

def _key_warnings(data: dict, index: _ConstantIndex, found: list) -> None:
    if not index.names:
        return
    for node in (data.get("shapes") or {}).values():
        _shape_keys(node, (), index, found)
    for section in ("applies_to", "rules", "metric"):
        _includes_keys(data.get(section), index, found)
    for entry in (data.get("identities") or {}).values():
        _identity_keys(entry, index, found)


def _shape_keys(node, trail: tuple, index: _ConstantIndex, found: list) -> None:
    """The member keys of a shape node, each with the member path from the node a
    ``members`` chain starts at (``items`` and ``values`` start a new one)."""
    if not isinstance(node, dict):
        return
    for key in ("items", "values"):
        _shape_keys(node.get(key), (), index, found)
    members = node.get("members")
    if not isinstance(members, dict):
        return
    for name, child in members.items():
        if isinstance(name, str) and "${" not in name:
            at = getattr(members, "key_marks", {}).get(name)
            # a member at a constant's path is told so; its name alone is then no news
            if not _member_path(trail + (name,), at, index, found):
                _named_key(name, at, "member key", index, found)
        _shape_keys(child, trail + (name,), index, found)


def _member_path(path: tuple, at, index: _ConstantIndex, found: list) -> bool:
    """Warn where the member at ``path`` stands at a dotted-key constant's member path;
    whether it does."""
    before = len(found)
    for steps, name in index.member_paths:
        if len(path) >= len(steps) and path[-len(steps):] == steps:
            holder = path[-len(steps)]
            found.append(SpecIssue(
                f"member {path[-1]!r} stands at {'.'.join(steps)!r}, the member path of a "
                f"constant: declare it once as the key ${{{name}}} beside {holder!r} (a "
                f"${{...}} member key holding a dotted path declares the member there)",
                at, CODE, WARNING))
    return len(found) > before


def _named_key(key: str, at, what: str, index: _ConstantIndex, found: list) -> None:
    names = index.names.get(key) if len(key) >= MIN_TEXT else None
    if names:
        best = sorted(names, key=lambda n: (len(n), n))
        found.append(SpecIssue(f"{what} {key!r} equals a constant: write the key as "
                               f"${{{best[0]}}}", at, CODE, WARNING))


def _includes_keys(value, index: _ConstantIndex, found: list) -> None:
    """The member names of every ``includes`` argument below ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "includes" and isinstance(item, dict):
                marks = getattr(item, "key_marks", {})
                for name in item:
                    if isinstance(name, str) and "${" not in name:
                        _named_key(name, marks.get(name), "includes member", index, found)
            if key not in _PROSE:
                _includes_keys(item, index, found)
    elif isinstance(value, list):
        for item in value:
            _includes_keys(item, index, found)


def _identity_keys(entry, index: _ConstantIndex, found: list) -> None:
    """The field names of a composite identity (a mapping of fields, not a reference)."""
    if not isinstance(entry, dict) or "ref" in entry:
        return
    marks = getattr(entry, "key_marks", {})
    for name, item in entry.items():
        if isinstance(name, str) and "${" not in name:
            _named_key(name, marks.get(name), "identity field", index, found)
        _identity_keys(item, index, found)


def _spelled_paths(text: str, mark, index: _ConstantIndex, found: list) -> None:
    for pattern, replacement in index.paths:
        spelled = pattern.search(text)
        if spelled:
            found.append(SpecIssue(f"{text!r} spells the path {spelled.group(0)!r} of a "
                                   f"constant: use {replacement}", mark, CODE, WARNING))
    for shape, replacement in index.formats:
        if shape in _shape(text):
            found.append(SpecIssue(f"{text!r} spells the format {replacement} with its own "
                                   f"placeholders: build the value from {replacement}",
                                   mark, CODE, WARNING))


# A slot of a format, in any of the three notations a value is built with: a ``${...}``
# constant (compiler/tokens.py), a ``{binding.field}`` placeholder (engine/paths.py
# ``compile_template``) and the empty ``{}`` of a format constant (``r{}.{}``). Neither grammar
# reads the other two (nor an empty ``{}``), and this compares shapes only: a malformed
# token still stands for a slot, so one loose pattern here rather than either grammar.
_PLACEHOLDER = re.compile(r"\$?\{[^{}]*\}")


def _is_format(text: str) -> bool:
    """A format constant: placeholders and at least two characters of its own (``r{}.{}``),
    so that a bare ``{a}.{b}`` does not match every dotted template."""
    return bool(_PLACEHOLDER.search(text)) and len(_PLACEHOLDER.sub("", text)) >= 2


def _shape(text: str) -> str:
    """The text with every placeholder and ``${...}`` reduced to ``{}``."""
    return _PLACEHOLDER.sub("{}", text)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
