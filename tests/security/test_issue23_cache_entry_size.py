"""Issue 23, item 13: a compiled-spec cache entry was read whole before its header and HMAC
were checked: a 3 GiB (sparse) file at the entry's name cost 38 s and 9.4 GB RSS per
``measure``. Now its size is checked from ``fstat`` first (``cache.MAX_ENTRY_BYTES``), then
its header (magic and key) is read alone, and only then the payload; an oversized or
foreign entry is ignored and the spec compiled (and the entry written) again, as an entry
with a bad HMAC is.
"""

from __future__ import annotations

import json
import os
import pickle

import pytest
from hostile import run_bounded

from flarespec.compiler import cache
from flarespec.compiler import open as spec_open

MIB = 1 << 20


@pytest.fixture
def private(tmp_path, monkeypatch):
    """An empty cache and key of this test; nothing compiled in memory."""
    monkeypatch.setenv(cache.DIRECTORY_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.KEY_VARIABLE, str(tmp_path / "key" / "cache-key"))
    monkeypatch.delenv(cache.DISABLE_VARIABLE, raising=False)
    monkeypatch.setattr(cache, "_keys", {})
    monkeypatch.setattr(spec_open, "_compiled", {})
    monkeypatch.setattr(spec_open, "_bundled_specs", None)
    cache.refuse(None)
    return tmp_path / "cache"


class _Counted:
    """A file handle whose reads are added up in ``counts``."""

    def __init__(self, handle, counts: list):
        self.handle, self.counts = handle, counts

    def read(self, size=-1):
        data = self.handle.read(size)
        self.counts.append(len(data))
        return data

    def __getattr__(self, name):  # write, fileno, ...: the handle's own
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


def bytes_read(monkeypatch) -> list:
    """Every read of a cache file from now on, in bytes."""
    counts: list = []
    real = os.fdopen
    monkeypatch.setattr(cache.os, "fdopen", lambda *a, **k: _Counted(real(*a, **k), counts))
    return counts


def _an_entry(private) -> tuple[str, str]:
    key = cache.key("issue23", "entry")
    cache.store("entry.pickle", key, {"compiled": True})
    assert cache.load("entry.pickle", key, lambda value: True) == {"compiled": True}
    return "entry.pickle", key


def test_a_file_over_the_bound_at_an_entry_s_name_is_not_read(private, monkeypatch):
    name, key = _an_entry(private)
    os.truncate(private / name, cache.MAX_ENTRY_BYTES + 1)  # its header intact, then zeros
    counts = bytes_read(monkeypatch)
    assert cache.load(name, key, lambda value: True) is None
    assert sum(counts) == 0  # refused from fstat's size


def test_an_oversized_code_digest_file_is_not_read(private, monkeypatch):
    monkeypatch.setattr(cache, "_code_digest", None)
    digest = cache.code_digest()  # writes the code-digest file, then it is reused
    stamp = private / cache.CODE_STAMP
    assert stamp.stat().st_size == 129
    os.truncate(stamp, 64 * MIB)
    counts = bytes_read(monkeypatch)
    monkeypatch.setattr(cache, "_code_digest", None)
    assert cache.code_digest() == digest  # hashed again from the sources
    assert sum(counts) == 0


def test_an_entry_of_another_key_is_not_read_past_its_header(private, monkeypatch):
    name, key = _an_entry(private)
    other = cache.key("issue23", "another entry")
    counts = bytes_read(monkeypatch)
    assert cache.load(name, other, lambda value: True) is None
    assert sum(counts) == len(cache.MAGIC) + 1 + len(other) + 1  # "<magic> <key> " only


def test_an_entry_at_the_bound_is_read_and_nothing_more(private, monkeypatch):
    name, key = _an_entry(private)
    size = (private / name).stat().st_size
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", size)
    counts = bytes_read(monkeypatch)
    assert cache.load(name, key, lambda value: True) == {"compiled": True}
    assert sum(counts) == size
    with open(private / name, "ab") as grown:  # grown past the bound while being read:
        grown.write(b"x")                        # the size check alone would not see it
    real_fstat = os.fstat
    monkeypatch.setattr(cache.os, "fstat", lambda fd: os.stat_result(
        (*real_fstat(fd)[:6], size, *real_fstat(fd)[7:])))
    counts.clear()
    assert cache.load(name, key, lambda value: True) is None
    assert sum(counts) == size + 1


def test_an_entry_over_the_bound_is_not_written(private, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 4096)
    key = cache.key("issue23", "large")
    cache.store("large.pickle", key, b"x" * 8192)
    cache.store("small.pickle", key, b"x" * 16)
    assert not (private / "large.pickle").exists() and (private / "small.pickle").exists()


def test_the_bundled_entry_is_far_below_the_bound(private):
    spec_open.bundled_compiled()
    size = (private / spec_open.BUNDLED_ENTRY).stat().st_size
    assert 0 < size < cache.MAX_ENTRY_BYTES // 64, size
    assert pickle.loads((private / spec_open.BUNDLED_ENTRY).read_bytes().partition(b"\n")[2])


def test_measure_with_a_3_gib_sparse_bundled_entry_passes_fast_and_small(
        packet_pair, private, monkeypatch, tmp_path):
    """End to end, as the runner runs it (run_bounded: RLIMIT_AS 1.5 GiB, 40 s)."""
    a, b = packet_pair
    first = run_bounded(["measure", "--packet", str(a), "--peer", str(b),
                         "--output", str(tmp_path / "first.json"), "--quiet"])
    assert first.exit_code == 0, first
    entry = private / spec_open.BUNDLED_ENTRY
    written = entry.stat().st_size
    os.truncate(entry, 3 << 30)
    run = run_bounded(["measure", "--packet", str(a), "--peer", str(b),
                       "--output", str(tmp_path / "r.json"), "--quiet"])
    assert run.exit_code == 0 and "Traceback" not in run.stderr, run
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "pass"
    assert run.wall_s < 20 and run.max_rss_bytes < 300 * MIB, run
    assert entry.stat().st_size == written  # compiled and written again, as a bad entry is
