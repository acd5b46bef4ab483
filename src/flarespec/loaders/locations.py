"""Locations: the one syntax of a place inside a JSON-like value, written and read back.

A location is a normalised JSONPath string: ``$`` and then one step a key, ``.name`` for a
member whose name is an identifier, ``['any name']`` for any other member (``\\`` and ``'``
escaped by a backslash), ``[3]`` for a list index: ``$.a['b c'][0]``. The engine writes every
match's location with :func:`child_location`; messages, the line finder of the loaders
(:mod:`flarespec.loaders.locate`) and the engine's expected-value finder read locations
back with :func:`next_step` / :func:`location_keys`, so there is one grammar, and
``location_keys(location_of(keys)) == keys`` for every key list (tested).

A reference's text may also hold a wildcard step (``[*]`` or ``.*``): a reader that accepts
one asks for it (``wildcards=True``) and gets :data:`STAR` for it.

This module lives in the lowest room (loaders) so that every room may import it.
"""

from __future__ import annotations

import re
from typing import Any

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # fullmatch: "a\n" is no identifier
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\['((?:[^'\\]|\\.)*)'\]|\[(-?[0-9]+)\]", re.S)
_WILDCARD = re.compile(r"\[\*\]|\.\*")
_ESCAPED = re.compile(r"\\(.)", re.S)


class _Star:
    """The wildcard step of a reference's text (``[*]``, ``.*``)."""

    def __repr__(self) -> str:
        return "STAR"


STAR = _Star()


def child_location(base: str, key: Any) -> str:
    """The location of member or index ``key`` of the value at ``base``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    if IDENTIFIER.fullmatch(key):
        return f"{base}.{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{base}['{escaped}']"


def location_of(keys, base: str = "$") -> str:
    """The location of the place reached from ``base`` by ``keys`` (str members, int indices)."""
    for key in keys:
        base = child_location(base, key)
    return base


def next_step(text: str, position: int = 0, *, wildcards: bool = False) -> tuple[Any, int] | None:
    """The step of ``text`` at ``position`` and where the next one begins, or None when no
    step starts there: a member name (str), an index (int) or, with ``wildcards``, STAR."""
    found = _STEP.match(text, position)
    if found is not None:
        name, quoted, index = found.groups()
        key = name if name is not None else int(index) if index is not None else \
            _ESCAPED.sub(r"\1", quoted)
        return key, found.end()
    if wildcards and (star := _WILDCARD.match(text, position)):
        return STAR, star.end()
    return None


def leading_keys(location: str, wanted: int, *, wildcards: bool = False) -> list:
    """The first ``wanted`` steps of a location (or of a JSONPath that starts like one: the
    steps up to the first one that is not a location step)."""
    keys, position = [], 1 if location.startswith("$") else 0
    while len(keys) < wanted and (step := next_step(location, position, wildcards=wildcards)):
        key, position = step
        keys.append(key)
    return keys


def location_keys(location: str) -> list:
    """The keys of a whole location (``$.a['b c'][0]`` -> ``['a', 'b c', 0]``); ValueError
    when ``location`` is not one."""
    if not location.startswith("$"):
        raise ValueError(f"a location starts with '$', got {location!r}")
    keys, position = [], 1
    while position < len(location):
        step = next_step(location, position)
        if step is None:
            raise ValueError(f"not a location step at character {position + 1} of {location!r}")
        key, position = step
        keys.append(key)
    return keys


def relative_location(base: str, location: str) -> str | None:
    """``location`` relative to ``base`` (``.text`` for ``$.a.text`` under ``$.a``), or None
    when it does not lie inside ``base``."""
    if location == base:
        return ""
    if location.startswith(base) and location[len(base)] in ".[":
        return location[len(base):]
    return None
