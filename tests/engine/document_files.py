"""Writing toy documents for the engine tests (shared by several test modules)."""

from __future__ import annotations

import json
from pathlib import Path


def write_files(root: Path, docs: dict) -> None:
    """Write each root-relative path: bytes as is, text as text, anything else as JSON;
    a None value is not written (a missing document)."""
    for rel, content in docs.items():
        if content is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content)
        else:
            path.write_text(json.dumps(content))


def compile_text(directory: Path, text: str, file_name: str = "spec.yaml"):
    """Write a spec file into ``directory`` and compile it the one way specs are opened
    (``flarespec.compiler.open.open_compiled``, a file reference)."""
    from flarespec.compiler.open import open_compiled

    directory.mkdir(parents=True, exist_ok=True)
    (directory / file_name).write_text(text)
    return open_compiled(directory / file_name)
