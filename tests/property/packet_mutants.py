"""Mutations of a written packet for the property tests, and the oracles that judge them.

Kept apart from the test module (and from tests/flare) so that the properties depend only on
the library's writer and mutation helpers, never on another test module:

* ``Inventory``: what a template packet holds (files, JSON member paths, SSE data events,
  Prometheus sample lines), read once per session; mutations are drawn against it.
* ``Mutation`` subclasses: one random edit each (byte flip, truncation, deleted or retyped
  JSON member, duplicated or swapped SSE event, edited/deleted/duplicated sample line, client
  arrival times of one request moved consistently - a valid packet with another metric).
* Oracles written without the validator: ``tree_digest`` (packet bytes unchanged),
  ``delivery_ttft_median`` (the contract's metric, section 9, recomputed from the sidecar
  events), ``leaks`` (a metric or TTFT sample in a rejection receipt).
"""

from __future__ import annotations

import copy
import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from packet_tree import tree_digest  # noqa: F401 (re-exported for the tests)
from flarespec.fixtures.check import describe  # noqa: F401 (re-exported for the tests)
from flarespec.fixtures.mutations import parse_sse_blocks
from flarespec.fixtures.writers import dump_json

ENTRY = "packet.json"
MEASURED_KIND = "ttft-512"  # contract section 9: the one kind whose requests give the metric
JSON_WHITESPACE = b" \t\r\n"
SAMPLE_LINE = re.compile(r"^(?P<head>[^\s{#]+(?:\{.*\})?[ \t]+)(?P<value>\S+)(?P<tail>(?:[ \t]+\S+)?[ \t]*)$")

# ------------------------------------------------------------------------ inventory


def _json_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every member/item path (a tuple of keys and indices) below the document root."""
    found = []
    stack = [(value, prefix)]
    while stack:
        node, where = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, item in items:
            found.append(where + (key,))
            stack.append((item, where + (key,)))
    return sorted(found, key=repr)


@dataclass(frozen=True)
class FileFacts:
    """What one template file holds, enough to aim a mutation at it."""

    path: str
    size: int
    hard_positions: tuple[int, ...]  # byte offsets whose flip always changes a JSON entry's meaning
    json_paths: tuple[tuple, ...] = ()
    sse_events: int = 0  # data events (the terminator included)
    sample_lines: tuple[int, ...] = ()  # 0-based line numbers of Prometheus samples

    def __repr__(self) -> str:
        return f"FileFacts({self.path!r})"


@dataclass(frozen=True)
class Inventory:
    root: Path
    files: tuple[FileFacts, ...]

    def __repr__(self) -> str:  # hypothesis prints strategies' arguments
        return f"Inventory({self.root}, {len(self.files)} files)"

    def of_kind(self, suffix: str) -> tuple[FileFacts, ...]:
        return tuple(facts for facts in self.files if facts.path.endswith(suffix))


def _facts(root: Path, relative: str) -> FileFacts:
    data = (root / relative).read_bytes()
    hard = tuple(i for i, byte in enumerate(data) if byte not in JSON_WHITESPACE) if relative == ENTRY else ()
    paths: tuple = ()
    events, samples = 0, ()
    if relative.endswith(".json"):
        paths = tuple(_json_paths(json.loads(data)))
    elif relative.endswith(".sse"):
        events = sum(1 for _, is_data in parse_sse_blocks(data.decode("utf-8")) if is_data)
    elif relative.endswith(".prom"):
        samples = tuple(n for n, line in enumerate(data.decode("utf-8").split("\n"))
                        if SAMPLE_LINE.match(line))
    return FileFacts(relative, len(data), hard, paths, events, samples)


def inventory(root: Path) -> Inventory:
    """Facts about every regular file of the template packet at ``root``."""
    relatives = sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())
    return Inventory(root, tuple(_facts(root, relative) for relative in relatives))


# ------------------------------------------------------------------------ mutations


class Skipped(Exception):
    """A later mutation of a stack no longer applies (an earlier one broke its target)."""


@dataclass(frozen=True)
class Mutation:
    file: str

    def apply(self, root: Path) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class FlipByte(Mutation):
    position: int
    mask: int  # 1..255, XORed into the byte

    def apply(self, root: Path) -> None:
        target = root / self.file
        data = bytearray(target.read_bytes())
        if self.position >= len(data):
            raise Skipped(self)
        data[self.position] ^= self.mask
        target.write_bytes(bytes(data))


@dataclass(frozen=True)
class Truncate(Mutation):
    length: int

    def apply(self, root: Path) -> None:
        target = root / self.file
        data = target.read_bytes()
        if self.length >= len(data):
            raise Skipped(self)
        target.write_bytes(data[: self.length])


def _load_json(target: Path) -> Any:
    try:
        return json.loads(target.read_bytes())
    except (ValueError, UnicodeDecodeError):
        raise Skipped(target) from None


def _parent_of(document: Any, path: tuple) -> Any:
    node = document
    for key in path[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            raise Skipped(path) from None
    if isinstance(node, dict) and path[-1] in node or isinstance(node, list) and \
            isinstance(path[-1], int) and path[-1] < len(node):
        return node
    raise Skipped(path)


@dataclass(frozen=True)
class DeleteMember(Mutation):
    path: tuple

    def apply(self, root: Path) -> None:
        target = root / self.file
        document = _load_json(target)
        del _parent_of(document, self.path)[self.path[-1]]
        target.write_bytes(dump_json(document))


def json_type(value: Any) -> str:
    """The contract's type-strict classes: a bool is not an int, an int is not a float."""
    return type(value).__name__


