"""Server-sent events, interpreted as the WHATWG HTML standard says, with line numbers.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

An own parser rather than a library: httpx-sse and sseclient-py each deviate from the standard
on streams a validator must judge (see docs/loaders.md), and neither reports where in the
bytes an event came from. The whole body is in memory, so this is a loop over lines; the
lines are split a slice at a time, so a stream of a million tiny events never holds a list
of two million line strings beside its events.
"""

from __future__ import annotations

import re

from ._text import UTF8_BOM, decode_utf8
from .errors import LoadError
from .limits import (
    MAX_DOCUMENT_BYTES, MAX_SSE_EVENTS, MAX_SSE_RETRY, check_document_size, gc_paused)
from .strict_json import load_json_text

_LINE_END = re.compile(r"\r\n|\r|\n")
_ASCII_DIGITS = re.compile(r"[0-9]+")
_RETRY_MAX_DIGITS = len(str(MAX_SSE_RETRY))
SLICE_CHARS = 1 << 20  # lines are split about this many characters at a time
# Events whose data is identical share one data string and one parsed JSON value (the
# output is read-only): a stream of a million copies of one tiny event then costs about
# one event dict each. Only short texts are remembered, and only so many of them.
_SHARED_DATA_CHARS = 256
_SHARED_DATA_ENTRIES = 1024


class _Stream:
    """The parser's state between lines (WHATWG's buffers, plus where the block began)."""

    def __init__(self, data_json: bool, terminator: str | None):
        self.data_json, self.terminator = data_json, terminator
        self.events: list[dict] = []
        self.after_terminator: list[dict] = []
        self.terminated = False
        self.terminator_line = None
        self.data_values: list[str] = []  # one entry per data field; WHATWG's buffer is "\n".join + "\n"
        self.event_type = ""
        self.last_event_id = None         # WHATWG starts with ""; None tells "never set" apart
        self.retry = None
        self.block_line = self.block_text = None  # first field line since the last blank line
        self.shared: dict[str, tuple] = {}       # data text -> (the text, its parsed JSON)


@gc_paused
def parse_sse(data: bytes, *, data_json: bool = False, terminator: str | None = None,
              limit: int = MAX_DOCUMENT_BYTES) -> dict:
    """Parse an event-stream body; see docs/loaders.md for the result's shape.

    ``terminator``: the data of the event that ends the stream (e.g. an end-of-stream marker);
    it is not listed in ``events`` and every later non-blank, non-comment line is reported
    in ``after_terminator``. ``data_json``: every event before the terminator must carry
    strict JSON, parsed into ``event["json"]``.
    """
    check_document_size(data, "event stream", limit)
    bom = data.startswith(UTF8_BOM)
    if bom:  # exactly one leading BOM is ignored; a second one becomes part of the first line
        data = data[len(UTF8_BOM):]
    text = decode_utf8(data, "event stream")
    stream = _Stream(data_json, terminator)
    count = 0  # lines read so far
    for lines in _line_slices(text):
        for number, line in enumerate(lines, count + 1):
            # A blank line outside a block dispatches nothing: skip it here, cheaply.
            if line or stream.block_line is not None:
                _read_line(stream, line, number)
        count += len(lines)
    pending = text[_end_of_last_line(text):]
    return _result(stream, bom, pending, count + 1)


def _line_slices(text: str):
    """The complete lines of ``text`` (those followed by a line end), a list per slice of
    about SLICE_CHARS characters. A slice ends just after a whole line end (a CRLF is
    matched as one), so no line end is cut in two."""
    start, end_of_lines = 0, _end_of_last_line(text)
    while start < end_of_lines:
        cut = _LINE_END.search(text, start + SLICE_CHARS, end_of_lines)
        stop = end_of_lines if cut is None else cut.end()
        # The slice ends with a line end, so split's last piece is the empty rest: drop it.
        yield _LINE_END.split(text[start:stop])[:-1]
        start = stop


