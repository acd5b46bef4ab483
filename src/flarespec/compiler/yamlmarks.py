"""Spec data that remembers where every key stood, and the one way to read it from YAML.

Mappings load as ``MarkedDict`` and sequences as ``MarkedList``: ordinary dicts and lists that
also carry the 1-based line and column of each key / item, so that a spec error can name
``file:line:column``. A duplicate key in a spec is an error, not a silent override.

A spec is operator input, reviewed but not trusted to be harmless, so loading is bounded and
yields JSON values only (see the limits below): an alias bomb, a 10,000-deep document, a
5000-digit integer, a date or a non-string key is a ``SpecYamlError`` at the node's
``file:line:column``, never a hang, a traceback or a value the receipt writer cannot encode.

The parser itself (PyYAML: some 7 ms of every start) is in
compiler/yamlparse.py, imported by ``load_marked`` only: a compiled spec from the cache holds
these marked types and needs no YAML.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

# Nesting of lists and mappings; the bundled specs nest 8 deep. Checked while composing, before
# PyYAML's recursive composer and constructor (and every later walk) could overflow the stack.
MAX_DEPTH = 64
# Alias uses (``*name``) per file; the bundled specs use 2 (``<<: *delta``).
MAX_ALIASES = 100
# Values (scalars, lists, mappings) per file with every alias expanded, as later walks see them;
# the bundled specs have about 2,500. Bounds an alias bomb ("billion laughs") and the time of a
# flat file of tiny values alike (the pure-Python parser needs ~50 us a value: ~1 s here).
MAX_NODES = 20_000
# Integers must fit in 64 bits, signed or unsigned: what any consumer of a spec or receipt can
# hold. Longer integer text is refused before conversion (Python refuses > 4300 digits).
INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1
MAX_INT_TEXT = 80  # characters of an integer scalar; 0b + 64 binary digits, with room for "_"


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
    def __init__(self, message: str, mark: Mark | None, code: str = "spec.yaml"):
        super().__init__(f"{mark}: {message}" if mark else message)
        self.mark = mark
        self.reason = message
        self.code = code


def load_marked(text: str, file: str):
    """The single YAML document in ``text`` as marked, JSON-compatible data; any problem is a
    ``SpecYamlError`` naming ``file:line:column`` and a code."""
    # PyYAML only to parse: measure's spec comes from the compiled-spec cache
    from flarespec.compiler.yamlparse import load_marked as parse  # lazy: PyYAML only to parse

    return parse(text, file)


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


def marked_strings(value, mark: Mark | None = None) -> Iterator[tuple[str, Mark | None]]:
    """(string, mark) for every string inside ``value``, in document order, each with the
    mark of the nearest key or item that has one (``mark`` above them all). A plain value
    gives ``mark`` for every string. Walked with a stack: no recursion at any depth."""
    stack = [(value, mark)]
    while stack:
        value, mark = stack.pop()
        if isinstance(value, dict):
            marks = getattr(value, "key_marks", {})
            stack.extend(reversed([(item, marks.get(key, mark)) for key, item in value.items()]))
        elif isinstance(value, list):
            marks = getattr(value, "item_marks", None) or [mark] * len(value)
            stack.extend(reversed(list(zip(value, marks))))
        elif isinstance(value, str):
            yield value, mark


def plain(value):
    """The same data without marks (what a resolved spec prints and hashes)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value
