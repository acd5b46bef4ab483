"""The compiled-spec cache (flarespec.compiler.cache): a hit behaves as a fresh compile, any
change or doubt rebuilds, an untrusted file is never unpickled, and a cache that cannot be
written changes nothing."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest
from bounded_call import finishes_within

import flarespec
from flarespec.adapter.commands import measure
from flarespec.engine.evaluate import Evaluation
from flarespec.compiler import cache
from flarespec.compiler import open as spec_open
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary

BUNDLED = "flare/bce032c0"
# every bundled spec: the cache keeps them as one entry, compiled together
BUNDLED_IDS = sorted(spec_file.id for spec_file in SpecLibrary().all())
CHILD = """\
flarespec: 1
id: cached/child
title: {title}
extends: {parent}
"""


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private, empty cache and a process that has compiled nothing yet."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.DIRECTORY_VARIABLE, str(folder))
    monkeypatch.delenv(cache.DISABLE_VARIABLE, raising=False)
    forget_compiled(monkeypatch)
    return folder


def forget_compiled(monkeypatch):
    """What a new process knows: no compiled spec in memory (the cache files stay)."""
    monkeypatch.setattr(spec_open, "_compiled", {})
    monkeypatch.setattr(spec_open, "_bundled_specs", None)


@pytest.fixture
def compiles(monkeypatch):
    """Counts real compilations."""
    calls = []
    real = spec_open.compile_spec

    def counting(resolved):
        calls.append(resolved.id)
        return real(resolved)
    monkeypatch.setattr(spec_open, "compile_spec", counting)
    return calls


def entries(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".pickle"))


def child_spec(tmp_path, title="first", parent=BUNDLED):
    path = tmp_path / "child.yaml"
    path.write_text(CHILD.format(title=title, parent=parent))
    return path


def break_a_file(entry):
    """Change one listed file's bytes without its digest: a violation, whatever the spec."""
    listed = json.loads(entry.read_text())["files"]
    target = entry.parent / sorted(listed)[0]
    target.write_bytes(target.read_bytes() + b" ")


def test_every_bundled_spec_round_trips_through_pickle(flare_spec, packet_pair):
    for spec in spec_open.bundled_compiled():
        copy = pickle.loads(pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL))
        assert copy.resolved.digest() == spec.resolved.digest()
        assert copy.resolved.data.key_marks == spec.resolved.data.key_marks
        assert [rule.kind for rule in copy.rules] == [rule.kind for rule in spec.rules]
        assert all(a.kind is b.kind for a, b in zip(copy.rules, spec.rules))
        entry = packet_pair[0]
        assert Evaluation(copy, entry).run().violations == \
            Evaluation(spec, entry).run().violations


def test_a_cache_hit_compiles_nothing_and_writes_the_same_receipts(cache_dir, compiles,
                                                                    packet_pair, tmp_path,
                                                                    monkeypatch):
    a, b = packet_pair
    broken = shutil.copytree(b.parent, tmp_path / "broken") / b.name
    break_a_file(broken)
    fresh = [measure(a, b, tmp_path / "fresh-pass.json").receipt,
             measure(broken, a, tmp_path / "fresh-reject.json").receipt]
    assert compiles and entries(cache_dir) == ["bundled.pickle"]
    compiles.clear()
    forget_compiled(monkeypatch)
    cached = [measure(a, b, tmp_path / "cached-pass.json").receipt,
              measure(broken, a, tmp_path / "cached-reject.json").receipt]
    assert compiles == []
    assert cached == fresh
    assert [r["status"] for r in cached] == ["pass", "rejected"]
    assert (tmp_path / "cached-reject.json").read_bytes() == \
        (tmp_path / "fresh-reject.json").read_bytes()


def test_a_warm_cache_opens_a_bundled_id_without_reading_yaml(cache_dir, compiles,
                                                              monkeypatch):
    spec_open.bundled_compiled()
    forget_compiled(monkeypatch)
    monkeypatch.setattr(spec_open, "_bundled_library", None)
    spec_open.check_spec_ref(BUNDLED)
    assert spec_open.open_compiled(BUNDLED).id == BUNDLED
    assert len(compiles) == len(BUNDLED_IDS) and spec_open._bundled_library is None


def test_a_changed_spec_file_is_compiled_again(cache_dir, compiles, tmp_path, monkeypatch):
    path = child_spec(tmp_path, "first")
    assert spec_open.open_compiled(path).resolved.data["title"] == "first"
    forget_compiled(monkeypatch)
    assert spec_open.open_compiled(path).resolved.data["title"] == "first"
    assert compiles == ["cached/child"]
    child_spec(tmp_path, "second")
    forget_compiled(monkeypatch)
    assert spec_open.open_compiled(path).resolved.data["title"] == "second"
    assert compiles == ["cached/child"] * 2


