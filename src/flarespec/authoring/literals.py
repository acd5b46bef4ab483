"""Rule literals that repeat a constant: the drift a child spec cannot see.

A child spec changes a value by overriding its constant; a rule that spelled the value out
instead of writing ``${name}`` keeps checking the old value, silently. This finds, in the
spec file itself (not its parents, which are linted on their own), every literal of a
rule, document, iteration, identity, metric or pair entry that equals a constant's value,
and every path spelled from a constant holding a dotted key (``/a/b`` or ``$.a.b`` for
``a.b``), and says which ``${...}`` to write instead. These are warnings: two values may
be equal by coincidence.
"""

from __future__ import annotations

import json
import re

from flarespec.spec.errors import WARNING, SpecIssue
from flarespec.spec.load import SpecFile
from flarespec.spec.resolve import ResolvedSpec
from flarespec.spec.tokens import DOTTED_KEY, PATH_FILTERS

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
    return found


class _ConstantIndex:
    """Every constant value by what it looks like, and the dotted keys' path forms."""

    def __init__(self, constants: dict):
        self.by_value: dict[str, list[str]] = {}
        self.paths: list[tuple[re.Pattern, str]] = []
        self.formats: list[tuple[str, str]] = []  # (shape "r{}.{}", "${name}")
        self._add(constants, "")

    def _add(self, value, name: str) -> None:
        if name and _worth_matching(value):
            self.by_value.setdefault(_key(value), []).append(name)
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
# constant (spec/tokens.py), a ``{binding.field}`` placeholder (engine/paths.py
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
