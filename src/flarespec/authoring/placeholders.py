"""Lint of binding placeholders: ``{group.knd}`` where the iteration's values have no ``knd``.

Whether a value read from the evidence has a field is known only at run time, so a
placeholder like ``{group.knd}`` used to pass lint and fail only when a packet was checked.
Two things are knowable before that:

* an iteration over a constant (``over: "constants:$.phases[*]"``) has values the spec
  itself holds: a placeholder field that some of them lack can never be filled — an error;
* for an iteration over the evidence, the fields the spec reads elsewhere (other
  placeholders, references such as ``group:$.kind``) are the ones its authors know about: a
  placeholder field read nowhere else is a warning, with a did-you-mean among those fields.
"""

from __future__ import annotations

import re
from collections import Counter

from flarespec.engine.paths import CompiledJsonPath, PathSyntaxError, compile_template
from flarespec.engine.placeholders import parse_placeholder
from flarespec.compiler.errors import ERROR, WARNING, SpecIssue, did_you_mean
from flarespec.compiler.references import referenced_members
from flarespec.compiler.resolve import ResolvedSpec
from flarespec.compiler.yamlmarks import marked_strings

UNFILLABLE = "spec.unfillable-placeholder"
UNKNOWN_FIELD = "spec.placeholder-field-unread"
IN_LITERAL = "spec.placeholder-in-literal"
# a JSONPath's string literals (RFC 9535: quoted, backslash escapes), and a brace pair in
# one, whose inner text engine/placeholders.py parses (the one placeholder grammar)
_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_BRACES = re.compile(r"\{([^{}]*)\}")

_SECTIONS = ("documents", "iterations", "rules", "metric", "identities", "applies_to")


def placeholder_issues(resolved: ResolvedSpec) -> list[SpecIssue]:
    """Every placeholder field of an iteration binding that cannot or may not be filled."""
    data = resolved.data
    iterations = data.get("iterations") or {}
    strings = [(text, mark) for section in _SECTIONS
               for text, mark in marked_strings(data.get(section), _key_mark(data, section))]
    read = Counter()
    for text, _ in strings:
        read.update(_placeholders(text, iterations))
        read.update((name, field) for name, field in referenced_members(text)
                    if name in iterations)
    constant_fields = {name: _constant_fields(spec, data.get("constants") or {})
                       for name, spec in iterations.items() if isinstance(spec, dict)}
    issues, seen = [], set()
    for text, mark in strings:
        for name, field in _placeholders(text, iterations):
            if (name, field, mark) in seen:
                continue
            seen.add((name, field, mark))
            issue = _judge(name, field, text, mark, constant_fields.get(name), read)
            if issue is not None:
                issues.append(issue)
    return issues


def literal_placeholder_issues(resolved: ResolvedSpec) -> list[SpecIssue]:
    """A warning for every binding placeholder written inside a string literal of a
    JSONPath reference (``$.samples[?@.name=='{family.name}_count']``): braces in a literal
    are text, so the filter compares with those characters and, on real evidence, selects
    nothing; only a whole member segment (``.{family.name}``) is filled per binding."""
    data = resolved.data
    iterations = data.get("iterations") or {}
    issues = []
    for section in _SECTIONS:
        for text, mark in marked_strings(data.get(section), _key_mark(data, section)):
            _, separator, path = text.partition(":")
            if not separator or not path.startswith("$") or "{" not in path:
                continue
            for literal in _LITERAL.findall(path):
                written = [found.group(0) for found in _BRACES.finditer(literal)
                           if _binding(found.group(1)) in iterations]
                if written:
                    issues.append(SpecIssue(
                        f"{text!r}: the string literal {literal} holds {', '.join(written)}, "
                        f"which is text there, never filled: the path compares with those "
                        f"characters. A binding fills only a whole member segment "
                        f"(.{written[0]}, docs/spec-language.md, \"Names in a JSONPath\")",
                        mark, IN_LITERAL, WARNING))
    return issues


def _binding(inner: str) -> str | None:
    """The iteration a placeholder's inner text reads, or None when it is no binding
    placeholder (a reference, or text that is no placeholder at all)."""
    try:
        return parse_placeholder(inner).name
    except PathSyntaxError:
        return None


def _judge(name, field, text, mark, fields: set | None, read: Counter) -> SpecIssue | None:
    if fields is not None:  # the iteration runs over a constant: its fields are known
        if field in fields:
            return None
        return SpecIssue(f"{text!r}: {{{name}.{field}}} can never be filled: the values of "
                         f"iteration {name!r} (a constant) have no field {field!r}"
                         f"{did_you_mean(field, sorted(fields))}", mark, UNFILLABLE, ERROR)
    if read[(name, field)] > 1:
        return None
    known = sorted({f for (n, f) in read if n == name and f != field})
    return SpecIssue(f"{text!r}: field {field!r} of iteration {name!r} is read nowhere else "
                     f"in the spec, so nothing checks that its values have it"
                     f"{did_you_mean(field, known)}", mark, UNKNOWN_FIELD, WARNING)


def _placeholders(text: str, iterations) -> list[tuple[str, str]]:
    """(iteration, field) of every binding placeholder ``{group.kind}`` of ``text``, as the
    engine parses it (engine/paths.py ``compile_template``, engine/placeholders.py): only a
    placeholder with a member path reads a field (its first member); a reference or the
    binding's metadata reads none."""
    if "{" not in text:
        return []
    try:
        placeholders = compile_template(text).placeholders
    except PathSyntaxError:
        return []  # no template: the compiler refuses it where it stands
    return [(placeholder.name, placeholder.members[0]) for placeholder in placeholders
            if placeholder.name in iterations and placeholder.members]


def _constant_fields(iteration: dict, constants: dict) -> set | None:
    """The fields every value of an iteration over a constant has; None when the iteration
    reads the evidence (or its values are not all mappings)."""
    over = iteration.get("over")
    if not isinstance(over, str) or not over.startswith("constants:$"):
        return None
    try:
        values = [match.value for match in CompiledJsonPath(over[len("constants:"):])
                  .find(constants)]
    except (PathSyntaxError, ValueError):
        return None  # the compiler reports a broken path
    if not values or not all(isinstance(value, dict) for value in values):
        return None
    return set.intersection(*(set(value) for value in values))


def _key_mark(data, key):
    return getattr(data, "key_marks", {}).get(key, getattr(data, "mark", None))
