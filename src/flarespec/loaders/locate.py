"""From a place in a loader's output back to the line of the file it came from.

A violation found by a rule names a JSONPath inside the loader's OUTPUT (``$.events[9].json``,
``$.unlabelled.requests_total``, ``$[3].count``); a person needs the line of the FILE. The
loaders that keep line numbers in their output (``sse``, ``prometheus``) say here how to
read them back; the records formats (``jsonl``, ``csv``, a plug-in declaring ``records``)
keep one line per element beside the value (``record_line``). The registry
(loaders/registry.py: ``locate_line``) picks the locator of a document's format. This is
called only when a failure is reported, so it may scan the output; it never raises.
"""

from __future__ import annotations

import re

from .locations import STAR, leading_keys

# ``target:`` in front of a JSONPath: a reference's text (``response:$.after_terminator[*]``),
# the location of a collective kind's failure
_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*:(?=\$)")
_FIRST = 0  # a wildcard step stands for the first element: the first line it matched


def locate_with(locator, value, location: str) -> int | None:
    """``locator(value, steps)`` for the first steps of ``location`` (a JSONPath, or a
    reference's text ``target:$...``), or None when it cannot tell. A wildcard step
    (``[*]``) gives the line of the first element it matches."""
    if not isinstance(location, str):
        return None
    target = _TARGET.match(location)
    if target:
        location = location[target.end():]
    if not location.startswith("$"):
        return None
    try:
        line = locator(value, _steps(location, 4))
    except (LookupError, TypeError, AttributeError, ValueError):
        return None  # a location that does not fit the output: no line rather than an error
    return line if type(line) is int else None


def _steps(location: str, wanted: int) -> list:
    """The first ``wanted`` steps of ``location`` (names as str, indices as int; a wildcard
    (``[*]``, ``.*``) as a collective kind's reference text has it: its first element)."""
    return [_FIRST if key is STAR else key
            for key in leading_keys(location, wanted, wildcards=True)]


def record_line(lines, steps: list) -> int | None:
    """A records format: ``$[i]`` and anything inside it is on ``lines[i]``."""
    return lines[_index(steps[0])] if steps else None


def sse_line(value: dict, steps: list) -> int | None:
    """Events and lines after the terminator carry their line (an index or a wildcard
    step picks one); the terminator its own; an unterminated block where it began."""
    if not steps:
        return None
    head = steps[0]
    if head in ("events", "after_terminator"):
        return value[head][_index(steps[1])]["line"]
    if head == "unterminated":
        return value["unterminated"]["line"]
    if head in ("terminated", "terminator_line"):
        return value["terminator_line"]
    return None


def prometheus_line(value: dict, steps: list) -> int | None:
    head = steps[0]
    if head in ("samples", "families"):
        return value[head][_index(steps[1])]["line"]
    if head == "duplicates":
        lines = value["duplicates"][_index(steps[1])]["lines"]
        return lines[_index(steps[3])] if steps[2:3] == ["lines"] and len(steps) > 3 else lines[0]
    if head == "unlabelled":
        return _unlabelled_line(value["samples"], steps[1], _index(steps[2]) if len(steps) > 2 else 0)
    return None


def _unlabelled_line(samples: list, name: str, position: int) -> int | None:
    """Line of the ``position``-th sample called ``name`` without labels (file order, the
    order of the output's ``unlabelled[name]`` list)."""
    seen = 0
    for sample in samples:
        if sample["name"] == name and not sample["labels"]:
            if seen == position:
                return sample["line"]
            seen += 1
    return None


def _index(step) -> int:
    if type(step) is not int:
        raise TypeError("not an index")
    return step
