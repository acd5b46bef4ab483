"""Decoding and line counting shared by the text loaders.

Line numbers are 1-based and count CRLF, CR and LF each as one line end (the SSE rule; for
JSON and Prometheus text, which use LF, the count is the same).
"""

from __future__ import annotations

from .errors import LoadError
from .limits import MAX_DOCUMENT_BYTES, check_document_size

UTF8_BOM = b"\xef\xbb\xbf"


def line_of_byte(data: bytes, offset: int) -> int:
    """1-based line holding byte ``offset`` of ``data``."""
    return _line_of(data, offset, b"\r", b"\n")


def line_of_char(text: str, offset: int) -> int:
    """1-based line holding character ``offset`` of ``text``."""
    return _line_of(text, offset, "\r", "\n")


def _line_of(text, offset: int, cr, lf) -> int:
    # Three C-speed counts, no list of matches: a CRLF is one line end, not two. A CR at
    # ``offset - 1`` followed by the LF at ``offset`` is already a complete line end.
    return (text.count(lf, 0, offset) + text.count(cr, 0, offset)
            - text.count(cr + lf, 0, offset) + 1)


def decode_utf8(data: bytes, what: str) -> str:
    """Decode strictly; invalid bytes are an error (a validator must not guess with U+FFFD)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(
            "invalid-utf8",
            f"{what} is not valid UTF-8: {exc.reason} at byte offset {exc.start}",
            line=line_of_byte(data, exc.start),
        ) from None


def load_text(data: bytes, *, limit: int = MAX_DOCUMENT_BYTES) -> dict:
    """The ``text`` loader: ``{"text": the file decoded as UTF-8}`` (a BOM is kept as U+FEFF)."""
    check_document_size(data, "text file", limit)
    return {"text": decode_utf8(data, "text file")}
