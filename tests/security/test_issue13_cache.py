"""Issue 13: a compiled-spec cache inside a packet root, and cache files this user's
flarespec did not write.

A cache directory (``FLARESPEC_CACHE_DIR``, ``XDG_CACHE_HOME``, ``HOME``) inside a packet
root used to write ``bundled.pickle`` into the packet and to unpickle one the packet
shipped. Now the cache is refused for such a run (a note on stderr, the verdict unchanged)
and an entry is unpickled only when it carries an HMAC made with this user's cache key,
kept outside the cache directory (docs/architecture.md "Compiled-spec cache").
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from packet_tree import tree_digest

from flarespec.adapter.commands import measure
from flarespec.compiler import cache
from flarespec.compiler import open as spec_open

CLI = (sys.executable, "-m", "flarespec")


class Plant:
    """Unpickling this creates ``marker``: the proof that a planted pickle ran code."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def bundled_key() -> str:
    return cache.key(spec_open.BUNDLED_ENTRY, *spec_open._inputs(spec_open._bundled_files()))


def plant(folder: Path, marker: Path) -> None:
    """What a packet could ship today: an entry with the right key and payload digest (both
    computable by anyone with the same flarespec) whose payload runs code."""
    import hashlib

    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    payload = pickle.dumps(Plant(marker))
    header = b" ".join((cache.MAGIC, bundled_key().encode(),
                        hashlib.sha256(payload).hexdigest().encode()))
    entry = folder / spec_open.BUNDLED_ENTRY
    entry.write_bytes(header + b"\n" + payload)
    entry.chmod(0o600)


def environment(**changes: str | None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in (cache.DIRECTORY_VARIABLE, "XDG_CACHE_HOME", cache.DISABLE_VARIABLE)}
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run(env: dict, *args) -> subprocess.CompletedProcess:
    done = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.mark.parametrize("variable", ["FLARESPEC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"])
