"""Work the engine no longer repeats (issue 9), with the verdicts unchanged.

Each test counts the repeated work it removed (file opens, hashes, real-path lookups,
sibling rebuilds) and checks the report is the one the plain path gives.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path

import pytest
from document_files import compile_text
from hypothesis import given, settings
from hypothesis import strategies as st

from flarespec.engine import evaluate as evaluate_module
from flarespec.engine import paths as paths_module
from flarespec.engine.evaluate import evaluate
from flarespec.engine import readers
from flarespec.engine.scopes import Bindings
from flarespec.loaders import files as files_module
from flarespec.loaders import limits as limits_module
from flarespec.loaders.files import FileStore, clear_process_hash_cache


def compiled(tmp_path: Path, spec_id: str, text: str):
    return compile_text(tmp_path / "spec", text, f"{spec_id.replace('/', '-')}.yaml")


def write_json(path: Path, value) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(value).encode()
    path.write_bytes(data)
    return data


@pytest.fixture(autouse=True)
def fresh_hashes():
    clear_process_hash_cache()
    yield
    clear_process_hash_cache()


@pytest.fixture
def opens(monkeypatch):
    """Real paths opened by any FileStore, counted."""
    counted = Counter()
    original = FileStore._open

    def counting(self, real):
        counted[os.path.relpath(real, self.root)] += 1
        return original(self, real)

    monkeypatch.setattr(FileStore, "_open", counting)
    return counted


# --------------------------------------------------------------------------- the file store


def test_a_file_read_whole_is_not_read_again_for_its_digest(tmp_path, opens):
    data = write_json(tmp_path / "a.json", {"x": 1})
    store = FileStore(tmp_path)
    assert store.read_bytes("a.json") == data
    assert store.sha256("a.json") == hashlib.sha256(data).hexdigest()
    assert opens == {"a.json": 1} and store.hash_count == 1


def test_a_second_store_reuses_the_process_hash_of_a_whole_read(tmp_path):
    write_json(tmp_path / "a.json", {"x": 1})
    FileStore(tmp_path).read_bytes("a.json")
    second = FileStore(tmp_path)
    second.read_bytes("a.json")
    assert second.hash_count == 0


def test_the_real_path_is_worked_out_once_per_store(tmp_path, monkeypatch):
    write_json(tmp_path / "d" / "a.json", {"x": 1})
    store = FileStore(tmp_path)
    calls = Counter()
    original = os.lstat

    def counting(path, *args, **kwargs):
        calls[os.path.basename(path)] += 1
        return original(path, *args, **kwargs)

    monkeypatch.setattr(files_module.os, "lstat", counting)
    store.read_bytes("d/a.json")
    store.sha256("d/a.json")
    store.size("d/a.json")
    # issue 15: the directory's real path once; a plain file in it needs one look at its
    # last segment (its real path is the directory's plus its name: loaders/files.py
    # _real_path), and none again for its digest or size
    assert calls == {"d": 1, "a.json": 1}


def test_a_cached_real_path_still_refuses_what_the_checks_refuse(tmp_path):
    """Only a path that passed every check is cached: a bad one fails every time."""
    outside = tmp_path / "outside.json"
    write_json(outside, {})
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.json").symlink_to(outside)
    store = FileStore(root)
    for _ in range(2):
        with pytest.raises(files_module.LoadError) as escape:
            store.read_bytes("link.json")
        assert escape.value.code == "path-escape"
        with pytest.raises(files_module.LoadError) as dotdot:
            store.sha256("../outside.json")
        assert dotdot.value.code == "path-dotdot"


# --------------------------------------------------------------------------- the engine

MANIFEST_SPEC = """
flarespec: 1
id: toy/manifest
title: a manifest of digests checked before its files are loaded
documents:
  index: {loader: json, entry: true}
  item_file: {loader: json, each: item, path: "items/{item.name}.json"}
  blob: {loader: bytes, path: "blob.bin"}
iterations:
  item: {over: "index:$.items[*]"}
