"""Server-sent events, interpreted as the WHATWG HTML standard says, with line numbers.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

An own parser rather than a library: httpx-sse and sseclient-py each deviate from the standard
on streams a validator must judge (see docs/loaders.md), and neither reports where in the
bytes an event came from. The whole body is in memory, so this is a loop over lines.
"""

from __future__ import annotations

import re

from ._text import UTF8_BOM, decode_utf8
from .errors import LoadError
from .strict_json import load_json_text

_LINE_END = re.compile(r"\r\n|\r|\n")
_ASCII_DIGITS = re.compile(r"[0-9]+")


def parse_sse(data: bytes, *, data_json: bool = False, terminator: str | None = None) -> dict:
    """Parse an event-stream body; see docs/loaders.md for the result's shape.

    ``terminator``: the data of the event that ends the stream (e.g. an end-of-stream marker);
    it is not listed in ``events`` and every later non-blank, non-comment line is reported
    in ``after_terminator``. ``data_json``: every event before the terminator must carry
    strict JSON, parsed into ``event["json"]``.
    """
    bom = data.startswith(UTF8_BOM)
    if bom:  # exactly one leading BOM is ignored; a second one becomes part of the first line
        data = data[len(UTF8_BOM):]
    lines = _LINE_END.split(decode_utf8(data, "event stream"))
    # The piece after the last line end is not a line yet; WHATWG discards it at EOF.
    complete_lines, pending = lines[:-1], lines[-1]

    events: list[dict] = []
    after_terminator: list[dict] = []
    terminated = False
    terminator_line = None
    data_values: list[str] = []   # one entry per data field; WHATWG's buffer is "\n".join + "\n"
    event_type = ""
    last_event_id = None          # WHATWG starts with ""; None tells "never set" apart
    retry = None
    block_line = block_text = None  # first field line since the last blank line

    for number, line in enumerate(complete_lines, 1):
        if line == "":
            if data_values and not terminated:
                text = "\n".join(data_values)
                if terminator is not None and text == terminator:
                    terminated, terminator_line = True, block_line
                else:
                    event = {"index": len(events), "line": block_line, "type": event_type or "message",
                             "data": text, "id": last_event_id, "retry": retry}
                    if data_json:
                        event["json"] = _parse_event_json(event)
                    events.append(event)
            data_values, event_type = [], ""
            block_line = block_text = None
            continue
        if line.startswith(":"):
            continue
        if block_line is None:
            block_line, block_text = number, line
        if terminated:
            after_terminator.append({"line": number, "text": line})
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
                last_event_id = value
        elif field == "retry":
            if _ASCII_DIGITS.fullmatch(value):
                retry = int(value)
        # any other field name is ignored, as the standard says

    if pending and not pending.startswith(":"):
        if terminated:
            after_terminator.append({"line": len(lines), "text": pending})
        if block_line is None:
            block_line, block_text = len(lines), pending
    unterminated = None if block_line is None else {"line": block_line, "text": block_text}

    return {
        "bom": bom,
        "events": events,
        "terminated": terminated,
        "terminator_line": terminator_line,
        "after_terminator": after_terminator,
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
