"""One fingerprint of a packet tree, for the tests that prove a command left it untouched
(runner integration, property tests, hostile cases): every entry below the root with its
path, type and mode, file bytes (streamed) and symlink text."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for directory, names, files in os.walk(root):
        names.sort()
        for name in sorted(names + files):
            path = os.path.join(directory, name)
            info = os.lstat(path)
            digest.update(f"{os.path.relpath(path, root)}\0{info.st_mode:o}\0".encode())
            if stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
            elif stat.S_ISLNK(info.st_mode):
                digest.update(os.readlink(path).encode())
    return digest.hexdigest()