def test_a_parent_beside_the_spec_is_a_witness(cache_dir, compiles, tmp_path, monkeypatch):
    parent = tmp_path / "parent.yaml"
    bundled = spec_open.open_spec(BUNDLED).chain[0].path.read_text()
    parent.write_text(bundled.replace(f"id: {BUNDLED}", "id: cached/parent", 1))
    path = child_spec(tmp_path, parent="cached/parent")
    spec_open.open_compiled(path)
    forget_compiled(monkeypatch)
    spec_open.open_compiled(path)
    assert len(compiles) == 1
    parent.write_text(parent.read_text() + "\n# changed\n")
    forget_compiled(monkeypatch)
    spec_open.open_compiled(path)
    assert len(compiles) == 2


def test_a_parent_appearing_beside_the_spec_rebuilds(cache_dir, compiles, tmp_path,
                                                      monkeypatch):
    """Looked for beside the spec and absent, the bundled parent was used; a file appearing
    there now wins, so the entry no longer holds."""
    path = child_spec(tmp_path)
    spec_open.open_compiled(path)
    bundled = spec_open.open_spec(BUNDLED).chain[0].path
    (tmp_path / bundled.name).write_text(bundled.read_text())
    forget_compiled(monkeypatch)
    spec_open.open_compiled(path)
    assert len(compiles) == 2


def test_a_fifo_appearing_beside_the_spec_is_never_opened(cache_dir, tmp_path, monkeypatch):
    """A witness is checked as spec files are read: a FIFO where a parent was looked for is
    not a hit (the spec reader refuses it by name) and never blocks the check."""
    path = child_spec(tmp_path)
    spec_open.open_compiled(path)
    bundled = spec_open.open_spec(BUNDLED).chain[0].path
    os.mkfifo(tmp_path / bundled.name)
    forget_compiled(monkeypatch)
    with pytest.raises(SpecInvalid, match="FIFO"):
        finishes_within(10, spec_open.open_compiled, path)


@pytest.mark.parametrize("change", ["version", "code"])
def test_another_version_or_code_rebuilds(cache_dir, compiles, monkeypatch, change):
    spec_open.bundled_compiled()
    forget_compiled(monkeypatch)
    if change == "version":
        monkeypatch.setattr(flarespec, "__version__", flarespec.__version__ + ".post1")
    else:
        monkeypatch.setattr(cache, "_code_digest", "0" * 64)
    spec_open.bundled_compiled()
    assert len(compiles) == 2 * len(BUNDLED_IDS)


