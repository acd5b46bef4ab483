"""Mutation sites drawn from a spec's declared shapes, for the shape property test.

Generic over the spec: every document with a shape is walked alongside a valid packet's
file, and every declared member found there (the first concrete occurrence of each member of
an array's elements or a map's values) becomes a site. For each site, every JSON type the
shape does not allow gives one replacement value, and a required member gives a removal. So
a child spec that declares a new member gets its mutations with no change here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from flarespec.loaders.locations import child_location
from flarespec.engine.shapes import ANY, type_list
from flarespec.fixtures import mutations

REMOVE = object()


@dataclass(frozen=True)
class Site:
    document: str
    rule: str                # the document's shape rule
    loader: str
    file: str                # packet-relative path of the instance mutated
    steps: tuple             # keys and indices from the loaded value's root
    label: str               # what changes (for test ids)
    value: Any               # the replacement (REMOVE: delete the member)

    @property
    def location(self) -> str:
        location = "$"
        for step in self.steps:
            location = child_location(location, step)
        return location


def _allows(types: list[str], target: str) -> bool:
    return ANY in types or target in types or (target == "integer" and "number" in types)


def replacements(node: dict, original: Any) -> Iterator[tuple[str, Any]]:
    """(label, value) of every type change the node rejects."""
    types = type_list(node)
    number = float(original) if type(original) is int else 1.5
    candidates = {
        "null": None,
        "boolean": True,
        "integer": 7,
        "number": number,
        "string": str(original) if type(original) in (int, float) else "x",
        "array": [original],
        "object": {str(i): v for i, v in enumerate(original)} if type(original) is list
        else {"value": original},
    }
    for target, value in candidates.items():
        if target == "number":  # a float: allowed only where a number is
            if ANY in types or "number" in types:
                continue
        elif _allows(types, target):
            continue
        yield f"{target}", value


def _walk(node: dict, value: Any, steps: tuple, general: tuple, seen: set) -> Iterator:
    if steps and general not in seen:
        seen.add(general)
        yield steps, node, value
    if type(value) is dict:
        for name, child in (node.get("members") or {}).items():
            if name in value:
                yield from _walk(child, value[name], steps + (name,), general + (name,), seen)
        if "values" in node and value:
            first = next(iter(value))
            yield from _walk(node["values"], value[first], steps + (first,), general + ("*",),
                             seen)
    elif type(value) is list and "items" in node:
        for index, element in enumerate(value):
            yield from _walk(node["items"], element, steps + (index,), general + ("*",), seen)


def _removals(node: dict, value: Any, steps: tuple, general: tuple, seen: set) -> Iterator:
    """Required members found in the value: (steps) of each, once per general path."""
    if type(value) is dict:
        for name, child in (node.get("members") or {}).items():
            if name not in value:
                continue
            where = general + (name,)
            if not child.get("optional", False) and where not in seen:
                seen.add(where)
                yield steps + (name,)
            yield from _removals(child, value[name], steps + (name,), where, seen)
        if "values" in node and value:
            first = next(iter(value))
            yield from _removals(node["values"], value[first], steps + (first,),
                                 general + ("*",), seen)
    elif type(value) is list and "items" in node:
        for index, element in enumerate(value):
            yield from _removals(node["items"], element, steps + (index,), general + ("*",),
                                 seen)


def sites(spec, loaded: dict[str, tuple[str, Any]]) -> list[Site]:
    """Every site of every shaped document; ``loaded``: document name -> (file, value)."""
    found = []
    for name, document in spec.documents.items():
        if document.shape is None or name not in loaded:
            continue
        file, value = loaded[name]
        node = document.shape.node
        common = dict(document=name, rule=document.shape.rule, loader=document.loader,
                      file=file)
        for steps, child, original in _walk(node, value, (), (), set()):
            for label, replacement in replacements(child, original):
                found.append(Site(**common, steps=steps, label=label, value=replacement))
        for steps in _removals(node, value, (), (), set()):
            found.append(Site(**common, steps=steps, label="removed", value=REMOVE))
    return [site for site in found if writable(site)]


def _jsonpath(steps: tuple) -> str:
    location = "$"
    for step in steps:
        location = child_location(location, step)
    return location


def apply(root: Path, site: Site) -> None:
    """Write the site's change into the packet at ``root`` (the file is rewritten)."""
    if site.loader == "json":
        if site.value is REMOVE:
            mutations.delete_json(root, site.file, _jsonpath(site.steps))
        else:
            mutations.set_json(root, site.file, _jsonpath(site.steps), site.value)
        return
    if site.loader == "sse":  # an sse document's events[i].json is event i's data
        head, event, member, *rest = site.steps
        assert (head, member) == ("events", "json") and rest, site
        if site.value is REMOVE:
            mutations.sse_delete(root, site.file, event, _jsonpath(tuple(rest)))
        else:
            mutations.sse_set(root, site.file, event, _jsonpath(tuple(rest)), site.value)
        return
    raise AssertionError(f"no writer for a {site.loader} document's sites")


def site_id(site: Site) -> str:
    return f"{site.document}:{site.location}:{site.label}"


def writable(site: Site) -> bool:
    """A site the file's bytes can express: any member of a JSON file; inside an SSE
    document only what is in an event's data (``events[i].json.…``), not the loader's own
    structure around it."""
    if site.loader == "sse":
        return len(site.steps) >= 4 and site.steps[0] == "events" and site.steps[2] == "json"
    return site.loader == "json"
