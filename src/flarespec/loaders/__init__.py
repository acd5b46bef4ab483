"""Generic loaders: bytes of a file -> a JSON-like value the engine can select into.

Each loader takes ``(data: bytes, options: dict)`` and returns plain dicts/lists/str/numbers,
or raises :class:`LoadError`. ``bytes`` is special: large binary files are never read whole;
the engine builds their value from :func:`load_bytes_head` (plus ``FileStore.sha256`` when
a spec asks for it).

The formats are registered in :mod:`.registry` (the built-in ones below, plug-ins through
the ``flarespec.loaders`` entry-point group); the engine reads a document with
:func:`load_document`, which also gives a records format's lines (``jsonl``, ``csv``) and
hands a document's shape to a format that reads it (``csv``). :func:`locate_line` maps a
place in a loader's output back to a line of its file (used when a failure is reported).
Importing this package stays cheap: it imports the standard library only.
"""

from __future__ import annotations

from typing import Callable

from . import locate
from ._text import load_text
from .csv_loader import load_csv
from .errors import LoadError
from .files import FileStore
from .jsonl import load_jsonl
from .limits import MAX_DOCUMENT_BYTES, MAX_SAMPLES, MAX_SSE_EVENTS, document_limit
from .options import DATA_JSON, TERMINATOR, Option, option_problems
from .prometheus import parse_prometheus
from .registry import (
    ENTRY_POINT_GROUP,
    LOADERS,
    Format,
    find_loader,
    format_of,
    known_loaders,
    load_document,
    locate_line,
    locates_lines,
    register,
    register_loader,
    unknown_loader,
)
from .sse import parse_sse
from .strict_json import load_json, load_json_text

Loader = Callable[[bytes, dict], object]



def _builtin(name: str, load, **declared) -> None:
    register(Format(name, load, __name__, builtin=True, **declared))


_builtin("json", lambda data, options: load_json(data, limit=document_limit(options)))
_builtin("jsonl", lambda data, options: load_jsonl(data, limit=document_limit(options)),
         records=True)
_builtin("csv", lambda data, options, shape: load_csv(data, limit=document_limit(options),
                                                      shape=shape), records=True, shaped=True)
_builtin("sse", lambda data, options: parse_sse(
    data, data_json=options.get(DATA_JSON.name, DATA_JSON.default),
    terminator=options.get(TERMINATOR.name), limit=document_limit(options)),
    locate=locate.sse_line, options=(DATA_JSON, TERMINATOR))
_builtin("prometheus", lambda data, options: parse_prometheus(
    data, limit=document_limit(options)), locate=locate.prometheus_line)
_builtin("text", lambda data, options: load_text(data, limit=document_limit(options)))

# the built-in names (``bytes`` too); a plug-in's are known once discovered: known_loaders()
KNOWN_LOADERS = frozenset(LOADERS) | {"bytes"}


def get_loader(name: str) -> Loader:
    """The loader called ``name`` (a plug-in's too); ``bytes`` has none (use
    :func:`load_bytes_head`)."""
    format_of(name)
    return LOADERS[name]


def load_bytes_head(store: FileStore, rel: str, head_bytes: int) -> dict:
    """``{"head": first head_bytes bytes as latin-1 text (one char per byte), "size": bytes}``."""
    return {"head": store.read_head(rel, head_bytes).decode("latin-1"), "size": store.size(rel)}


__all__ = [
    "ENTRY_POINT_GROUP", "FileStore", "Format", "KNOWN_LOADERS", "LOADERS", "LoadError",
    "MAX_DOCUMENT_BYTES", "MAX_SAMPLES", "MAX_SSE_EVENTS", "Option", "find_loader", "format_of",
    "get_loader", "known_loaders", "load_bytes_head", "load_csv", "load_document", "load_json",
    "load_json_text", "load_jsonl", "locate_line", "locates_lines", "option_problems",
    "parse_prometheus", "parse_sse", "register_loader", "unknown_loader",
]