def test_the_code_digest_follows_the_sources(cache_dir, monkeypatch):
    """Kept in the cache keyed on the sources' stat listing: a changed listing hashes the
    sources again instead of trusting the stored digest."""
    monkeypatch.setattr(cache, "_code_digest", None)
    digest = cache.code_digest()
    stamp = cache_dir / cache.CODE_STAMP
    stat_key = stamp.read_text().split("\n")[0]
    stamp.write_text(f"{stat_key}\n{'1' * 64}")
    monkeypatch.setattr(cache, "_code_digest", None)
    assert cache.code_digest() == "1" * 64  # the listing matched: the stored digest is used
    stamp.write_text(f"{'2' * 64}\n{'1' * 64}")
    monkeypatch.setattr(cache, "_code_digest", None)
    assert cache.code_digest() == digest


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "bad payload"])
def test_a_corrupt_entry_is_ignored_and_replaced(cache_dir, compiles, monkeypatch, damage):
    spec_open.bundled_compiled()
    entry = cache_dir / "bundled.pickle"
    raw = entry.read_bytes()
    header = raw.partition(b"\n")[0]
    entry.write_bytes({
        "garbage": b"\x80\x04not a pickle",
        "truncated": raw[:len(raw) // 2],
        "empty": b"",
        "bad payload": header.rsplit(b" ", 1)[0] + b" " + _digest(b"x") + b"\nx",
    }[damage])
    forget_compiled(monkeypatch)
    assert [spec.id for spec in spec_open.bundled_compiled()] == BUNDLED_IDS
    assert len(compiles) == 2 * len(BUNDLED_IDS)
    assert entry.read_bytes() == raw


def test_a_well_formed_entry_of_another_type_is_ignored(cache_dir, compiles, monkeypatch):
    spec_open.bundled_compiled()
    entry_key = entry_key_of(cache_dir / "bundled.pickle")
    cache.store("bundled.pickle", entry_key, {"not": "specs"})
    forget_compiled(monkeypatch)
    spec_open.bundled_compiled()
    assert len(compiles) == 2 * len(BUNDLED_IDS)


def _digest(data: bytes) -> bytes:
    import hashlib

    return hashlib.sha256(data).hexdigest().encode()


def entry_key_of(path) -> str:
    return path.read_bytes().partition(b"\n")[0].split(b" ")[1].decode()


@pytest.mark.parametrize("trust", ["group-writable file", "world-writable file",
                                   "group-writable directory", "symlinked file",
                                   "symlinked directory"])
def test_an_untrusted_entry_is_never_unpickled(cache_dir, compiles, monkeypatch, tmp_path,
                                               trust):
    spec_open.bundled_compiled()
    entry = cache_dir / "bundled.pickle"
    if trust == "group-writable file":
        entry.chmod(0o620)
    elif trust == "world-writable file":
        entry.chmod(0o602)
    elif trust == "group-writable directory":
        cache_dir.chmod(0o770)
    elif trust == "symlinked file":
        elsewhere = tmp_path / "elsewhere.pickle"
        entry.rename(elsewhere)
        entry.symlink_to(elsewhere)
    else:
        moved = tmp_path / "real-cache"
        cache_dir.rename(moved)
        cache_dir.symlink_to(moved)
    loads = []
    monkeypatch.setattr(cache.pickle, "loads", lambda data: loads.append(data))
    forget_compiled(monkeypatch)
    spec_open.bundled_compiled()
    assert loads == [] and len(compiles) == 2 * len(BUNDLED_IDS)


@pytest.mark.parametrize("value", ["0", "off", "OFF"])
def test_cache_off_reads_and_writes_nothing(cache_dir, compiles, monkeypatch, tmp_path, value):
    monkeypatch.setenv(cache.DISABLE_VARIABLE, value)
    spec_open.bundled_compiled()
    spec_open.open_compiled(child_spec(tmp_path))
    assert not cache_dir.exists()
    assert cache.directory() is None


def test_entries_are_private(cache_dir):
    spec_open.bundled_compiled()
    assert cache_dir.stat().st_mode & 0o777 == 0o700
    assert {(cache_dir / name).stat().st_mode & 0o777 for name in os.listdir(cache_dir)} == \
        {0o600}


def test_an_unwritable_cache_is_silent(tmp_path, monkeypatch, compiles):
    """A cache directory that cannot exist (its parent is a file) or a full disk: the spec
    opens all the same and nothing is raised."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(cache.DIRECTORY_VARIABLE, str(blocker / "cache"))
    monkeypatch.delenv(cache.DISABLE_VARIABLE, raising=False)
    forget_compiled(monkeypatch)
    assert [spec.id for spec in spec_open.bundled_compiled()] == BUNDLED_IDS

    def full(*_args):
        raise OSError(28, "No space left on device")
    monkeypatch.setenv(cache.DIRECTORY_VARIABLE, str(tmp_path / "full"))
    monkeypatch.setattr(cache.os, "replace", full)
    forget_compiled(monkeypatch)
    assert [spec.id for spec in spec_open.bundled_compiled()] == BUNDLED_IDS
    assert entries(tmp_path / "full") == []


def test_a_spec_error_is_never_cached(cache_dir, tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(CHILD.format(title="t", parent=BUNDLED) +
                    "rules:\n  - id: r\n    description: d\n    given: 'constants:$'\n"
                    "    assert: {no_such_kind: 1}\n")
    with pytest.raises(SpecInvalid):
        spec_open.open_compiled(path)
    assert not cache_dir.exists() or entries(cache_dir) == []


def test_a_new_process_writes_the_same_receipt_cold_and_warm(packet_pair, tmp_path):
    """The command line, twice, with one new cache: compiled, then loaded from the cache."""
    a, b = packet_pair
    environment = {**os.environ, cache.DIRECTORY_VARIABLE: str(tmp_path / "cache")}
    environment.pop(cache.DISABLE_VARIABLE, None)
    receipts = []
    for run in ("cold", "warm"):
        output = tmp_path / f"{run}.json"
        subprocess.run([sys.executable, "-m", "flarespec", "measure", "--packet", str(a),
                        "--peer", str(b), "--output", str(output), "--quiet"],
                       env=environment, check=True, timeout=120)
        receipts.append(output.read_bytes())
        assert entries(tmp_path / "cache") == ["bundled.pickle"]
    assert receipts[0] == receipts[1]
