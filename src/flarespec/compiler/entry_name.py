"""The entry document's file name, ``documents.<entry>.file_name``: an exact name or an
fnmatch glob (``*``, ``?``, ``[...]``; case-sensitive on every platform), one path component.

It is read in two places, with one meaning: spec selection tries a spec's ``applies_to``
only for an entry file whose name matches (adapter/select.py), and ``spec lint`` proves two
specs exclusive when no file name can match both (authoring/lint.py). A spec without it
is tried for an entry of any name. The validation of a spec named with ``--spec`` does not
read it: naming the spec says which one applies.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

GLOB_CHARACTERS = frozenset("*?[")


def entry_file_name(data) -> str | None:
    """The ``file_name`` of the entry document of a resolved spec's data, or None."""
    documents = data.get("documents") if isinstance(data, dict) else None
    for document in (documents or {}).values():
        if isinstance(document, dict) and document.get("entry") is True:
            name = document.get("file_name")
            return name if isinstance(name, str) else None
    return None


def is_literal(pattern: str) -> bool:
    """A pattern with no glob character: it matches itself only."""
    return not GLOB_CHARACTERS.intersection(pattern)


def name_matches(pattern: str | None, name: str) -> bool:
    """Whether an entry file called ``name`` may be checked by a spec whose entry declares
    ``pattern`` (None: any name)."""
    if pattern is None:
        return True
    return name == pattern if is_literal(pattern) else fnmatchcase(name, pattern)


def names_exclusive(first: str | None, second: str | None) -> bool:
    """No file name matches both patterns, provably: two different literal names, or a
    literal name the other pattern (a glob) does not match. Two globs, or a spec without a
    file name, are never proved exclusive here (conservative: lint then cannot tell)."""
    if first is None or second is None:
        return False
    if is_literal(first):
        return not name_matches(second, first)
    if is_literal(second):
        return not name_matches(first, second)
    return False
