"""Causes: violations of a receipt that one fault explains, found from the violations alone.

One edit often breaks several rules: a line missing from a file fails every rule that reads
what it held, and an element missing from an array makes every later element meet its
neighbour's counterpart in the file it is compared with. The short reports show such
violations under their cause, with one line saying what it is and how many follow from it
(adapter/receipt_report.py); the receipt still lists every violation, and the verdict does
not change: this module only groups.

A cause is computed from the violations' places (their ``file`` and ``location``, and the
``expected_from`` place their expected value was read from), never from a rule id or a
document's name, and only within one packet. Two kinds are found, shifts first:

- **a shift**: violations at one array of a file compared element by element with an array
  of another file (``expected_from``), from an index ``k`` on, where each one's expected
  value is the actual value of the next element (the other file lacks an element at ``k``,
  or this one has one too many) or each one's actual value the expected value of the next
  (the other way round); with them, every violation in either array at ``k`` or later
  (e.g. the element left over at the end). Two elements merely swapped fit both readings
  and are no shift.
- **one place**: two or more violations about one place (a file and a location in it),
  their own or the one their expected value came from: every rule that reads a missing
  member, or a value and the copy compared with it.

A cause explains at least one error; warnings at its place are shown with it.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

from flarespec.loaders.locations import location_keys, location_of

# a document's pointer, as a reference names it: ``name:/a/0/b``
_POINTER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*:(/.*)?\Z", re.S)
# what the engine records where a reference, the kind `present` or a shape's required member
# found nothing: expected "present", actual absent or "absent" (engine/evaluate.py, kinds.py,
# shapes.py)
PRESENT, ABSENT = "present", "absent"


@dataclass(frozen=True)
class Cause:
    summary: str                # one line: what it is and how many violations follow from it
    members: tuple[int, ...]    # indices into the entries given, in their order


@dataclass(frozen=True)
class _Candidate:
    members: tuple[int, ...]
    words: Callable[[tuple[int, ...]], str]  # the summary, for the members it keeps


def causes(entries: list[dict]) -> list[Cause]:
    """The causes among receipt violations and warnings (``entries``), each entry in at most
    one; in the order of their first member."""
    taken: set[int] = set()
    found = []
    for candidate in _shifts(entries) + _places(entries):
        members = tuple(i for i in candidate.members if i not in taken)
        if _worth_a_cause(entries, members):
            taken.update(members)
            found.append(Cause(candidate.words(members), members))
    return sorted(found, key=lambda cause: cause.members[0])


def _worth_a_cause(entries: list[dict], members: tuple[int, ...]) -> bool:
    return len(members) >= 2 and any(entries[i].get("severity") != "warning" for i in members)


# --------------------------------------------------------------------------- places

def keys_of(location: str | None) -> tuple | None:
    """The keys of a location (``$.a[0]``) or of a document pointer (``doc:/a/0``), or None
    when it names no place in a document (``line 3``, a rule, nothing)."""
    if not location:
        return None
    if location.startswith("$"):
        try:
            return tuple(location_keys(location))
        except ValueError:
            return None
    found = _POINTER.match(location)
    if found is None:
        return None
    pointer = found.group(1) or "/"
    return tuple(int(part) if part.isdigit() else part.replace("~1", "/").replace("~0", "~")
                 for part in pointer[1:].split("/")) if pointer != "/" else ()


def _own_place(entry: dict) -> tuple | None:
    keys = keys_of(entry.get("location"))
    return (entry.get("packet"), entry["file"], keys) if entry.get("file") and keys is not None \
        else None


def _source_place(entry: dict) -> tuple | None:
    source = entry.get("expected_from")
    if not isinstance(source, dict) or not source.get("file"):
        return None
    keys = keys_of(source.get("location"))
    return (entry.get("packet"), source["file"], keys) if keys is not None else None


def shown_place(place: tuple) -> str:
    _, file, keys = place
    return f"{file} {location_of(keys)}"


def _places(entries: list[dict]) -> list[_Candidate]:
    """One cause per place that two or more violations are about, the largest first (a
    violation about two places goes with the larger)."""
    about: dict[tuple, list[int]] = defaultdict(list)
    for index, entry in enumerate(entries):
        for place in dict.fromkeys(filter(None, (_own_place(entry), _source_place(entry)))):
            about[place].append(index)
    order = sorted(about, key=lambda place: (-len(about[place]), about[place][0]))
    return [_Candidate(tuple(about[place]),
                       lambda members, place=place: _place_summary(place, entries, members))
            for place in order if len(about[place]) >= 2]


def _place_summary(place: tuple, entries: list[dict], members) -> str:
    missing = any(_own_place(entries[i]) == place and _found_nothing(entries[i])
                  for i in members)
    if missing:
        return f"{shown_place(place)} is missing: {counted(entries, members)} follow from it"
    return f"{shown_place(place)}: {counted(entries, members)} about this one value"


def _found_nothing(entry: dict) -> bool:
    return entry.get("expected") == PRESENT and entry.get("actual", ABSENT) == ABSENT


# --------------------------------------------------------------------------- shifts

def _aligned(entry: dict) -> tuple | None:
    """(series, index, suffix) of a violation comparing an array element with the element
    of the same index in another place's array, or None. The series names both arrays
    (packet, file and keys up to the index, for this place and the source); the index is
    the innermost one that both locations hold."""
    own, source = _own_place(entry), _source_place(entry)
    if own is None or source is None or "expected" not in entry or "actual" not in entry:
        return None
    mine, theirs = own[2], source[2]
    for p in range(len(mine) - 1, -1, -1):
        if type(mine[p]) is not int:
            continue
        q = next((q for q in range(len(theirs) - 1, -1, -1)
                  if type(theirs[q]) is int and theirs[q] == mine[p]), None)
        if q is not None:
            return ((own[0], own[1], mine[:p], source[1], theirs[:q]), mine[p], mine[p + 1:])
    return None


def _same(one, two) -> bool:
    return json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def _direction(values: dict) -> str | None:
    """``missing`` when each element's expected value is the next one's actual value,
    ``extra`` when each actual value is the next one's expected value, else None."""
    agree = {"missing": 0, "extra": 0}
    disagree = {"missing": 0, "extra": 0}
    for (index, suffix), (expected, actual) in values.items():
        following = values.get((index + 1, suffix))
        if following is None:
            continue
        for name, holds in (("missing", _same(expected, following[1])),
                            ("extra", _same(actual, following[0]))):
            (agree if holds else disagree)[name] += 1
    fits = [name for name in agree if agree[name] and not disagree[name]]
    return fits[0] if len(fits) == 1 else None


