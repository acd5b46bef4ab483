"""One file loaded outside a spec (``flarespec path``, a catalog case's ``expect.at``): its
loader chosen by its name, and its value as a spec's document with that loader has it.

A spec always names its documents' loaders; a file given on the command line has only its
name. These functions live with the loaders (not in the engine's selections, where they
were) because choosing a format and reading one confined file are the loaders' jobs.
"""

from __future__ import annotations

import os
from typing import Any

from flarespec.loaders.files import FileStore
from flarespec.loaders.limits import document_limit
from flarespec.loaders.options import option_problems
from flarespec.loaders.registry import find_loader, load_document, unknown_loader

# A file's loader by its extension.
LOADER_BY_EXTENSION = {".json": "json", ".jsonl": "jsonl", ".csv": "csv", ".sse": "sse",
                       ".prom": "prometheus"}


def loader_for(file: str) -> str:
    """The loader a file's extension names; ValueError when the extension does not say."""
    extension = os.path.splitext(file)[1].lower()
    if extension in LOADER_BY_EXTENSION:
        return LOADER_BY_EXTENSION[extension]
    known = ", ".join(f"{ext} ({name})" for ext, name in LOADER_BY_EXTENSION.items())
    said = f"its extension {extension!r}" if extension else "it has no extension, and"
    raise ValueError(f"cannot tell how to load {file!r}: {said} names no loader "
                     f"(known: {known})")


def load_file(file: str, loader: str, options: dict | None = None) -> Any:
    """The file's value as a spec's document with this ``loader`` and ``options`` has it
    (the same loader, options and size limit); LoadError or ValueError when it does not load."""
    options = dict(options or {})
    if find_loader(loader) is None:  # a plug-in's name too
        raise ValueError(unknown_loader(loader))
    problems = option_problems(loader, options)  # as a spec's options are checked
    if problems:
        raise ValueError("; ".join(problem for _, problem in problems))
    real = os.path.realpath(file)
    data = FileStore(os.path.dirname(real)).read_bytes(os.path.basename(real),
                                                      document_limit(options))
    return load_document(loader, data, options)[0]  # no shape here: csv cells stay text