rules:
  - id: toy.index.files.digest
    description: Every listed digest is the SHA-256 of the file's bytes.
    given: "index:$.files"
    assert: {manifest_digests: [item_file, blob]}
  - id: toy.item.positive
    description: Every item's total is positive.
    for_each: item
    given: "item_file:$.total"
    assert: {range: {min: 1}}
"""


def manifest_packet(root: Path, *, broken_digest: bool = False, pad: int = 0) -> Path:
    files = {}
    for name, item in (("a", {"total": 1, "pad": "x" * pad}), ("b", {"total": 0})):
        data = write_json(root / "items" / f"{name}.json", item)
        files[f"items/{name}.json"] = hashlib.sha256(data).hexdigest()
    (root / "blob.bin").write_bytes(b"x" * 100)
    files["blob.bin"] = hashlib.sha256(b"x" * 100).hexdigest()
    if broken_digest:
        files["items/a.json"] = "0" * 64
    write_json(root / "index.json", {"items": [{"name": "a"}, {"name": "b"}], "files": files})
    return root / "index.json"


def test_every_file_is_opened_once_when_its_digest_is_checked_before_it_is_parsed(
        tmp_path, opens):
    spec = compiled(tmp_path, "toy/manifest", MANIFEST_SPEC)
    report = evaluate(spec, manifest_packet(tmp_path / "p"))
    assert [(v.rule, v.file) for v in report.violations] == [
        ("toy.item.positive", "items/b.json")]
    # the parsed files once each; the bytes-loaded blob is never read whole (a large
    # package): its head, then a streamed hash
    assert opens == {"index.json": 1, "items/a.json": 1, "items/b.json": 1, "blob.bin": 2}
    assert set(report.files) == {"index.json", "items/a.json", "items/b.json", "blob.bin"}


def test_a_wrong_digest_is_reported_as_before(tmp_path):
    spec = compiled(tmp_path, "toy/manifest", MANIFEST_SPEC)
    report = evaluate(spec, manifest_packet(tmp_path / "p", broken_digest=True))
    actual = hashlib.sha256(json.dumps({"total": 1, "pad": ""}).encode()).hexdigest()
    assert [(v.rule, v.location, v.expected) for v in report.violations] == [
        ("toy.index.files.digest", "$.files['items/a.json']", actual),
        ("toy.item.positive", "$.total", {"min": 1})]


def test_a_file_too_large_to_parse_keeps_its_streamed_digest_and_its_load_error(
        tmp_path, monkeypatch):
    """The read-ahead for a digest is only an optimisation: when the file cannot be read
    whole, the streamed hash answers and the loader reports the size as it always did."""
    spec = compiled(tmp_path, "toy/manifest", MANIFEST_SPEC)
    entry = manifest_packet(tmp_path / "p", pad=1000)
    limit = 600
    assert entry.stat().st_size < limit < (tmp_path / "p" / "items" / "a.json").stat().st_size
    monkeypatch.setattr(limits_module, "MAX_DOCUMENT_BYTES", limit)
    report = evaluate(spec, entry)
    # no digest violation: the streamed hash of items/a.json matched its manifest entry
    assert [(v.rule, v.file) for v in report.violations] == [
        ("document.item_file.too-large", "items/a.json"), ("toy.item.positive", "items/b.json")]


# --------------------------------------------------------------------------- at: previous

PREVIOUS_SPEC = """
flarespec: 1
id: toy/previous
title: each shelf's total equals the previous shelf's
documents:
  index: {loader: json, entry: true}
  shelf_file: {loader: json, each: shelf, path: "shelves/{shelf.name}.json"}
iterations:
  shelf: {over: "index:$.shelves[*]"}
rules:
  - id: toy.shelf.same-total-as-previous
    description: A shelf's total equals the previous shelf's.
    severity: warning
    for_each: shelf
    given: "shelf_file:$.total"
    assert: {equals: {ref: "shelf_file:$.total", at: {shelf: previous}}}