def _shifts(entries: list[dict]) -> list[_Candidate]:
    series: dict[tuple, dict] = defaultdict(dict)
    for entry in entries:
        aligned = _aligned(entry)
        if aligned is not None:
            key, element, suffix = aligned
            series[key].setdefault((element, suffix), (entry["expected"], entry["actual"]))
    found, arrays = [], None
    for key, values in series.items():
        direction = _direction(values)
        if direction is None:
            continue
        arrays = arrays if arrays is not None else _arrays(entries)
        packet, file, prefix, other, other_prefix = key
        start = min(element for element, _ in values)
        members = tuple(sorted({index for array in ((packet, file, prefix),
                                                    (packet, other, other_prefix))
                                for element, index in arrays.get(array, ()) if element >= start}))
        found.append(_Candidate(members, lambda kept, key=key, start=start, direction=direction:
                                _shift_summary(key, start, direction, entries, kept)))
    return found


def _arrays(entries: list[dict]) -> dict[tuple, list[tuple[int, int]]]:
    """Every array element a violation is about: (packet, file, the keys before an index)
    -> [(the index, the violation's position)], from its own place and its source's (one
    pass, so that a receipt of many violations is grouped in linear time)."""
    found: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for position, entry in enumerate(entries):
        for packet, file, keys in dict.fromkeys(
                filter(None, (_own_place(entry), _source_place(entry)))):
            for depth, key in enumerate(keys):
                if type(key) is int:
                    found[(packet, file, keys[:depth])].append((key, position))
    return found


def _shift_summary(key: tuple, start: int, direction: str, entries, members) -> str:
    _, file, prefix, other, other_prefix = key
    theirs = f"{other} {location_of((*other_prefix, start))}"
    mine = f"{file} {location_of((*prefix, start))}"
    lacking, surplus = (theirs, mine) if direction == "missing" else (mine, theirs)
    return (f"{lacking} is missing, or {surplus} is one too many (the elements after it are "
            f"compared one place apart): {counted(entries, members)} follow from it")


# --------------------------------------------------------------------------- words

def counted(entries: list[dict], members) -> str:
    """``3 violations and 1 warning of 4 rules``."""
    warnings = sum(entries[i].get("severity") == "warning" for i in members)
    errors = len(members) - warnings
    rules = len({entries[i]["rule"] for i in members})
    parts = [_plural(errors, "violation")] + ([_plural(warnings, "warning")] if warnings else [])
    return f"{' and '.join(parts)} of {_plural(rules, 'rule')}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"

