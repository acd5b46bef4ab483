"""The generic tree diff of ``spec diff``: every place where two JSON-like values differ.

Nothing here knows what a spec is. Mappings compare by key; a list of records that all have
a key field (``LIST_KEY_FIELDS``) compares by that key, so an inserted rule or counter is one
addition, not a shift of every later entry; other lists compare by position. A difference
is named by its sub-path (``assert.range.min``, ``group_matrix[kind=prefix-hit].x``), which
``path_steps`` reads back and ``indexed`` turns into the indexes of a marked tree (its
file:line). review/diff.py classes the differences section by section, review/shapes.py
compares expanded shapes with it, and review/locations.py places them.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, NamedTuple

from flarespec.engine.directions import ABSENT, same


def sub_path(base: str, step) -> str:
    if isinstance(step, int):
        return f"{base}[{step}]"
    if isinstance(step, KeyStep):
        return f"{base}[{step.field}={key_text(step.value)}]"
    return f"{base}.{step}" if base else str(step)


# A list of records is compared by key when its entries have one: the first of these fields
# that every entry of both lists has, as a string or an integer, unique within each list.
# Otherwise lists compare by position (docs/spec-review.md#lists).
LIST_KEY_FIELDS = ("id", "kind", "name", "key")


class KeyStep(NamedTuple):
    """One entry of a keyed list: the entry whose ``field`` is ``value``."""
    field: str
    value: Any


class SubPath(str):
    """A sub-path; ``reordered_by`` is set on the path of a keyed list whose entries moved
    (the change's old and new values are then the keys in their old and new order)."""
    reordered_by: str | None = None


_BARE_KEY = re.compile(r"[A-Za-z0-9_.:/@+\-]+")


_NUMERIC = re.compile(r"-?[0-9]+")


def key_text(value) -> str:
    """A key as a path shows it: bare when it reads back as the same string (``prefix-hit``),
    an integer as digits, anything else as a JSON string (``"a b"``)."""
    if isinstance(value, int):
        return str(value)
    if _BARE_KEY.fullmatch(value) and not _NUMERIC.fullmatch(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def key_value(value) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def list_key(old: list, new: list, declared: str | None = None) -> str | None:
    """The field two lists are matched by, or None (compare by position): the first of
    ``declared`` (a caller's choice) or LIST_KEY_FIELDS that every entry of both lists has
    as a string or an integer, unique within each list."""
    entries = old + new
    if not entries or not all(isinstance(entry, dict) for entry in entries):
        return None
    for field in (declared,) if declared else LIST_KEY_FIELDS:
        if all(key_value(entry.get(field)) for entry in entries) and \
                all(len({typed(e[field]) for e in side}) == len(side) for side in (old, new)):
            return field
    return None


def typed(value) -> tuple:
    return type(value).__name__, value


def leaf_changes(old, new, path: str = "", keys: dict[str, str] | None = None,
                 keyed: bool = True) -> Iterator[tuple[str, Any, Any]]:
    """Every place where two values differ, as (sub-path, old, new); a side that does not
    exist is ``ABSENT``. Mappings compare by key; lists of records with a key (see
    ``list_key``; ``keys`` maps a list's path to a declared key field) by that key (an entry
    added, removed or changed is named ``[kind=prefix-hit]``; a move is one ``reordered``
    change), other lists by position (extra items are added or removed at their index);
    type-strict (1 and 1.0 and true differ). ``keyed=False``: every list by position."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            yield from leaf_changes(old.get(key, ABSENT), new.get(key, ABSENT),
                                    sub_path(path, key), keys, keyed)
    elif isinstance(old, list) and isinstance(new, list):
        field = list_key(old, new, (keys or {}).get(path)) if keyed else None
        if field is not None:
            yield from _keyed_changes(old, new, path, field, keys)
            return
        for index in range(max(len(old), len(new))):
            yield from leaf_changes(old[index] if index < len(old) else ABSENT,
                                    new[index] if index < len(new) else ABSENT,
                                    sub_path(path, index), keys, keyed)
    elif not same(old, new):
        yield path, old, new


def _keyed_changes(old: list, new: list, path: str, field: str, keys) -> Iterator:
    """Two lists of records matched by ``field``. Between the same matched neighbours, one
    entry only the old list has and one only the new list has are the same entry with its
    key changed (a renamed counter): shown as changes of that entry, named by its old key."""
    old_keys = [typed(entry[field]) for entry in old]
    new_keys = [typed(entry[field]) for entry in new]
    old_at = {key: index for index, key in enumerate(old_keys)}
    new_at = {key: index for index, key in enumerate(new_keys)}
    old_gaps, new_gaps = _gaps(old_keys, new_at), _gaps(new_keys, old_at)
    paired = {gap[0]: new_gaps[anchor][0] for anchor, gap in old_gaps.items()
              if len(gap) == 1 and len(new_gaps.get(anchor, ())) == 1}
    for key, entry in zip(old_keys, old):
        step = sub_path(path, KeyStep(field, key[1]))
        if key in new_at or key in paired:
            yield from leaf_changes(entry, new[new_at[paired.get(key, key)]], step, keys)
        else:
            yield step, entry, ABSENT
    renamed_to = set(paired.values())
    for key, entry in zip(new_keys, new):
        if key not in old_at and key not in renamed_to:
            yield sub_path(path, KeyStep(field, key[1])), ABSENT, entry
    before = [paired.get(key, key) for key in old_keys if key in new_at or key in paired]
    after = [key for key in new_keys if key in old_at or key in renamed_to]
    if before != after:
        moved = SubPath(path)
        moved.reordered_by = field
        yield moved, [key[1] for key in old_keys if key in new_at or key in paired], \
            [key[1] for key in after]


def _gaps(keys: list, other: dict) -> dict:
    """The keys ``other`` lacks, grouped by the last key before them that it has (None:
    before the first)."""
    found: dict = {}
    anchor = None
    for key in keys:
        if key in other:
            anchor = key
        else:
            found.setdefault(anchor, []).append(key)
    return found


def what_happened(path: str, old, new) -> str:
    """What happened at ``path``: added, removed, changed, or ``reordered by FIELD``."""
    moved = getattr(path, "reordered_by", None)
    return f"reordered by {moved}" if moved else verb(old, new)


def verb(old, new) -> str:
    return "added" if old is ABSENT else "removed" if new is ABSENT else "changed"


def by_position(old, new, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """leaf_changes with every list by position: shapes are compared member by member
    (review/shapes.py), their lists are value sets, not records."""
    return leaf_changes(old, new, path, keyed=False)


_STEP = re.compile(r'\[([0-9]+)\]|\[([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|[^\]"]*)\]'
                   r'|([^.\[\]]+)')


def path_steps(path: str) -> Iterator:
    """The keys, indexes and KeySteps of a sub-path (``group_matrix[kind=prefix-hit].x``)."""
    for index, field, value, key in _STEP.findall(path):
        if index:
            yield int(index)
        elif field:
            yield KeyStep(field, json.loads(value) if value.startswith('"') else
                          int(value) if _NUMERIC.fullmatch(value) else value)
        else:
            yield key


def indexed(tree, path) -> list:
    """``path`` with each KeyStep replaced by the index of its entry in ``tree``; cut where
    a step is not found (the mark is then the deepest place that exists)."""
    steps, node = [], tree
    for step in path:
        if isinstance(step, KeyStep):
            if not isinstance(node, list):
                break
            step = next((i for i, entry in enumerate(node) if isinstance(entry, dict) and
                         key_value(entry.get(step.field)) and
                         typed(entry[step.field]) == typed(step.value)), None)
            if step is None:
                break
        steps.append(step)
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
    return steps