def _end_of_last_line(text: str) -> int:
    """Offset just after the last line end; what follows is not a line yet (WHATWG discards
    it at the end of the stream)."""
    return max(text.rfind("\n"), text.rfind("\r")) + 1


def _read_line(stream: _Stream, line: str, number: int) -> None:
    if line == "":
        _end_block(stream)
        return
    if line.startswith(":"):
        return
    if stream.block_line is None:
        stream.block_line, stream.block_text = number, line
    if stream.terminated:
        stream.after_terminator.append({"line": number, "text": line})
        return
    field, _, value = line.partition(":")
    if value.startswith(" "):
        value = value[1:]
    if field == "data":
        stream.data_values.append(value)
    elif field == "event":
        stream.event_type = value
    elif field == "id":
        if "\x00" not in value:
            stream.last_event_id = value
    elif field == "retry":
        _set_retry(stream, value)
    # any other field name is ignored, as the standard says


def _set_retry(stream: _Stream, value: str) -> None:
    if _ASCII_DIGITS.fullmatch(value):
        digits = value.lstrip("0") or "0"  # leading zeros are allowed: "03000" is 3000
        if len(digits) <= _RETRY_MAX_DIGITS and int(digits) <= MAX_SSE_RETRY:
            stream.retry = int(digits)


def _end_block(stream: _Stream) -> None:
    """A blank line: dispatch the event (unless the data buffer is empty) and reset."""
    if stream.data_values and not stream.terminated:
        text = "\n".join(stream.data_values)
        if stream.terminator is not None and text == stream.terminator:
            stream.terminated, stream.terminator_line = True, stream.block_line
        else:
            _dispatch(stream, text)
    stream.data_values, stream.event_type = [], ""
    stream.block_line = stream.block_text = None


def _dispatch(stream: _Stream, text: str) -> None:
    if len(stream.events) == MAX_SSE_EVENTS:
        raise LoadError("too-large", f"more than {MAX_SSE_EVENTS} events (the limit for one event stream)",
                        line=stream.block_line)
    shared = stream.shared.get(text) if len(text) <= _SHARED_DATA_CHARS else None
    if shared is not None:
        text = shared[0]
    event = {"index": len(stream.events), "line": stream.block_line, "type": stream.event_type or "message",
             "data": text, "id": stream.last_event_id, "retry": stream.retry}
    if stream.data_json:
        event["json"] = shared[1] if shared is not None else _parse_event_json(event)
    if shared is None and len(text) <= _SHARED_DATA_CHARS and len(stream.shared) < _SHARED_DATA_ENTRIES:
        stream.shared[text] = (text, event.get("json"))
    stream.events.append(event)


def _result(stream: _Stream, bom: bool, pending: str, pending_line: int) -> dict:
    if pending and not pending.startswith(":"):
        if stream.terminated:
            stream.after_terminator.append({"line": pending_line, "text": pending})
        if stream.block_line is None:
            stream.block_line, stream.block_text = pending_line, pending
    unterminated = None if stream.block_line is None else {"line": stream.block_line, "text": stream.block_text}
    return {
        "bom": bom,
        "events": stream.events,
        "terminated": stream.terminated,
        "terminator_line": stream.terminator_line,
        "after_terminator": stream.after_terminator,
        "unterminated": unterminated,
    }


def _parse_event_json(event: dict) -> object:
    try:
        return load_json_text(event["data"])
    except LoadError as exc:
        raise LoadError(
            exc.code, f"event {event['index']} (line {event['line']}): data is not strict JSON: {exc.message}",
            line=event["line"], location=_json_location(event["index"], exc.location),
        ) from None


def _json_location(index: int, location_in_data: str | None) -> str | None:
    """A JSONPath inside one event's data, rebased onto the loader's output (``$.events[i].json...``)."""
    if location_in_data is None:
        return None
    return f"$.events[{index}].json{location_in_data[1:]}"