def retypings(value: Any) -> list[Any]:
    """Values of another JSON type than ``value``: generic ones and close look-alikes
    (``1`` -> ``1.0`` and ``"1"``, ``true`` -> ``1``, ``"12"`` -> ``12``...)."""
    candidates: list[Any] = [None, True, 0, 1.5, "", "x", [], {}, [copy.deepcopy(value)]]
    if isinstance(value, bool):
        candidates += [int(value), str(value).lower()]
    elif isinstance(value, int):
        candidates += [float(value), str(value)]
    elif isinstance(value, float):
        candidates += [int(value) if value == value and abs(value) != float("inf") else 0, str(value)]
    elif isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value):
        candidates.append(int(value))
    elif isinstance(value, dict):
        candidates.append(list(value.values()))
    elif isinstance(value, list):
        candidates.append({str(i): item for i, item in enumerate(value)})
    return [c for c in candidates if json_type(c) != json_type(value)]


@dataclass(frozen=True)
class RetypeMember(Mutation):
    path: tuple
    choice: int  # index into retypings(current value), modulo their count

    def apply(self, root: Path) -> None:
        target = root / self.file
        document = _load_json(target)
        parent = _parent_of(document, self.path)
        options = retypings(parent[self.path[-1]])
        parent[self.path[-1]] = options[self.choice % len(options)]
        target.write_bytes(dump_json(document))


