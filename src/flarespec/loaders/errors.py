"""The one error type every loader raises.

A loader failure is data about the packet, not a crash: the engine turns it into a violation
that names the file, a short machine-readable ``code`` and, where known, the 1-based ``line``
(text formats) or the JSONPath ``location`` (JSON documents, relative paths for files).
"""

from __future__ import annotations


class LoadError(Exception):
    """A file or document could not be loaded.

    ``code`` is a short kebab-case id (``duplicate-key``, ``invalid-json``, ``path-dotdot``,
    ``missing``...); ``message`` says in words what is wrong.
    """

    def __init__(self, code: str, message: str, *, line: int | None = None, location: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.location = location

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.location is not None:
            where.append(self.location)
        suffix = f" ({', '.join(where)})" if where else ""
        return f"[{self.code}] {self.message}{suffix}"

    def __repr__(self) -> str:
        return (f"LoadError({self.code!r}, {self.message!r}, line={self.line!r}, "
                f"location={self.location!r})")