@pytest.mark.parametrize("which", ["packet", "peer"])
def test_a_cache_inside_a_packet_root_is_neither_read_nor_written(packet_pair, tmp_path,
                                                                   variable, which):
    a, b = packet_pair
    root = (a if which == "packet" else b).parent
    base = root / "lab"
    folder = {"FLARESPEC_CACHE_DIR": base, "XDG_CACHE_HOME": base / "flarespec",
              "HOME": base / ".cache" / "flarespec"}[variable]
    marker = tmp_path / "planted-pickle-ran"
    plant(folder, marker)
    before = {a: tree_digest(a.parent), b: tree_digest(b.parent)}
    output = tmp_path / "receipts" / "r.json"
    done = run(environment(**{variable: str(base)}), "measure", "--packet", a, "--peer", b,
               "--output", output)
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "a pickle shipped inside the packet was unpickled"
    assert {a: tree_digest(a.parent), b: tree_digest(b.parent)} == before
    assert "note: the compiled-spec cache directory" in done.stderr
    assert f"lies inside the packet root {root}" in done.stderr
    assert "not used for this run" in done.stderr
    assert json.loads(output.read_text())["status"] == "pass"
    quiet = run(environment(**{variable: str(base)}), "measure", "--packet", a, "--peer", b,
                "--output", output, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_validate_pair_refuses_a_cache_inside_the_candidate(packet_pair, tmp_path):
    a, b = packet_pair
    folder = b.parent / "cache"
    marker = tmp_path / "ran"
    plant(folder, marker)
    before = tree_digest(b.parent)
    done = run(environment(FLARESPEC_CACHE_DIR=str(folder)), "validate-pair", "--baseline",
               a, "--candidate", b, "--output", tmp_path / "pair.json", "--spec",
               "flare/bce032c0")
    assert done.returncode == 0, done.stderr
    assert not marker.exists() and tree_digest(b.parent) == before
    assert "not used for this run" in done.stderr


def test_the_library_refuses_it_too_and_lifts_the_refusal_for_the_next_run(
        packet_pair, tmp_path, monkeypatch):
    a, b = packet_pair
    inside = a.parent / "c"
    monkeypatch.setenv(cache.DIRECTORY_VARIABLE, str(inside))
    monkeypatch.setattr(spec_open, "_bundled_specs", None)
    before = tree_digest(a.parent)
    outcome = measure(a, b, tmp_path / "r.json")
    assert outcome.exit_code == 0 and tree_digest(a.parent) == before
    assert cache.refused() and cache.directory() is None
    outside = tmp_path / "outside-cache"
    monkeypatch.setenv(cache.DIRECTORY_VARIABLE, str(outside))
    monkeypatch.setattr(spec_open, "_bundled_specs", None)
    assert measure(a, b, tmp_path / "r2.json").exit_code == 0
    assert cache.refused() is None and (outside / spec_open.BUNDLED_ENTRY).is_file()


def test_a_key_file_inside_a_packet_root_refuses_the_cache(packet_pair, tmp_path):
    a, b = packet_pair
    before = tree_digest(a.parent)
    done = run(environment(FLARESPEC_CACHE_DIR=str(tmp_path / "c"),
                           FLARESPEC_CACHE_KEY_FILE=str(a.parent / "key")),
               "measure", "--packet", a, "--peer", b, "--output", tmp_path / "r.json")
    assert done.returncode == 0 and "cache key file" in done.stderr
    assert tree_digest(a.parent) == before and not (tmp_path / "c").exists()


# --------------------------------------------------------------- proof of authorship


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
    return tmp_path


def loads_recorded(monkeypatch) -> list:
    calls = []
    real = pickle.loads
    monkeypatch.setattr(cache.pickle, "loads", lambda data: calls.append(data) or real(data))
    return calls


def test_an_entry_this_user_did_not_write_is_never_unpickled(private, monkeypatch):
    """Owned by the user, 0600, right key, right payload digest: still not proven."""
    marker = private / "ran"
    plant(private / "cache", marker)
    calls = loads_recorded(monkeypatch)
    assert [s.id for s in spec_open.bundled_compiled()] == sorted(
        spec_file.id for spec_file in spec_open.bundled_library().all())
    assert calls == [] and not marker.exists()
    # the entry was replaced by one this run wrote, and that one is loaded next time
    monkeypatch.setattr(spec_open, "_bundled_specs", None)
    spec_open.bundled_compiled()
    assert len(calls) == 1


def test_an_entry_made_with_another_key_is_never_unpickled(private, monkeypatch, tmp_path):
    spec_open.bundled_compiled()  # written with this user's key
    monkeypatch.setenv(cache.KEY_VARIABLE, str(tmp_path / "other" / "cache-key"))
    monkeypatch.setattr(cache, "_keys", {})
    monkeypatch.setattr(spec_open, "_bundled_specs", None)
    calls = loads_recorded(monkeypatch)
    spec_open.bundled_compiled()
    assert calls == []


@pytest.mark.parametrize("trust", ["readable by others", "a symlink", "not hex"])
def test_an_untrusted_key_means_no_cache_at_all(private, monkeypatch, trust):
    key_file = private / "key" / "cache-key"
    key_file.parent.mkdir(mode=0o700)
    if trust == "readable by others":
        key_file.write_text("ab" * 32 + "\n")
        key_file.chmod(0o644)
    elif trust == "a symlink":
        (private / "real-key").write_text("ab" * 32 + "\n")
        (private / "real-key").chmod(0o600)
        key_file.symlink_to(private / "real-key")
    else:
        key_file.write_text("not a key\n")
        key_file.chmod(0o600)
    before = key_file.read_bytes() if not key_file.is_symlink() else None
    calls = loads_recorded(monkeypatch)
    spec_open.bundled_compiled()
    assert calls == [] and not (private / "cache" / spec_open.BUNDLED_ENTRY).exists()
    if before is not None:
        assert key_file.read_bytes() == before  # never replaced


def test_the_key_is_private_and_outside_the_cache_directory(private):
    spec_open.bundled_compiled()
    key_file = private / "key" / "cache-key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert len(key_file.read_text().strip()) == 64
    assert not any("key" in name for name in os.listdir(private / "cache"))


def test_the_default_key_file_ignores_home(monkeypatch, tmp_path):
    import pwd

    monkeypatch.delenv(cache.KEY_VARIABLE, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_key_file() == Path(pwd.getpwuid(os.getuid()).pw_dir,
                                          ".config", "flarespec", "cache-key")
