"""Generic loaders: bytes of a file -> a JSON-like value the engine can select into.

Each loader takes ``(data: bytes, options: dict)`` and returns plain dicts/lists/str/numbers,
or raises :class:`LoadError`. ``bytes`` is special: large binary files are never read whole;
the engine builds their value from :func:`load_bytes_head` (plus ``FileStore.sha256`` when
a spec asks for the hash).

:func:`locate_line` maps a place in a loader's output back to a line of its file (used when
a failure is reported). Importing this package stays cheap: it imports the standard library only.
"""

from __future__ import annotations

from typing import Callable

from ._text import load_text
from .errors import LoadError
from .files import FileStore
from .limits import MAX_DOCUMENT_BYTES, MAX_SAMPLES, MAX_SSE_EVENTS, document_limit
from .locate import locate_line, locates_lines
from .prometheus import parse_prometheus
from .sse import parse_sse
from .strict_json import load_json, load_json_text

Loader = Callable[[bytes, dict], object]

LOADERS: dict[str, Loader] = {
    "json": lambda data, options: load_json(data, limit=document_limit(options)),
    "sse": lambda data, options: parse_sse(
        data, data_json=options.get("data_json", False), terminator=options.get("terminator"),
        limit=document_limit(options)),
    "prometheus": lambda data, options: parse_prometheus(data, limit=document_limit(options)),
    "text": lambda data, options: load_text(data, limit=document_limit(options)),
}

KNOWN_LOADERS = frozenset(LOADERS) | {"bytes"}


def get_loader(name: str) -> Loader:
    """The loader called ``name``; ``bytes`` has none (use :func:`load_bytes_head`)."""
    if name == "bytes":
        raise ValueError("the 'bytes' loader does not take file contents; use load_bytes_head(store, rel, n)")
    try:
        return LOADERS[name]
    except KeyError:
        raise ValueError(f"unknown loader {name!r}; known: {', '.join(sorted(KNOWN_LOADERS))}") from None


def load_bytes_head(store: FileStore, rel: str, head_bytes: int) -> dict:
    """``{"head": first head_bytes bytes as latin-1 text (one char per byte), "size": bytes}``."""
    return {"head": store.read_head(rel, head_bytes).decode("latin-1"), "size": store.size(rel)}


__all__ = [
    "FileStore", "KNOWN_LOADERS", "LOADERS", "LoadError", "MAX_DOCUMENT_BYTES", "MAX_SAMPLES",
    "MAX_SSE_EVENTS", "get_loader", "load_bytes_head", "load_json", "load_json_text", "locate_line",
    "locates_lines", "parse_prometheus", "parse_sse",
]
