"""Decoding and line counting shared by the text loaders.

Line numbers are 1-based and count CRLF, CR and LF each as one line end (the SSE rule; for
JSON and Prometheus text, which use LF, the count is the same).
"""

from __future__ import annotations

import re

from .errors import LoadError

UTF8_BOM = b"\xef\xbb\xbf"

_LINE_END_BYTES = re.compile(rb"\r\n|\r|\n")
_LINE_END_TEXT = re.compile(r"\r\n|\r|\n")


def line_of_byte(data: bytes, offset: int) -> int:
    """1-based line holding byte ``offset`` of ``data``."""
    return len(_LINE_END_BYTES.findall(data, 0, offset)) + 1


def line_of_char(text: str, offset: int) -> int:
    """1-based line holding character ``offset`` of ``text``."""
    return len(_LINE_END_TEXT.findall(text, 0, offset)) + 1


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
