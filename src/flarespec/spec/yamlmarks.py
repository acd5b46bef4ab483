"""YAML loading with ``yaml.safe_load`` semantics that remembers where every key stood.

Mappings load as ``MarkedDict`` and sequences as ``MarkedList``: ordinary dicts and lists that
also carry the 1-based line and column of each key / item, so that a spec error can name
``file:line:column``. A duplicate key in a spec is an error, not a silent override.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml


@dataclass(frozen=True)
class Mark:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class MarkedDict(dict):
    __slots__ = ("mark", "key_marks")


class MarkedList(list):
    __slots__ = ("mark", "item_marks")


class SpecYamlError(ValueError):
    def __init__(self, message: str, mark: Mark | None):
        super().__init__(f"{mark}: {message}" if mark else message)
        self.mark = mark
        self.reason = message


def load_marked(text: str, file: str):
    def mark_of(node) -> Mark:
        return Mark(file, node.start_mark.line + 1, node.start_mark.column + 1)

    class Loader(yaml.SafeLoader):
        pass

    def construct_mapping(loader, node):
        own = sum(1 for key_node, _ in node.value if key_node.tag != "tag:yaml.org,2002:merge")
        loader.flatten_mapping(node)
        merged = len(node.value) - own  # keys from "<<" come first; the mapping's own keys may override them
        result = MarkedDict()
        result.mark = mark_of(node)
        result.key_marks = {}
        own_keys = set()
        for position, (key_node, value_node) in enumerate(node.value):
            key = loader.construct_object(key_node, deep=True)
            if position >= merged:
                if key in own_keys:
                    raise SpecYamlError(f"duplicate key {key!r}", mark_of(key_node))
                own_keys.add(key)
            if False:
                raise SpecYamlError(f"duplicate key {key!r}", mark_of(key_node))
            result[key] = loader.construct_object(value_node, deep=True)
            result.key_marks[key] = mark_of(key_node)
        return result

    def construct_sequence(loader, node):
        result = MarkedList(loader.construct_object(child, deep=True) for child in node.value)
        result.mark = mark_of(node)
        result.item_marks = [mark_of(child) for child in node.value]
        return result

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_sequence)
    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 - Loader derives from SafeLoader
    except SpecYamlError:
        raise
    except yaml.MarkedYAMLError as error:
        problem_mark = error.problem_mark or error.context_mark
        mark = Mark(file, problem_mark.line + 1, problem_mark.column + 1) if problem_mark else None
        raise SpecYamlError(f"YAML syntax: {error.problem or error}", mark) from None
    except yaml.YAMLError as error:
        raise SpecYamlError(f"YAML: {error}", Mark(file, 1, 1)) from None


def mark_at(tree, path) -> Mark | None:
    """The mark of the deepest key or item along ``path`` that exists in ``tree``."""
    found = getattr(tree, "mark", None)
    node = tree
    for step in path:
        if isinstance(node, MarkedDict) and step in node:
            found = node.key_marks.get(step, found)
            node = node[step]
        elif isinstance(node, MarkedList) and isinstance(step, int) and 0 <= step < len(node):
            found = node.item_marks[step]
            node = node[step]
        else:
            break
    return found


def plain(value):
    """The same data without marks (what a resolved spec prints and hashes)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value
