"""Server-sent events, interpreted as the WHATWG HTML standard says, with line numbers.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

An own parser rather than a library: httpx-sse and sseclient-py each deviate from the standard
on streams a validator must judge (see docs/loaders.md), and neither reports where in the
bytes an event came from. The whole body is in memory, so this is a loop over lines (one
loop, no call per line); the lines are split a slice at a time, so a stream of a million
tiny events never holds a list of two million line strings beside its events.
"""

from __future__ import annotations

import re

from ._text import UTF8_BOM, decode_utf8
from .errors import LoadError
from .limits import (
    MAX_DOCUMENT_BYTES, MAX_SSE_EVENTS, MAX_SSE_RETRY, check_document_size, gc_paused)
from .strict_json import _UNDECIDED, _scan, fast_value, load_json_text, might_overflow
from .strict_json import _decode as _parse_json

_LINE_END = re.compile(r"\r\n|\r|\n")
# What str.splitlines also takes as a line end, and an event stream does not.
_OTHER_LINE_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_ASCII_DIGITS = re.compile(r"[0-9]+")
_RETRY_MAX_DIGITS = len(str(MAX_SSE_RETRY))
SLICE_CHARS = 1 << 20  # lines are split about this many characters at a time
# Events whose data is identical share one data string and one parsed JSON value (the
# output is read-only): a stream of a million copies of one tiny event then costs about
# one event dict each. Only short texts are remembered, and only so many of them.
_SHARED_DATA_CHARS = 256
_SHARED_DATA_ENTRIES = 1024
# The common stream (LF line ends, one ``data: `` line or comment per block) is parsed without
# the line loop, with the same result; False runs the general path alone (the differential
# test, tests/loaders/test_fast_path_differential.py, compares the two).
FAST_PATH = True


class _Stream:
    """The parser's state between lines (WHATWG's buffers, plus where the block began)."""

    def __init__(self, data_json: bool, terminator: str | None):
        self.data_json, self.terminator = data_json, terminator
        self.events: list[dict] = []
        self.after_terminator: list[dict] = []
        self.terminated = False
        self.terminator_line = None
        self.last_event_id = None         # WHATWG starts with ""; None tells "never set" apart
        self.retry = None
        self.block_line = self.block_text = None  # at the end: the unterminated block's first line
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
    fast = data_json and not might_overflow(data)  # payloads offered to jiter first (strict_json)
    if FAST_PATH:
        blocks = _common_blocks(text)
        if blocks is not None and _common_stream(stream, blocks, fast):
            return _result(stream, bom, "", 0)
        stream = _Stream(data_json, terminator)  # not the common form: the general path decides
    # The line loop, inlined (a call per line was most of the parse): the block's state
    # lives in locals, and what is rare (id, retry, lines after the terminator) on stream.
    data_values: list[str] = []  # one entry per data field; WHATWG's buffer is "\n".join + "\n"
    event_type = ""
    block_line = block_text = None  # the first field line since the last blank line
    events, shared = stream.events, stream.shared
    count = 0  # lines read so far
    for lines in _line_slices(text):
        number = count
        for line in lines:
            number += 1
            if not line:  # a blank line: dispatch the event (unless the data buffer is empty)
                if block_line is None:
                    continue  # outside a block it dispatches nothing
                if data_values:
                    if not stream.terminated:
                        data = "\n".join(data_values)
                        if terminator is not None and data == terminator:
                            stream.terminated, stream.terminator_line = True, block_line
                        else:  # dispatch the event (inlined as well)
                            if len(events) == MAX_SSE_EVENTS:
                                raise LoadError("too-large", f"more than {MAX_SSE_EVENTS} events "
                                                "(the limit for one event stream)", line=block_line)
                            short = len(data) <= _SHARED_DATA_CHARS
                            known = shared.get(data) if short else None
                            if known is not None:
                                data = known[0]
                            event = {"index": len(events), "line": block_line,
                                     "type": event_type or "message", "data": data,
                                     "id": stream.last_event_id, "retry": stream.retry}
                            if data_json:
                                if known is not None:
                                    event["json"] = known[1]
                                else:
                                    value = fast_value(data.encode()) if fast else _UNDECIDED
                                    if value is _UNDECIDED:
                                        try:
                                            value = _parse_json(_scan, data)
                                        except Exception:  # noqa: BLE001 - said as always:
                                            value = _parse_event_json(event)  # raises
                                    event["json"] = value
                            if known is None and short and len(shared) < _SHARED_DATA_ENTRIES:
                                shared[data] = (data, event.get("json"))
                            events.append(event)
                    data_values = []
                event_type = ""
                block_line = block_text = None
                continue
            if line[0] == ":":
                continue  # a comment
            if block_line is None:
                block_line, block_text = number, line
            if stream.terminated:
                stream.after_terminator.append({"line": number, "text": line})
                continue
            if line.startswith("data: "):  # the common line, without a partition's copy
                data_values.append(line[6:])
                continue
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                data_values.append(value)
            elif field == "event":
                event_type = value
            elif field == "id":
                if "\x00" not in value:
                    stream.last_event_id = value
            elif field == "retry":
                _set_retry(stream, value)
            # any other field name is ignored, as the standard says
        count += len(lines)
    stream.block_line, stream.block_text = block_line, block_text
    pending = text[_end_of_last_line(text):]
    return _result(stream, bom, pending, count + 1)


