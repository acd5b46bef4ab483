"""Issue 6, "Rejections a person can act on": a rejection names the file and the line of the
broken byte, says a truncated stream is truncated (once), names both files when raw evidence
and a derived record disagree, and shows filled-in references and readable values.

Packets come from the project's writer (tmp_path) and are edited with its mutations; line
numbers are found here independently, by reading the written files.
"""

from __future__ import annotations

import json
from pathlib import Path


from flarespec.adapter.commands import measure
from flarespec.engine.evaluate import evaluate
from flarespec.fixtures.mutations import (
    duplicate_list_item,
    prom_set,
    refresh_digests,
    replace_text,
    sse_set,
)

T0 = "run/r0.ttft-512/r0.ttft-512.q0"  # the first measured request
SSE = f"{T0}/response.sse"
SIDECAR = f"{T0}/observation.json"
AFTER = "run/metrics/r0.ttft-512.after.prom"
COMPLETED = "flare_requests_completed_total"


# `template` and `packet` (a fresh copy of a valid packet) come from tests/conftest.py


def errors(flare_spec, root: Path) -> list:
    return evaluate(flare_spec, root / "packet.json").violations


def data_line(root: Path, rel: str, event: int) -> int:
    """1-based line of the `data:` line of data event ``event`` (the writer writes one data
    line per event; comment lines are not events)."""
    lines = (root / rel).read_text().split("\n")
    starts = [number for number, line in enumerate(lines, 1) if line.startswith("data: {")]
    return starts[event]


def sample_line(root: Path, rel: str, name: str) -> int:
    lines = (root / rel).read_text().split("\n")
    [number] = [n for n, line in enumerate(lines, 1) if line.startswith(name + " ")]
    return number


# ------------------------------------------------------------------ files and lines


def test_a_wrong_counter_names_the_after_snapshot_and_the_sample_line(flare_spec, packet):
    prom_set(packet, AFTER, COMPLETED, 99)
    refresh_digests(packet)
    [violation] = errors(flare_spec, packet)
    assert (violation.rule, violation.file, violation.location, violation.line) == (
        "snapshot.delta.completed", AFTER, f"$.unlabelled.{COMPLETED}",
        sample_line(packet, AFTER, COMPLETED))
    assert violation.as_dict()["line"] == violation.line


def test_an_sse_violation_carries_the_line_of_its_event(flare_spec, packet):
    sse_set(packet, SSE, 2, "$.error", {"message": "overloaded"})
    refresh_digests(packet)
    [violation] = errors(flare_spec, packet)
    assert (violation.rule, violation.file, violation.location, violation.line) == (
        "response.chunk.error", SSE, "$.events[2].json.error", data_line(packet, SSE, 2))


# ------------------------------------------------------------------ raw source vs derived record


def test_an_edited_sse_text_names_both_files_and_the_raw_one(flare_spec, packet):
    """The person edited response.sse; the sidecar still holds the original text. The
    violation is in the derived record (actual), its expected value is the raw stream's,
    and both files are named, the raw one with its line."""
    original = json.loads((packet / SIDECAR).read_text())["events"][3]["text"]
    sse_set(packet, SSE, 3, "$.choices[0].text", "EDITED")
    refresh_digests(packet)
    [violation] = errors(flare_spec, packet)
    line = data_line(packet, SSE, 3)
    assert (violation.rule, violation.file, violation.location) == (
        "observation.events.match-sse", SIDECAR, "$.events[3].text")
    assert (violation.expected, violation.actual) == ("EDITED", original)
    assert violation.expected_from == {"file": SSE, "line": line,
                                       "location": "$.events[3].json.choices[0].text"}
    assert violation.message == (
        f'r0.ttft-512.q0: {SIDECAR} $.events[3].text is {json.dumps(original)}, but the raw '
        f'stream {SSE} line {line} ($.events[3].json.choices[0].text) has "EDITED"')


