"""Mutation operations change exactly what they name, and fail loudly when they hit nothing;
the catalog loader checks case shapes and builds mutated packets."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import textwrap
from pathlib import Path

import pytest

from flarespec.fixtures.catalog import Case, CatalogError, build_case, load_catalog
from flarespec.fixtures.mutations import OPERATIONS, MutationError, apply_mutation
from flarespec.fixtures.writers import write_packet

REQ = "run/r0.ttft-512/r0.ttft-512.q0"
OBS = f"{REQ}/observation.json"
SSE = f"{REQ}/response.sse"
BEFORE = "run/metrics/r0.ttft-512.before.prom"


@pytest.fixture(scope="module")
def template(flare_spec, tmp_path_factory) -> Path:
    return write_packet(tmp_path_factory.mktemp("template") / "p", flare_spec).parent


@pytest.fixture
def root(template, tmp_path) -> Path:
    # Copying a written packet is much faster than writing one per test.
    target = tmp_path / "packet"
    shutil.copytree(template, target, symlinks=True)
    return target


def load(root: Path, relative: str):
    return json.loads((root / relative).read_bytes())


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def changed_files(before: dict[str, bytes], root: Path) -> set[str]:
    after = snapshot(root)
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def run(root: Path, op: str, **args) -> None:
    apply_mutation(root, {"op": op, **args})


def test_every_documented_operation_is_registered():
    assert set(OPERATIONS) == {
        "set_json", "delete_json", "replace_text", "move_list_item", "duplicate_list_item", "delete_list_item",
        "split_array_item", "sse_set", "sse_delete", "prom_set", "prom_add", "prom_append", "prom_delete",
        "remove_file", "write_file", "symlink", "make_fifo", "refresh_digests", "set_json_sha256",
        "list_to_object",
        "replace_bytes", "replace_line", "truncate_line", "swap_list_items", "delete_keys",
        "add_json", "sse_duplicate", "sse_duplicate_list_item"}


def test_unknown_op_and_bad_arguments_fail(root):
    with pytest.raises(MutationError, match="unknown mutation op"):
        run(root, "set_jsn", file="corpus.json", path="$.name", value="x")
    with pytest.raises(MutationError, match="bad arguments"):
        run(root, "set_json", file="corpus.json", path="$.name")  # value missing


# -------------------------------------------------------------------- JSON


def test_set_json_changes_only_the_selected_value(root):
    before = snapshot(root)
    run(root, "set_json", file=OBS, path="$.http_status", value=500)
    assert changed_files(before, root) == {OBS}
    obs = load(root, OBS)
    assert obs["http_status"] == 500
    original = json.loads(before[OBS])
    original["http_status"] = 500
    assert obs == original
    # Same serialisation style as the writer.
    assert (root / OBS).read_bytes() == (json.dumps(original, indent=2) + "\n").encode()


def test_set_json_filters_quoted_keys_and_multiple_matches(root):
    run(root, "set_json", file="run/measurements.json", path="$.groups[?@.kind=='ttft-512'].failed", value=True)
    flags = {g["kind"]: g["failed"] for g in load(root, "run/measurements.json")["groups"]}
    assert flags.pop("ttft-512") is True and not any(flags.values())
    run(root, "set_json", file="packet.json", path=f"$.files['{SSE}']", value="0" * 64)
    assert load(root, "packet.json")["files"][SSE] == "0" * 64
    run(root, "set_json", file=OBS, path="$.events[*].finish_reason", value="stop")
    assert {e["finish_reason"] for e in load(root, OBS)["events"]} == {"stop"}


def test_set_json_creates_a_missing_final_member_but_not_parents(root):
    run(root, "set_json", file=OBS, path="$.analysis.http_prefill_tokens_per_second", value=1.5)
    assert load(root, OBS)["analysis"]["http_prefill_tokens_per_second"] == 1.5
    with pytest.raises(MutationError, match="matched nothing"):
        run(root, "set_json", file=OBS, path="$.analyis.http_prefill_tokens_per_second", value=1.5)
    with pytest.raises(MutationError, match="matched nothing"):
        run(root, "set_json", file="run/measurements.json", path="$.groups[?@.kind=='nope'].failed", value=True)


def test_delete_json_members_and_list_items(root):
    run(root, "delete_json", file="packet.json", path=f"$.files['{SSE}']")
    assert SSE not in load(root, "packet.json")["files"]
    run(root, "delete_json", file=OBS, path="$.events[0:2]")
    assert [e["seq"] for e in load(root, OBS)["events"]][:1] == [2]
    with pytest.raises(MutationError, match="matched nothing"):
        run(root, "delete_json", file=OBS, path="$.no_such_member")


def test_list_item_operations(root):
    path = "$.groups[0].requests"
    corpus_before = load(root, "corpus.json")
    run(root, "move_list_item", file="corpus.json", path="$.groups", src=1, dst=0)
    groups = load(root, "corpus.json")["groups"]
    assert [g["id"] for g in groups[:2]] == ["r0.ttft-512", "r0.warmup"]
    assert len(groups) == len(corpus_before["groups"])

    run(root, "duplicate_list_item", file="corpus.json", path=path, index=-1)
    requests = load(root, "corpus.json")["groups"][0]["requests"]
    assert len(requests) == 4 and requests[-1] == requests[-2]

    run(root, "delete_list_item", file="corpus.json", path=path, index=0)
    assert [r["id"] for r in load(root, "corpus.json")["groups"][0]["requests"]] == \
        ["r0.ttft-512.q1", "r0.ttft-512.q2", "r0.ttft-512.q2"]

    with pytest.raises(MutationError, match="out of range"):
        run(root, "delete_list_item", file="corpus.json", path=path, index=9)
    with pytest.raises(MutationError, match="exactly one list"):
        run(root, "delete_list_item", file="corpus.json", path="$.groups[*].requests", index=0)
    with pytest.raises(MutationError, match="not a list"):
        run(root, "duplicate_list_item", file="corpus.json", path="$.name", index=0)


def test_split_array_item_invents_per_token_events(root):
    original = load(root, OBS)["events"]
    first = next(i for i, e in enumerate(original) if len(e["token_ids"]) >= 2)
    run(root, "split_array_item", file=OBS, list="$.events", split_field="token_ids",
        offset_field="arrival_ns", offset_step=1000, renumber="seq")
    events = load(root, OBS)["events"]
    width = len(original[first]["token_ids"])
    assert len(events) == len(original) + width - 1
    assert [e["seq"] for e in events] == list(range(len(events)))
    pieces = events[first:first + width]
    assert [p["token_ids"] for p in pieces] == [[t] for t in original[first]["token_ids"]]
    assert [p["arrival_ns"] for p in pieces] == [original[first]["arrival_ns"] + k * 1000 for k in range(width)]
    assert "".join(p["text"] for p in pieces) == original[first]["text"]
    assert events[:first] == original[:first]  # earlier events untouched
    with pytest.raises(MutationError, match="no element"):
        run(root, "split_array_item", file=OBS, list="$.events", split_field="token_ids",
            offset_field="arrival_ns", offset_step=1000, min_len=99)


# -------------------------------------------------------------------- text


def test_replace_text(root):
    run(root, "replace_text", file=OBS, old='"http_status": 200', new='"http_status": 200, "http_status": 200')
    assert (root / OBS).read_text().count('"http_status": 200') == 2
    run(root, "replace_text", file=OBS, old='"done": true', new='"done": NaN')
    assert '"done": NaN' in (root / OBS).read_text()
    with pytest.raises(MutationError, match="not found"):
        run(root, "replace_text", file=OBS, old="no such text", new="x")


def test_replace_text_count(root):
    text = (root / SSE).read_text()
    run(root, "replace_text", file=SSE, old="data: ", new="data:", count=2)
    assert (root / SSE).read_text() == text.replace("data: ", "data:", 2)


# --------------------------------------------------------------------- SSE


def sse_blocks(raw: str) -> list[str]:
    return raw.split("\n\n")


def test_sse_set_edits_one_event_and_keeps_the_rest_byte_identical(root):
    before = (root / SSE).read_text()
    run(root, "sse_set", file=SSE, event=1, path="$.choices[0].finish_reason", value="stop")
    after = (root / SSE).read_text()
    old, new = sse_blocks(before), sse_blocks(after)
    assert len(old) == len(new)
    # Block 0 is the start chunk, block 1 the keep-alive comment, block 2 data event 1.
    assert [i for i, (a, b) in enumerate(zip(old, new)) if a != b] == [2]
    assert json.loads(new[2][len("data: "):])["choices"][0]["finish_reason"] == "stop"


def test_sse_negative_indices_count_the_terminator(root):
    run(root, "sse_set", file=SSE, event=-2, path="$.usage.completion_tokens", value=99)
    terminal = sse_blocks((root / SSE).read_text())[-3]
    assert json.loads(terminal[len("data: "):])["usage"]["completion_tokens"] == 99
    with pytest.raises(MutationError, match="does not carry JSON"):
        run(root, "sse_set", file=SSE, event=-1, path="$.x", value=1)
    with pytest.raises(MutationError, match="out of range"):
        run(root, "sse_set", file=SSE, event=500, path="$.x", value=1)


def test_sse_duplicate_inserts_a_copy_after_the_event(root):
    before = sse_blocks((root / SSE).read_text())
    run(root, "sse_duplicate", file=SSE, event=-3)  # the last token chunk
    after = sse_blocks((root / SSE).read_text())
    # (blocks from the end: "" after the last separator, the terminator, the terminal
    # chunk, the last token chunk) one block more: the copy right after the original,
    # everything else byte-identical
    assert after[:-4] == before[:-3] and after[-5] == after[-4] == before[-4]
    assert after[-3:] == before[-3:]
    run(root, "sse_set", file=SSE, event=-3, path="$.choices[0].token_ids", value=[])
    edited = sse_blocks((root / SSE).read_text())
    assert json.loads(edited[-4][len("data: "):])["choices"][0]["token_ids"] == []
    assert edited[-5] == before[-4]  # the original kept
    with pytest.raises(MutationError, match="out of range"):
        run(root, "sse_duplicate", file=SSE, event=500)
    with pytest.raises(MutationError, match="no such file"):
        run(root, "sse_duplicate", file=f"{REQ}/absent.sse", event=0)


def test_sse_duplicate_list_item_copies_an_item_inside_one_event(root):
    before = sse_blocks((root / SSE).read_text())
    run(root, "sse_duplicate_list_item", file=SSE, event=-2, path="$.flare.token_timestamps_ns",
        index=-1)
    after = sse_blocks((root / SSE).read_text())
    stamps = json.loads(before[-3][len("data: "):])["flare"]["token_timestamps_ns"]
    assert json.loads(after[-3][len("data: "):])["flare"]["token_timestamps_ns"] == \
        stamps + stamps[-1:]
    assert after[:-3] + after[-2:] == before[:-3] + before[-2:]
    with pytest.raises(MutationError, match="must select exactly one list"):
        run(root, "sse_duplicate_list_item", file=SSE, event=-2, path="$.flare.nothing", index=0)


def test_sse_delete(root):
    run(root, "sse_delete", file=SSE, event=-2, path="$.flare")
    terminal = json.loads(sse_blocks((root / SSE).read_text())[-3][len("data: "):])
    assert "flare" not in terminal and "usage" in terminal
    with pytest.raises(MutationError, match="matched nothing"):
        run(root, "sse_delete", file=SSE, event=-2, path="$.flare")


# -------------------------------------------------------------- Prometheus


def test_prom_set_changes_one_line_and_keeps_timestamps(root):
    before = (root / BEFORE).read_text().split("\n")
    run(root, "prom_set", file=BEFORE, name="flare_scheduler_running_requests", value="NaN")
    run(root, "prom_set", file=BEFORE, name="flare_uptime_seconds", value=12.5)
    after = (root / BEFORE).read_text().split("\n")
    diff = [(a, b) for a, b in zip(before, after) if a != b]
    assert diff[0] == ("flare_scheduler_running_requests 0", "flare_scheduler_running_requests NaN")
    assert diff[1][1].startswith("flare_uptime_seconds 12.5 17")  # timestamp kept
    assert len(diff) == 2 and len(before) == len(after)
    # A labelled-only family has no unlabelled sample to set.
    with pytest.raises(MutationError, match="no unlabelled sample"):
        run(root, "prom_set", file=BEFORE, name="flare_http_requests_total", value="1")


def test_prom_delete_and_append(root):
    name = "flare_kv_pages_free"
    run(root, "prom_delete", file=BEFORE, name=name)
    lines = (root / BEFORE).read_text().split("\n")
    assert not any(line.startswith(f"{name} ") for line in lines)
    assert f"# TYPE {name} gauge" in lines
    with pytest.raises(MutationError, match="no unlabelled sample"):
        run(root, "prom_delete", file=BEFORE, name=name)
    run(root, "prom_append", file=BEFORE, line=f"{name}{{}} 7")
    assert (root / BEFORE).read_text().endswith(f"\n{name}{{}} 7\n")
    run(root, "prom_set", file=BEFORE, name=name, value="8")  # `name{}` is unlabelled too
    assert (root / BEFORE).read_text().endswith(f"\n{name}{{}} 8\n")


# -------------------------------------------------------------- filesystem


def test_filesystem_operations(root):
    run(root, "remove_file", file=SSE)
    assert not (root / SSE).exists()
    with pytest.raises(MutationError, match="no such file"):
        run(root, "remove_file", file=SSE)

    run(root, "write_file", file="extra/new.txt", text="hello\n")
    assert (root / "extra/new.txt").read_text() == "hello\n"

    run(root, "symlink", link=OBS, target="../../../corpus.json")
    assert os.readlink(root / OBS) == "../../../corpus.json"
    assert (root / OBS).resolve() == (root / "corpus.json").resolve()
    run(root, "symlink", link=OBS, target="/etc/hostname")  # replaces the existing link
    assert os.readlink(root / OBS) == "/etc/hostname"

    run(root, "make_fifo", file=f"{REQ}/request.json")
    assert stat.S_ISFIFO(os.lstat(root / f"{REQ}/request.json").st_mode)


def test_refresh_digests_updates_regular_files_only(root):
    old = load(root, "packet.json")["files"]
    run(root, "write_file", file="corpus.json", text="{}\n")
    run(root, "remove_file", file=SSE)
    run(root, "make_fifo", file=OBS)
    run(root, "refresh_digests")
    new = load(root, "packet.json")["files"]
    assert new["corpus.json"] == hashlib.sha256(b"{}\n").hexdigest() != old["corpus.json"]
    assert new[SSE] == old[SSE] and new[OBS] == old[OBS]  # missing / FIFO: unchanged, never opened
    assert {k for k in new if new[k] != old[k]} == {"corpus.json"}


# ----------------------------------------------------------------- catalog


CATALOG = """\
spec: flare/bce032c0
cases:
  - name: valid
    description: The writer's packet as written.
    expect: {accept: true}
  - name: missing-response-sse
    description: A raw SSE file listed in the manifest is gone.
    writer: {repetitions: 1}
    mutate:
      - {op: remove_file, file: run/r0.ttft-512/r0.ttft-512.q0/response.sse}
    expect:
      rejected_by: [packet.files.exists]
  - name: digest-drift
    description: An observation changes after its digest was recorded.
    mutate:
      - {op: set_json, file: run/r0.ttft-512/r0.ttft-512.q0/observation.json, path: $.done, value: false}
    refresh_digests: false
    peer:
      writer: {seed: 7}
    expect:
      rejected_by: [packet.files.digest]
