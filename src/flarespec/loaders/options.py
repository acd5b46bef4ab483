"""Document options: what a spec's ``options:`` may give each loader, declared beside it.

A loader declares the options it reads, each an :class:`Option` (its name, what a value must
be, the test, its JSON Schema and its default), as Spectral declares a function's options
schema beside the function: a format with ``register(Format(..., options=...))`` or
``register_loader(name, options=...)`` (loaders/registry.py), the engine's own ``bytes`` and
``directory`` here. Every format read whole also takes ``max_mib`` (the engine reads the
file under that limit before the format sees it).

The compiler checks each document's options against its loader's declaration
(:func:`option_problems`): an option the loader does not declare, or a value its declaration
refuses, is ``spec.document-option`` at the option's file:line:column, so a misspelt option
(``data_jsn: true``) is never silently ignored and no value a loader cannot take
(``head_bytes: 1000000000000``) reaches it. ``flarespec path -o`` options are checked alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from .limits import (
    DEFAULT_HEAD_BYTES,
    MAX_DOCUMENT_CEILING_MIB,
    MAX_HEAD_BYTES,
    MAX_MIB_OPTION,
)


@dataclass(frozen=True)
class Option:
    name: str
    words: str                    # what a value must be: "true or false"
    test: Callable[[Any], bool]
    schema: dict                  # its JSON Schema (authoring/schema.py)
    description: str
    default: Any = None


def _whole(low: int, high: int) -> Callable[[Any], bool]:
    return lambda value: type(value) is int and low <= value <= high


MAX_MIB = Option(MAX_MIB_OPTION, f"a whole number of MiB from 1 to {MAX_DOCUMENT_CEILING_MIB}",
                 _whole(1, MAX_DOCUMENT_CEILING_MIB),
                 {"type": "integer", "minimum": 1, "maximum": MAX_DOCUMENT_CEILING_MIB},
                 "the document's size limit in MiB (default 32)")
DATA_JSON = Option("data_json", "true or false", lambda value: isinstance(value, bool),
                   {"type": "boolean"}, "parse each event's data as JSON", False)
TERMINATOR = Option("terminator", "a string", lambda value: isinstance(value, str),
                    {"type": "string"}, "the data of the stream's last event")
HEAD_BYTES = Option("head_bytes", f"a whole number of bytes from 0 to {MAX_HEAD_BYTES}",
                    _whole(0, MAX_HEAD_BYTES),
                    {"type": "integer", "minimum": 0, "maximum": MAX_HEAD_BYTES},
                    f"how many first bytes the value's head holds (default "
                    f"{DEFAULT_HEAD_BYTES})", DEFAULT_HEAD_BYTES)

# the loaders no format registers: the engine reads their files itself
ENGINE_LOADERS: dict[str, tuple[Option, ...]] = {"bytes": (HEAD_BYTES,), "directory": ()}


def declared_options(loader: str) -> tuple[Option, ...] | None:
    """The options ``loader`` takes (a plug-in's once discovered), or None for a name no
    loader has (the compiler reports the name itself)."""
    if loader in ENGINE_LOADERS:
        return ENGINE_LOADERS[loader]
    from .registry import find_loader

    found = find_loader(loader) if isinstance(loader, str) else None
    return None if found is None else (MAX_MIB, *found.options)


def option_problems(loader: str, options) -> list[tuple[str | None, str]]:
    """(option name, or None for the mapping, and the problem) for every way ``options``
    misses what ``loader`` declares; nothing for an unknown loader."""
    declared = declared_options(loader)
    if declared is None:
        return []
    if not isinstance(options, dict):
        return [(None, f"options wants a mapping of option -> value, got {_shown(options)}")]
    by_name = {option.name: option for option in declared}
    problems: list[tuple[str | None, str]] = []
    for name, value in options.items():
        option = by_name.get(name)
        if option is None:
            problems.append((name, _unknown(loader, name, by_name)))
        elif not option.test(value):
            problems.append((name, f"{name} must be {option.words}; got {_shown(value)}"))
    return problems


def _unknown(loader: str, name, by_name: dict) -> str:
    import difflib  # only for a spec error: kept off the measure path

    close = difflib.get_close_matches(str(name), list(by_name), n=1)
    message = (f"a {loader} document has no option {name!r}"
               f"{f' (did you mean {close[0]!r}?)' if close else ''}; its options: "
               f"{', '.join(by_name) or 'none'}")
    if name == MAX_MIB_OPTION:
        message += f" ({MAX_MIB_OPTION} is for documents read whole: a {loader} document " \
                   f"is never read whole)"
    return message


def _shown(value) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