def _common_blocks(text: str) -> list[str] | None:
    """The blocks of a stream in the common form, or None: LF line ends only, every block one
    line followed by one blank line (so block ``i`` is line ``2i + 1`` and the text ends with
    a blank line). Checked by C-level counts: without a CR the general path's lines are the
    text split at LF (a line end is CRLF, CR or LF); the split at ``"\n\n"`` gives one piece
    per block, and a count of LF of twice the blocks leaves no LF inside any of them."""
    if "\r" in text or not text.endswith("\n\n"):
        return None
    blocks = text[:-2].split("\n\n")
    return blocks if text.count("\n") == 2 * len(blocks) else None


def _common_stream(stream: _Stream, blocks: list[str], fast: bool) -> bool:
    """The general path's outcome for common-form ``blocks``, without its per-line loop; False
    (``stream`` to be thrown away) at the first block that is not one ``data: `` line, a
    comment or empty. Why the same: a one-line block is a field line and a blank line, so an
    event dispatches at once with that line as its data and first line; a comment or an empty
    line sets nothing and dispatches nothing; no ``event``, ``id`` or ``retry`` field occurs,
    so type, id and retry keep their initial values. Blocks before the one that differs are
    the general path's as well, so an error raised for one of them is the general path's."""
    terminator, events, after = stream.terminator, stream.events, stream.after_terminator
    line = -1
    for block in blocks:
        line += 2
        if not block.startswith("data: "):
            if block and block[0] != ":":
                return False
            continue  # a comment or a blank line: nothing set, nothing dispatched
        if stream.terminated:
            after.append({"line": line, "text": block})
        elif terminator is not None and block[6:] == terminator:
            stream.terminated, stream.terminator_line = True, line
        else:
            _common_event(stream, block[6:], line, fast)
    return True


def _common_event(stream: _Stream, data: str, line: int, fast: bool) -> None:
    """Dispatch one event as the general path's inlined dispatch does (the same limit, the
    same shared data and value, the same JSON path and errors)."""
    events, shared = stream.events, stream.shared
    if len(events) == MAX_SSE_EVENTS:
        raise LoadError("too-large", f"more than {MAX_SSE_EVENTS} events "
                        "(the limit for one event stream)", line=line)
    short = len(data) <= _SHARED_DATA_CHARS
    known = shared.get(data) if short else None
    if known is not None:
        data = known[0]
    event = {"index": len(events), "line": line, "type": "message", "data": data,
             "id": None, "retry": None}
    if stream.data_json:
        if known is not None:
            event["json"] = known[1]
        else:
            value = fast_value(data.encode()) if fast else _UNDECIDED
            if value is _UNDECIDED:
                try:
                    value = _parse_json(_scan, data)
                except Exception:  # noqa: BLE001 - said as always:
                    value = _parse_event_json(event)  # raises
            event["json"] = value
    if known is None and short and len(shared) < _SHARED_DATA_ENTRIES:
        shared[data] = (data, event.get("json"))
    events.append(event)


def _line_slices(text: str):
    """The complete lines of ``text`` (those followed by a line end), a list per slice of
    about SLICE_CHARS characters. A slice ends just after a whole line end (a CRLF is
    matched as one), so no line end is cut in two."""
    start, end_of_lines = 0, _end_of_last_line(text)
    while start < end_of_lines:
        cut = _LINE_END.search(text, start + SLICE_CHARS, end_of_lines)
        stop = end_of_lines if cut is None else cut.end()
        piece = text[start:stop]
        if _OTHER_LINE_BREAKS.search(piece) is None:
            yield piece.splitlines()  # the same lines, four times faster than the split
        else:  # the slice ends with a line end, so split's last piece is the empty rest
            yield _LINE_END.split(piece)[:-1]
        start = stop


def _end_of_last_line(text: str) -> int:
    """Offset just after the last line end; what follows is not a line yet (WHATWG discards
    it at the end of the stream)."""
    return max(text.rfind("\n"), text.rfind("\r")) + 1


def _set_retry(stream: _Stream, value: str) -> None:
    if _ASCII_DIGITS.fullmatch(value):
        digits = value.lstrip("0") or "0"  # leading zeros are allowed: "03000" is 3000
        if len(digits) <= _RETRY_MAX_DIGITS and int(digits) <= MAX_SSE_RETRY:
            stream.retry = int(digits)


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