"""


def write_catalog(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "catalog.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_load_catalog_defaults_and_shapes(tmp_path):
    spec, cases = load_catalog(write_catalog(tmp_path, CATALOG))
    assert spec == "flare/bce032c0"
    assert [c.name for c in cases] == ["valid", "missing-response-sse", "digest-drift"]
    valid, missing, drift = cases
    assert (valid.writer, valid.mutate, valid.refresh_digests, valid.peer) == ({}, [], True, None)
    assert missing.mutate == [{"op": "remove_file", "file": "run/r0.ttft-512/r0.ttft-512.q0/response.sse"}]
    assert drift.refresh_digests is False
    assert drift.peer == {"writer": {"seed": 7}, "mutate": [], "refresh_digests": True}
    assert drift.expect == {"rejected_by": ["packet.files.digest"]}


def test_build_case_without_and_with_peer(flare_spec, tmp_path):
    _, cases = load_catalog(write_catalog(tmp_path, CATALOG))
    packet, peer = build_case(cases[1], tmp_path / "missing", flare_spec)
    assert packet == peer == tmp_path / "missing/packet/packet.json"
    assert not (packet.parent / "run/r0.ttft-512/r0.ttft-512.q0/response.sse").exists()

    packet, peer = build_case(cases[2], tmp_path / "drift", flare_spec)
    assert (packet, peer) == (tmp_path / "drift/packet/packet.json", tmp_path / "drift/peer/packet.json")
    recorded = load(packet.parent, "packet.json")["files"][OBS]
    actual = hashlib.sha256((packet.parent / OBS).read_bytes()).hexdigest()
    assert recorded != actual  # refresh_digests: false kept the drift
    assert load(peer.parent, OBS)["done"] is True


def test_build_case_refreshes_digests_by_default(flare_spec, tmp_path):
    case = Case(name="x", description="d", mutate=[{"op": "set_json", "file": OBS, "path": "$.done", "value": False}],
                expect={"rejected_by": ["r"]})
    packet, _ = build_case(case, tmp_path, flare_spec)
    assert load(packet.parent, "packet.json")["files"][OBS] == \
        hashlib.sha256((packet.parent / OBS).read_bytes()).hexdigest()


def test_a_mutation_that_hits_nothing_fails_the_build(flare_spec, tmp_path):
    case = Case(name="x", description="d", mutate=[{"op": "remove_file", "file": "no/such/file"}],
                expect={"accept": True})
    with pytest.raises(MutationError):
        build_case(case, tmp_path, flare_spec)


@pytest.mark.parametrize("bad, message", [
    ("{op: remove_fil, file: x}", "unknown op 'remove_fil'"),
    ("{op: remove_file, path: x}", "bad arguments"),
    ("{op: remove_file}", "bad arguments"),
    ("nope", "must be a mapping with an 'op' key"),
])
def test_catalog_rejects_bad_mutations(tmp_path, bad, message):
    text = f"spec: s\ncases:\n  - name: a\n    description: d\n    mutate: [{bad}]\n    expect: {{accept: true}}\n"
    with pytest.raises(CatalogError, match=message):
        load_catalog(write_catalog(tmp_path, text))


@pytest.mark.parametrize("extra, message", [
    ("    colour: red\n", "unknown key"),
    ("    writer: {repetitons: 2}\n", "unknown option"),
    ("    peer: {writer: {}, mutations: []}\n", "unknown key"),
    ("    refresh_digests: yes please\n", "true or false"),
])
def test_catalog_rejects_unknown_keys(tmp_path, extra, message):
    text = f"spec: s\ncases:\n  - name: a\n    description: d\n    expect: {{accept: true}}\n{extra}"
    with pytest.raises(CatalogError, match=message):
        load_catalog(write_catalog(tmp_path, text))


@pytest.mark.parametrize("expect, message", [
    ("{}", "exactly one of"),
    ("{accept: true, rejected_by: [x]}", "exactly one of"),
    ("{accept: false}", "must be true"),
    ("{rejected_by: []}", "at least one"),
    ("{rejected_by: x}", "list of rule id"),
    ("{rejected: [x]}", "unknown key"),
])
def test_catalog_rejects_bad_expectations(tmp_path, expect, message):
    text = f"spec: s\ncases:\n  - name: a\n    description: d\n    expect: {expect}\n"
    with pytest.raises(CatalogError, match=message):
        load_catalog(write_catalog(tmp_path, text))


def test_catalog_rejects_duplicate_names_and_missing_parts(tmp_path):
    case = "  - name: a\n    description: d\n    expect: {accept: true}\n"
    with pytest.raises(CatalogError, match="duplicate case name"):
        load_catalog(write_catalog(tmp_path, "spec: s\ncases:\n" + case + case))
    with pytest.raises(CatalogError, match="description"):
        load_catalog(write_catalog(tmp_path, "spec: s\ncases:\n  - name: a\n    expect: {accept: true}\n"))
    with pytest.raises(CatalogError, match="spec"):
        load_catalog(write_catalog(tmp_path, "cases:\n" + case))


def test_mutations_never_reach_outside_the_packet(root):
    with pytest.raises(MutationError, match="root-relative"):
        run(root, "write_file", file="../escaped.txt", text="x")
    with pytest.raises(MutationError, match="root-relative"):
        run(root, "remove_file", file="/etc/hostname")
    assert not (root.parent / "escaped.txt").exists()


def test_add_json_adds_to_every_selected_integer(root):
    events = load(root, OBS)["events"]
    run(root, "add_json", file=OBS, path="$.events[1:].seq", delta=1)
    run(root, "add_json", file=OBS, path="$.events[0].seq", delta="-3")  # decimal text
    seqs = [event["seq"] for event in load(root, OBS)["events"]]
    assert seqs == [events[0]["seq"] - 3] + [event["seq"] + 1 for event in events[1:]]
    with pytest.raises(MutationError, match="matched nothing"):
        run(root, "add_json", file=OBS, path="$.events[500].seq", delta=1)
    with pytest.raises(MutationError, match="not an integer"):
        run(root, "add_json", file=OBS, path="$.events[0].token_ids", delta=1)
    with pytest.raises(MutationError, match="not an integer"):
        run(root, "add_json", file=OBS, path="$.done", delta=1)  # true is no integer here
    with pytest.raises(MutationError, match="delta must be an integer"):
        run(root, "add_json", file=OBS, path="$.events[0].seq", delta=True)
    assert [event["seq"] for event in load(root, OBS)["events"]] == seqs  # refusals change nothing


def test_prom_add_moves_a_counter_relative_to_the_written_value(root):
    name = "flare_requests_completed_total"
    line = next(l for l in (root / BEFORE).read_text().split("\n") if l.startswith(name + " "))
    start = int(line.split()[1])
    run(root, "prom_add", file=BEFORE, name=name, delta=5)
    run(root, "prom_add", file=BEFORE, name=name, delta="-2")  # decimal text, as a catalog writes it
    assert f"\n{name} {start + 3}\n" in (root / BEFORE).read_text()
    with pytest.raises(MutationError, match="delta must be an integer"):
        run(root, "prom_add", file=BEFORE, name=name, delta=1.5)
    run(root, "prom_set", file=BEFORE, name=name, value="1.5")
    with pytest.raises(MutationError, match="not an integer"):
        run(root, "prom_add", file=BEFORE, name=name, delta=1)