def _sse_blocks(target: Path) -> tuple[list[str], list[int]]:
    try:
        blocks = parse_sse_blocks(target.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise Skipped(target) from None
    return [text for text, _ in blocks], [i for i, (_, is_data) in enumerate(blocks) if is_data]


@dataclass(frozen=True)
class DuplicateEvent(Mutation):
    event: int  # data event number, modulo the count

    def apply(self, root: Path) -> None:
        target = root / self.file
        blocks, data = _sse_blocks(target)
        if not data:
            raise Skipped(self)
        position = data[self.event % len(data)]
        blocks.insert(position + 1, blocks[position])
        target.write_bytes("".join(blocks).encode("utf-8"))


@dataclass(frozen=True)
class SwapEvents(Mutation):
    first: int
    second: int  # distinct data events (modulo the count) whose texts differ

    def apply(self, root: Path) -> None:
        target = root / self.file
        blocks, data = _sse_blocks(target)
        if len(data) < 2:
            raise Skipped(self)
        a, b = data[self.first % len(data)], data[self.second % len(data)]
        if blocks[a].rstrip("\n") == blocks[b].rstrip("\n"):
            raise Skipped(self)
        blocks[a], blocks[b] = blocks[b], blocks[a]
        target.write_bytes("".join(blocks).encode("utf-8"))


def _prom_lines(target: Path) -> list[str]:
    try:
        return target.read_bytes().decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise Skipped(target) from None


@dataclass(frozen=True)
class EditSample(Mutation):
    line: int
    value: str | None  # the new value text; None deletes the line; "" duplicates it

    def apply(self, root: Path) -> None:
        target = root / self.file
        lines = _prom_lines(target)
        found = SAMPLE_LINE.match(lines[self.line]) if self.line < len(lines) else None
        if found is None:
            raise Skipped(self)
        if self.value is None:
            del lines[self.line]
        elif self.value == "":
            lines.insert(self.line, lines[self.line])
        elif self.value == found["value"]:
            raise Skipped(self)
        else:
            lines[self.line] = f"{found['head']}{self.value}{found['tail']}"
        target.write_bytes("\n".join(lines).encode("utf-8"))


MEASUREMENTS = "run/measurements.json"


@dataclass(frozen=True)
class ShiftArrivals(Mutation):
    """Move every client arrival_ns of one request by ``delta``, in its sidecar and in its
    measurements copy alike: order and copies stay consistent, so the packet stays valid
    while its delivery TTFT changes (unless an arrival drops to 0 or below, which rejects)."""

    delta: int

    def apply(self, root: Path) -> None:
        sidecar_path = root / self.file
        sidecar = _load_json(sidecar_path)
        measurements = _load_json(root / MEASUREMENTS)
        try:
            copies = [o for g in measurements["groups"] for o in g["observations"]
                      if o["request_id"] == sidecar["request_id"]]
        except (KeyError, TypeError):
            raise Skipped(self) from None
        for observation in [sidecar, *copies]:
            for event in observation.get("events") or []:
                if isinstance(event, dict) and type(event.get("arrival_ns")) is int:
                    event["arrival_ns"] += self.delta
        sidecar_path.write_bytes(dump_json(sidecar))
        (root / MEASUREMENTS).write_bytes(dump_json(measurements))


# ------------------------------------------------------------------------ strategies

# Arrival shifts (ns): mostly later; early enough, now and then, to drop an arrival to <= 0.
ARRIVAL_SHIFTS = st.one_of(st.integers(-3_000_000, -1), st.integers(1, 60_000_000))

# Sample values: the exposition grammar's own forms plus look-alikes it does not accept.
SAMPLE_VALUES = st.one_of(
    st.integers(-10, 10_000).map(str),
    st.sampled_from(["0.0", "1e3", "1.2e1", "-0", "NaN", "+Inf", "-Inf", "Inf", "nan", "0x10",
                     "1_000", "４０", "٤٠", "1e999", "1.5", "abc"]),
)


@st.composite
def flip_byte(draw, facts: FileFacts, strict: bool) -> Mutation:
    positions = facts.hard_positions if strict and facts.path == ENTRY else None
    if positions is not None:
        position = positions[draw(st.integers(0, len(positions) - 1))]
    else:
        position = draw(st.integers(0, facts.size - 1))
    return FlipByte(facts.path, position, draw(st.integers(1, 255)))


@st.composite
def truncate(draw, facts: FileFacts, strict: bool) -> Mutation:
    # Dropping only packet.json's final newline leaves the same JSON: strictly, cut more.
    longest = facts.size - (2 if strict and facts.path == ENTRY else 1)
    return Truncate(facts.path, draw(st.integers(0, longest)))


@st.composite
def json_edit(draw, facts: FileFacts) -> Mutation:
    path = draw(st.sampled_from(facts.json_paths))
    if draw(st.booleans()):
        return DeleteMember(facts.path, path)
    return RetypeMember(facts.path, path, draw(st.integers(0, 15)))


@st.composite
def sse_edit(draw, facts: FileFacts) -> Mutation:
    first = draw(st.integers(0, facts.sse_events - 1))
    if draw(st.booleans()):
        return DuplicateEvent(facts.path, first)
    second = (first + 1 + draw(st.integers(0, facts.sse_events - 2))) % facts.sse_events
    return SwapEvents(facts.path, first, second)


@st.composite
def sample_edit(draw, facts: FileFacts) -> Mutation:
    line = draw(st.sampled_from(facts.sample_lines))
    value = draw(st.one_of(SAMPLE_VALUES, st.sampled_from([None, ""])))
    return EditSample(facts.path, line, value)


@st.composite
def mutation(draw, inv: Inventory, strict: bool) -> Mutation:
    """One edit of the inventory's packet. ``strict``: only edits that change what the
    packet says (a byte flip or truncation of packet.json that leaves equivalent JSON, e.g.
    a space turned into a tab, is excluded); every edit of another file changes its bytes."""
    kind = draw(st.sampled_from(["flip", "truncate", "json", "sse", "prom", "arrivals"]))
    if kind in ("flip", "truncate"):
        facts = draw(st.sampled_from(inv.files))
        return draw((flip_byte if kind == "flip" else truncate)(facts, strict))
    if kind == "json":
        return draw(json_edit(draw(st.sampled_from(inv.of_kind(".json")))))
    if kind == "sse":
        return draw(sse_edit(draw(st.sampled_from(inv.of_kind(".sse")))))
    if kind == "arrivals":
        facts = draw(st.sampled_from(inv.of_kind("/observation.json")))
        return ShiftArrivals(facts.path, draw(ARRIVAL_SHIFTS))
    return draw(sample_edit(draw(st.sampled_from(inv.of_kind(".prom")))))


# ------------------------------------------------------------------------ oracles


def _read(path: Path) -> Any:
    return json.loads(path.read_bytes())


def ttft_samples(entry: Path) -> list[int]:
    """Delivery TTFT of every measured request (contract section 9), read straight from the
    sidecars named by the corpus: the arrival_ns of the first event with non-empty
    token_ids. Exact on a valid packet; raises on a packet it cannot read."""
    root = entry.parent
    packet = _read(entry)
    corpus = _read(root / packet["corpus"])
    samples = []
    for group in corpus["groups"]:
        if group["kind"] != MEASURED_KIND:
            continue
        for request in group["requests"]:
            observation = _read(root / packet["run"] / group["id"] / request["id"] / "observation.json")
            first = next(event for event in observation["events"] if event["token_ids"])
            samples.append(first["arrival_ns"])
    return samples


def delivery_ttft_median(entry: Path) -> int | float:
    return statistics.median(ttft_samples(entry))


def forbidden_numbers(*entries: Path) -> set:
    """The TTFT samples and medians of readable packets: numbers no rejection may carry."""
    found: set = set()
    for entry in entries:
        try:
            samples = ttft_samples(entry)
        except Exception:  # a broken packet: nothing exact to look for
            continue
        found |= set(samples)
        if samples:
            found.add(statistics.median(samples))
    return found


QUOTING_KEYS = ("expected", "actual", "message")  # may quote the raw evidence they are about


def leaks(receipt: dict, forbidden: set) -> list[str]:
    """Places in a rejection receipt that carry a metric key or one of ``forbidden`` (as a
    number or inside a text), outside the expected/actual/message of its violations and
    warnings (docs/receipt.md: those may quote the evidence they are about)."""
    entries = receipt.get("violations", []) + receipt.get("warnings", [])
    stack = [({k: v for k, v in receipt.items() if k not in ("violations", "warnings")}, "$"),
             ([{k: v for k, v in e.items() if k not in QUOTING_KEYS} for e in entries], "$.entries")]
    integers = [int(f) for f in forbidden if float(f).is_integer()]
    found = []
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            found += [f"{at}.{key}" for key in node if key in ("metric", "metrics")]
            stack += [(item, f"{at}.{key}") for key, item in node.items()]
        elif isinstance(node, list):
            stack += [(item, f"{at}[{number}]") for number, item in enumerate(node)]
        elif isinstance(node, (int, float)) and not isinstance(node, bool) and node in forbidden:
            found.append(f"{at} = {node!r}")
        elif isinstance(node, str) and any(re.search(rf"(?<!\d){n}(?!\d)", node) for n in integers):
            found.append(f"{at} (text)")
    return found