"""


def shelves(root: Path, totals: list[int]) -> Path:
    names = [f"s{i}" for i in range(len(totals))]
    for name, total in zip(names, totals):
        write_json(root / "shelves" / f"{name}.json", {"total": total})
    write_json(root / "index.json", {"shelves": [{"name": n} for n in names]})
    return root / "index.json"


def test_previous_builds_the_sibling_list_once_per_parent(tmp_path, monkeypatch):
    spec = compiled(tmp_path, "toy/previous", PREVIOUS_SPEC)
    built = Counter()
    original = Bindings._children

    def counting(self, iteration, parent):
        built[iteration.name] += 1
        return original(self, iteration, parent)

    monkeypatch.setattr(Bindings, "_children", counting)
    totals = [1] * 30 + [2] + [2] * 9
    report = evaluate(spec, shelves(tmp_path / "p", totals))
    assert built["shelf"] <= 2  # the iteration's own scopes, and the siblings once
    assert [(v.binding, v.message) for v in report.warnings] == [
        ("s0", "cannot evaluate: shelf has no element -1 here (3 elements)".replace("3", "40")),
        ("s30", report.warnings[1].message)]
    assert report.warnings[1].expected == 1 and report.warnings[1].actual == 2


def test_continuity_warning_of_the_bundled_catalog_is_unchanged(tmp_path):
    """The bundled spec's `at: {group: previous}` rule still warns, and only it, on the
    catalog case that breaks counter continuity."""
    from flarespec.adapter.commands import measure
    from flarespec.adapter.select import bundled_specs
    from flarespec.fixtures.catalog import build_case, load_catalog

    spec = next(s for s in bundled_specs() if s.id == "flare/bce032c0")
    catalog = Path(__file__).resolve().parents[2] / "fixtures" / "flare" / "catalog.yaml"
    case = next(c for c in load_catalog(catalog)[1]
                if c.name == "valid-continuity-break-is-a-warning")
    packet, peer = build_case(case, tmp_path / "case", spec)
    receipt = measure(packet, peer, tmp_path / "out" / "receipt.json").receipt
    assert receipt["status"] == "pass"
    assert {w["rule"] for w in receipt["warnings"]} == {
        "snapshot.counters.continuity"}


def test_a_parse_error_met_while_hashing_is_reported_where_the_document_loads(tmp_path):
    """items/a.json is parsed early (for its digest) and is broken: its violation still
    comes when the item rules load it, after the manifest rule, as on the plain path."""
    spec = compiled(tmp_path, "toy/manifest", MANIFEST_SPEC)
    entry = manifest_packet(tmp_path / "p")
    broken = tmp_path / "p" / "items" / "a.json"
    broken.write_bytes(b'{"total": 1, "total": 2}')
    index = json.loads(entry.read_bytes())
    index["files"]["items/a.json"] = hashlib.sha256(broken.read_bytes()).hexdigest()
    index["files"]["blob.bin"] = "0" * 64  # checked after items/a.json, reported first
    entry.write_text(json.dumps(index))
    report = evaluate(spec, entry)
    assert [(v.rule, v.location) for v in report.violations][:1] == [
        ("toy.index.files.digest", "$.files['blob.bin']")]
    assert [(v.rule, v.file) for v in report.violations][1:] == [
        ("document.item_file.duplicate-key", "items/a.json"),
        ("toy.item.positive", "items/b.json")]


CONTAINERS = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.text(max_size=2)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["0", "1", "2", "00", "-1", "x"]), inner, max_size=3)),
    max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(container=CONTAINERS, index=st.integers(0, 5))
def test_a_step_by_the_element_index_reads_what_the_pointer_step_reads(container, index):
    """readers.by_local (a pass's ``/events/{own@index}``, inline) is paths._index_step."""
    names = readers.namespace()
    lines = ["def read(c, index):"] + ["    " + line for line in readers.step_lines(
        "c", "found", readers.by_local("index"), lambda value: readers.constant(names, value))]
    lines.append("    return [] if found is _MISSING else [found]")
    read = readers.compiled(lines, names, "read", "<by index>")
    assert read(container, index) == paths_module._index_step(container, index)