def test_the_receipt_carries_line_and_expected_from(flare_spec, packet, tmp_path):
    sse_set(packet, SSE, 3, "$.choices[0].text", "EDITED")
    refresh_digests(packet)
    outcome = measure(packet / "packet.json", packet / "packet.json", tmp_path / "receipt.json")
    receipt = json.loads((tmp_path / "receipt.json").read_text())
    [entry] = [v for v in receipt["violations"] if v["rule"] == "observation.events.match-sse"]
    assert outcome.exit_code == 2
    assert entry["expected_from"] == {"file": SSE, "line": data_line(packet, SSE, 3),
                                      "location": "$.events[3].json.choices[0].text"}


# ------------------------------------------------------------------ a truncated stream


def _cuts(text: str) -> list[tuple[str, int, str]]:
    """(what, byte offset, rule): every cut at an event boundary before [DONE], and cuts
    inside a data line, after it, and inside [DONE]."""
    cuts = []
    blocks = text.split("\n\n")
    offset = 0
    for number, block in enumerate(blocks[:-1]):
        end = offset + len(block)
        if block.startswith("data: {"):
            cuts.append((f"inside event line {number}", offset + len(block) // 2,
                         "response.truncated"))
            cuts.append((f"after the data line of block {number}", end + 1,
                         "response.truncated"))
            cuts.append((f"after block {number}", end + 2, "response.done"))
        elif block.startswith("data: [DONE]"):
            cuts.append(("inside [DONE]", offset + 8, "response.truncated"))
            cuts.append(("[DONE] not dispatched", end + 1, "response.truncated"))
        offset = end + 2
    return cuts


def test_every_cut_of_a_stream_is_one_violation_that_says_truncated(flare_spec, packet):
    """Cut anywhere before [DONE] is dispatched: exactly one violation, whose message says
    the stream is truncated; nothing that merely follows from the cut (missing terminal
    chunk, the sidecar's extra events, its terminal usage and native record)."""
    text = (packet / SSE).read_bytes().decode()
    cuts = _cuts(text)
    assert len(cuts) > 30
    for what, offset, rule in cuts:
        (packet / SSE).write_bytes(text[:offset].encode())
        refresh_digests(packet)
        found = [(v.rule, v.message) for v in errors(flare_spec, packet)]
        assert [rule_id for rule_id, _ in found] == [rule], (what, found)
        assert "the stream is truncated" in found[0][1], (what, found)


def test_a_truncated_stream_names_the_line_where_the_cut_event_starts(flare_spec, packet):
    text = (packet / SSE).read_text()
    cut = text.index('"usage": {')  # inside the terminal chunk's data line
    (packet / SSE).write_text(text[:cut])
    refresh_digests(packet)
    [violation] = errors(flare_spec, packet)
    line = text[:cut].count("\n") + 1
    assert violation.rule == "response.truncated"
    assert (violation.file, violation.line, violation.message) == (
        SSE, line, f"r0.ttft-512.q0: the stream is truncated: the event starting at line "
                   f"{line} is never ended by a blank line, so it is not dispatched and no "
                   f"[DONE] event ends the stream")


def test_a_stream_ending_after_an_event_says_where(flare_spec, packet):
    replace_text(packet, SSE, "data: [DONE]\n\n", "")
    refresh_digests(packet)
    [violation] = errors(flare_spec, packet)
    last = len([line for line in (packet / SSE).read_text().split("\n")
                if line.startswith("data: {")]) - 1
    assert (violation.rule, violation.message) == (
        "response.done", f"r0.ttft-512.q0: the stream is truncated: no [DONE] event follows "
                         f"the last event (line {data_line(packet, SSE, last)})")


# ------------------------------------------------------------------ filled references


def test_an_invented_event_names_the_filled_reference(flare_spec, packet):
    duplicate_list_item(packet, SIDECAR, "$.events", -1)
    duplicate_list_item(packet, "run/measurements.json",
                        "$.groups[1].observations[0].events", -1)
    refresh_digests(packet)
    [violation] = errors(flare_spec, packet)
    events = len(json.loads((packet / SIDECAR).read_text())["events"])
    assert (violation.rule, violation.file, violation.location) == (
        "observation.events.no-extra", SSE, f"response:/events/{events - 1}")
    assert violation.message == (
        f"r0.ttft-512.q0: observation.json records event {events - 1}, but the raw stream "
        f"{SSE} has no data event {events - 1}")
    assert "{" not in violation.location
