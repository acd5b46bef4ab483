"""Issue 23, item A: a directory symlink along a path that leaves the root.

Contract section 1 rejects "any symlink whose target resolves outside the root, at any
component of the path". ``package/``, ``run/<gid>`` or ``run/<gid>/<rid>`` linked to a
directory outside whose files link back inside was a PASS: only the final real path was
checked (``loaders/files.py``). Every symlink met is checked now, the directories' as much
as the file's, and every link met while following one.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from flarespec.adapter.commands import measure
from flarespec.loaders.errors import LoadError
from flarespec.loaders.files import FileStore
from packet_tree import tree_digest


def _relink_files_inside(directory: Path, stash: Path) -> None:
    """Every file below ``directory`` moved into ``stash`` (inside the root) and replaced by
    an absolute symlink to it: the final real path of each file lies inside."""
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        kept = stash / path.relative_to(directory)
        kept.parent.mkdir(parents=True, exist_ok=True)
        path.rename(kept)
        path.symlink_to(kept)


def _move_out(root: Path, rel: str, outside: Path) -> Path:
    """``root/rel`` moved to ``outside`` with its files linked back into ``root/.stash``."""
    moved = outside / rel.replace("/", "_")
    shutil.move(root / rel, moved)
    _relink_files_inside(moved, root / ".stash" / rel)
    return moved


def _group_and_request(entry: Path) -> tuple[str, str]:
    run = entry.parent / json.loads(entry.read_text())["run"]
    group = sorted(p for p in run.iterdir() if p.is_dir() and p.name != "metrics")[0]
    request = sorted(p for p in group.iterdir() if p.is_dir())[0]
    return f"run/{group.name}", f"run/{group.name}/{request.name}"


def _layout(name: str, root: Path, outside: Path, group: str, request: str) -> None:
    if name == "package-dir-out":            # package/ -> outside, its file back inside
        (root / "package").symlink_to(_move_out(root, "package", outside))
    elif name == "group-dir-out":            # run/<gid> -> outside, its files back inside
        (root / group).symlink_to(_move_out(root, group, outside))
    elif name == "request-dir-out":          # run/<gid>/<rid> -> outside, files back inside
        (root / request).symlink_to(_move_out(root, request, outside))
    elif name == "inside-link-to-outside":   # run/<gid> -> ../alias (inside) -> outside
        (root / "alias").symlink_to(_move_out(root, group, outside))
        (root / group).symlink_to("../alias")
    elif name == "through-an-outside-link":  # run/<gid> -> ../hop/back: hop is outside,
        kept = root / ".stash" / "group"      # back comes back inside: the final real
        kept.parent.mkdir()                   # path lies inside, the link 'hop' does not
        shutil.move(root / group, kept)
        hop = outside / "hop"
        hop.mkdir()
        (hop / "back").symlink_to(kept)
        (root / "hop").symlink_to(hop)
        (root / group).symlink_to("../hop/back")
    else:
        raise AssertionError(name)


ESCAPES = {  # layout -> the rules that must reject it (each of the packet's role)
    "package-dir-out": {"package.file.path-escape"},
    "group-dir-out": {"request.file.path-escape"},
    "request-dir-out": {"request.file.path-escape"},
    "inside-link-to-outside": {"request.file.path-escape"},
    "through-an-outside-link": {"request.file.path-escape"},
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_a_directory_linked_outside_the_root_rejects(name, packet_pair, tmp_path):
    entry, peer = packet_pair
    root = entry.parent
    outside = tmp_path / "outside"
    outside.mkdir()
    group, request = _group_and_request(entry)
    _layout(name, root, outside, group, request)
    before = tree_digest(root)
    outcome = measure(entry, peer, tmp_path / "out" / "receipt.json")
    receipt = outcome.receipt
    assert outcome.exit_code == 2 and receipt["status"] == "rejected" and "metrics" not in receipt
    rules = {v["rule"] for v in receipt["violations"] if v["packet"] == "packet"}
    assert ESCAPES[name] <= rules, rules
    escapes = [v for v in receipt["violations"] if v["rule"] in ESCAPES[name]]
    assert all("resolves outside the root at the symlink" in v["message"] for v in escapes), escapes
    assert tree_digest(root) == before


def test_a_directory_linked_inside_the_root_still_passes(packet_pair, tmp_path):
    """The same moves kept inside the root: a symlink that stays inside is fine."""
    entry, peer = packet_pair
    root = entry.parent
    group, _ = _group_and_request(entry)
    kept = root / "elsewhere"
    kept.mkdir()
    (root / "alias").symlink_to(_move_out(root, group, kept))
    (root / group).symlink_to("../alias")
    outcome = measure(entry, peer, tmp_path / "out" / "receipt.json")
    assert outcome.exit_code == 0, outcome.receipt["violations"]


# ------------------------------------------------------------------ the store on its own


@pytest.fixture
def root(tmp_path):
    base = tmp_path / "root"
    (base / "kept").mkdir(parents=True)
    (base / "kept" / "f.txt").write_bytes(b"inside\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "f.txt").symlink_to(base / "kept" / "f.txt")
    (tmp_path / "out" / "back").symlink_to(base / "kept")
    return base


def _escape(store: FileStore, rel: str) -> str:
    with pytest.raises(LoadError) as info:
        store.read_bytes(rel)
    assert info.value.code == "path-escape", info.value
    return info.value.message


def test_every_link_met_is_checked_not_only_the_real_path(root, tmp_path):
    (root / "d").symlink_to(tmp_path / "out")            # a directory out, file back in
    (root / "hop").symlink_to(tmp_path / "out")
    (root / "via").symlink_to("hop/back")                # inside, through 'hop' (outside)
    (root / "file-via").symlink_to("hop/f.txt")          # the last segment, through 'hop'
    (root / "chain").symlink_to("d")                     # an inside link on to an outside one
    store = FileStore(root)
    assert os.path.realpath(root / "d" / "f.txt") == str(root / "kept" / "f.txt")
    assert _escape(store, "d/f.txt") == (f"path 'd/f.txt' resolves outside the root at the "
                                          f"symlink 'd' on the way (to {tmp_path / 'out'})")
    assert "at the symlink 'hop' on the way" in _escape(store, "via/f.txt")
    assert "at the symlink 'hop' on the way" in _escape(store, "file-via")
    assert "at the symlink 'd' on the way" in _escape(store, "chain/f.txt")  # the one out
    for _ in range(2):  # a refusal is never remembered as a real path
        assert "at the symlink 'd'" in _escape(store, "d/back/f.txt")
    assert store.read_bytes("kept/f.txt") == b"inside\n"


def test_links_that_stay_inside_are_followed_once(root, monkeypatch):
    (root / "a").symlink_to("kept")
    (root / "b").symlink_to("a")
    (root / "kept" / "g.txt").symlink_to("../kept/f.txt")
    store = FileStore(root)
    calls = []
    real = os.readlink
    monkeypatch.setattr(os, "readlink", lambda p: calls.append(p) or real(p))
    for rel in ("b/f.txt", "a/f.txt", "b/g.txt", "a/g.txt"):
        assert store.read_bytes(rel) == b"inside\n"
    assert sorted(calls) == sorted(os.path.join(root, *p) for p in (["b"], ["a"], ["kept", "g.txt"]))


def test_a_loop_and_a_long_chain_are_unreadable(root):
    (root / "x").symlink_to("y")
    (root / "y").symlink_to("x")
    previous = "kept"
    for n in range(41):  # 41 links in a row: one more than Linux follows
        (root / f"l{n}").symlink_to(previous)
        previous = f"l{n}"
    store = FileStore(root)
    for rel in ("x/f.txt", "x", "l40/f.txt"):
        with pytest.raises(LoadError) as info:
            store.read_bytes(rel)
        assert (info.value.code, info.value.message) == (
            "unreadable", "symlink loop (too many levels of symbolic links)"), rel
    assert FileStore(root).read_bytes("l38/f.txt") == b"inside\n"
