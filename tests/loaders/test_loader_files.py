import errno
import hashlib
import os
import threading

import pytest

from flarespec.loaders import files, limits
from flarespec.loaders.errors import LoadError
from flarespec.loaders.files import FileStore
from flarespec.loaders.limits import MAX_DOCUMENT_BYTES


@pytest.fixture(autouse=True)
def fresh_process_cache():
    files.clear_process_hash_cache()
    yield
    files.clear_process_hash_cache()


@pytest.fixture
def root(tmp_path):
    base = tmp_path / "root"
    (base / "sub").mkdir(parents=True)
    (base / "a.txt").write_bytes(b"hello\n")
    (base / "sub" / "b.bin").write_bytes(bytes(range(256)))
    return base


def code_of(call, *args, **kwargs) -> str:
    with pytest.raises(LoadError) as info:
        call(*args, **kwargs)
    return info.value.code


@pytest.mark.parametrize("rel, code", [
    ("/etc/passwd", "path-absolute"),
    ("C:/x", "path-absolute"),
    ("c:x", "path-absolute"),
    ("a\\b", "path-backslash"),
    ("../a.txt", "path-dotdot"),
    ("sub/../a.txt", "path-dotdot"),
    ("./a.txt", "path-dot"),
    ("sub/./b.bin", "path-dot"),
    ("a//b", "path-empty-segment"),
    ("sub/", "path-trailing-slash"),
    ("", "path-empty"),
    ("a\x00b", "path-nul"),
    (None, "path-not-string"),
    (b"a.txt", "path-not-string"),
])
def test_check_relative_rejections(root, rel, code):
    store = FileStore(root)
    assert code_of(store.check_relative, rel) == code
    assert code_of(store.resolve, rel) == code


def test_plain_relative_paths_accepted(root):
    store = FileStore(root)
    assert store.check_relative("sub/b.bin") is None
    assert store.check_relative("..hidden/.x/a..b") is None  # dots inside names are fine
    assert store.resolve("sub/b.bin") == root.resolve() / "sub" / "b.bin"
    assert store.resolve("sub", kind="dir") == root.resolve() / "sub"


def test_missing_and_wrong_kind(root):
    store = FileStore(root)
    assert code_of(store.resolve, "nope.txt") == "missing"
    assert code_of(store.resolve, "a.txt/inner") == "missing"
    assert code_of(store.resolve, "sub") == "not-regular-file"
    assert code_of(store.resolve, "a.txt", kind="dir") == "not-directory"
    with pytest.raises(ValueError):
        store.resolve("a.txt", kind="socket")


def error_of(call, *args, **kwargs) -> LoadError:
    with pytest.raises(LoadError) as info:
        call(*args, **kwargs)
    return info.value


def test_file_messages_do_not_repeat_the_path_the_report_already_names(root):
    os.mkfifo(root / "pipe")
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    store = FileStore(root)
    assert [(e.code, e.message) for e in (
        error_of(store.read_bytes, "sub/missing.json"),
        error_of(store.read_bytes, "a.txt/inner"),
        error_of(store.read_bytes, "pipe"),
        error_of(store.sha256, "sub"),
        error_of(store.resolve, "a.txt", kind="dir"),
        error_of(store.read_bytes, "loop1"),
    )] == [
        ("missing", "does not exist"),
        ("missing", "does not exist"),
        ("not-regular-file", "is not a regular file (a FIFO)"),
        ("not-regular-file", "is not a regular file (a directory)"),
        ("not-directory", "is not a directory (a regular file)"),
        ("unreadable", "symlink loop (too many levels of symbolic links)"),
    ]
    error = error_of(store.read_bytes, "sub/missing.json")
    assert (error.location, error.line) == (None, None)  # location is only ever a JSONPath


def test_unreadable_file_message_gives_the_reason_only(root, monkeypatch):
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):  # what chmod 000 does, also when the tests run as root
        if str(path).endswith("a.txt"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real_open(path, flags, *args, **kwargs)
    monkeypatch.setattr(files.os, "open", refuse)
    error = error_of(FileStore(root).read_bytes, "a.txt")
    assert (error.code, error.message) == ("unreadable", "cannot open: Permission denied")


def test_path_errors_still_quote_the_path(root, tmp_path):
    os.symlink(tmp_path, root / "out")
    store = FileStore(root)
    assert error_of(store.read_bytes, "/etc/passwd").message == \
        "path '/etc/passwd' is absolute; it must be relative to the root"
    assert error_of(store.read_bytes, "out/x").message.startswith("path 'out/x' resolves outside the root")


def test_root_must_be_an_existing_directory_and_errors_name_it(root):
    error = error_of(FileStore, root / "absent")
    assert (error.code, error.message) == ("missing", f"root {str(root / 'absent')!r}: does not exist")
    error = error_of(FileStore, root / "a.txt")
    assert error.code == "not-directory" and error.message.startswith(f"root {str(root / 'a.txt')!r}: ")


def test_read_bytes_refuses_a_file_over_the_limit(root):
    store = FileStore(root)
    assert store.read_bytes("a.txt", limit=6) == b"hello\n"
    error = error_of(store.read_bytes, "a.txt", limit=5)
    assert error.code == "too-large" and "6 bytes" in error.message
    assert store.hash_count == 1  # the refused read is not hashed


def test_read_bytes_default_limit_is_the_document_limit(root, monkeypatch):
    (root / "big.json").write_bytes(b" " * (MAX_DOCUMENT_BYTES + 1))
    assert error_of(FileStore(root).read_bytes, "big.json").code == "too-large"


def test_read_bytes_stops_at_the_limit_when_the_file_grew_after_stat(root, monkeypatch):
    store = FileStore(root)
    real_stat = files._stat

    def stale_stat(path):  # the size stat saw before the file grew to 6 bytes
        result = real_stat(path)
        return os.stat_result((*result[:6], 3, *result[7:])) if path.endswith("a.txt") else result
    monkeypatch.setattr(files, "_stat", stale_stat)
    assert error_of(store.read_bytes, "a.txt", limit=4).code == "too-large"
    assert store.read_bytes("a.txt", limit=6) == b"hello\n"


def test_symlink_inside_root_is_followed(root):
    os.symlink("sub/b.bin", root / "link.bin")
    os.symlink("sub", root / "linkdir")
    store = FileStore(root)
    assert store.resolve("link.bin") == root.resolve() / "sub" / "b.bin"
    assert store.read_bytes("linkdir/b.bin") == bytes(range(256))


def test_symlink_escaping_root_is_rejected(root, tmp_path):
    (tmp_path / "outside.txt").write_bytes(b"secret")
    os.symlink(tmp_path / "outside.txt", root / "abs-link")
    os.symlink("../outside.txt", root / "rel-link")
    os.symlink(tmp_path, root / "dir-link")
    os.symlink(tmp_path / "nowhere", root / "dangling-out")
    store = FileStore(root)
    for rel in ("abs-link", "rel-link", "dir-link/outside.txt", "dangling-out"):
        assert code_of(store.read_bytes, rel) == "path-escape", rel


def test_root_given_through_a_symlink_is_resolved_once(root, tmp_path):
    os.symlink(root, tmp_path / "alias")
    store = FileStore(tmp_path / "alias")
    assert store.root == root.resolve()
    assert store.read_bytes("a.txt") == b"hello\n"


def test_symlink_loop_is_unreadable_not_a_crash(root):
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    with pytest.raises(LoadError) as info:
        FileStore(root).read_bytes("loop1")
    assert (info.value.code, info.value.message) == ("unreadable", "symlink loop (too many levels of symbolic links)")


def test_fifo_rejected_without_blocking(root):
    os.mkfifo(root / "pipe")
    store = FileStore(root)
    outcome = {}

    def attempt():
        outcome["codes"] = [code_of(store.read_bytes, "pipe"), code_of(store.sha256, "pipe"),
                            code_of(store.read_head, "pipe", 4), code_of(store.size, "pipe")]

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert outcome["codes"] == ["not-regular-file"] * 4


def test_read_head_and_size(root):
    store = FileStore(root)
    assert store.read_head("sub/b.bin", 4) == b"\x00\x01\x02\x03"
    assert store.read_head("a.txt", 100) == b"hello\n"
    assert store.read_head("a.txt", 0) == b""
    assert store.size("sub/b.bin") == 256


def test_sha256_matches_hashlib_and_is_cached_per_store(root):
    store = FileStore(root)
    expected = hashlib.sha256(b"hello\n").hexdigest()
    assert store.sha256("a.txt") == expected
    assert store.sha256("a.txt") == expected
    os.symlink("a.txt", root / "same")
    assert store.sha256("same") == expected  # same real path, same cache entry
    assert store.hash_count == 1


def test_read_bytes_records_hash_so_file_is_not_hashed_again(root, monkeypatch):
    store = FileStore(root)
    assert store.read_bytes("a.txt") == b"hello\n"
    assert store.hash_count == 1
    monkeypatch.setattr(files.hashlib, "sha256", lambda *a: pytest.fail("hashed twice"))
    assert store.sha256("a.txt") == hashlib.new("sha256", b"hello\n").hexdigest()
    assert store.read_bytes("a.txt") == b"hello\n"
    assert store.hash_count == 1


def test_process_wide_cache_shared_between_stores(root):
    first, second = FileStore(root), FileStore(root)
    digest = first.sha256("sub/b.bin")
    assert second.sha256("sub/b.bin") == digest
    assert (first.hash_count, second.hash_count) == (1, 0)


def test_process_cache_misses_when_file_changes(root):
    digest = FileStore(root).sha256("a.txt")
    (root / "a.txt").write_bytes(b"changed, and longer\n")
    second = FileStore(root)
    assert second.sha256("a.txt") == hashlib.sha256(b"changed, and longer\n").hexdigest() != digest
    assert second.hash_count == 1


def test_large_file_streamed_in_chunks(root):
    payload = os.urandom(1024) * (5 * 1024 + 3)  # ~5 MiB, not a multiple of the chunk size
    (root / "big.bin").write_bytes(payload)
    store = FileStore(root)
    assert store.sha256("big.bin") == hashlib.sha256(payload).hexdigest()
    assert store.size("big.bin") == len(payload)


def test_nothing_under_root_is_modified(root):
    before = {p: (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}
    store = FileStore(root)
    store.read_bytes("a.txt"), store.sha256("sub/b.bin"), store.read_head("a.txt", 2), store.size("a.txt")
    after = {p: (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}
    assert after == before


def test_read_bytes_over_a_spec_limit_names_that_limit(root):
    (root / "big.json").write_bytes(b" " * (limits.MIB + 1))
    error = error_of(FileStore(root).read_bytes, "big.json", limit=limits.document_limit({"max_mib": 1}))
    assert (error.code, error.message) == ("too-large", (
        f"the file is {limits.MIB + 1} bytes; the limit for this document is {limits.MIB} bytes "
        "(1 MiB, spec option max_mib)"))


# ------------------------------------------------------------------ real paths per directory


def _tree_with_links(root, tmp_path):
    """Files reached through every kind of segment: plain, a symlinked directory, a
    symlinked file, a link to a link, a dangling link, a loop, a link leaving the root."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"secret\n")
    (root / "sub" / "deep").mkdir()
    (root / "sub" / "deep" / "c.txt").write_bytes(b"c\n")
    os.symlink("sub", root / "linked")
    os.symlink("deep", root / "sub" / "hop")
    os.symlink("../a.txt", root / "sub" / "a-link.txt")
    os.symlink("a-link.txt", root / "sub" / "a-link-link.txt")
    os.symlink("nowhere", root / "sub" / "dangling.txt")
    os.symlink("loop.txt", root / "sub" / "loop.txt")
    os.symlink(str(outside), root / "out")
    os.symlink(str(outside / "secret.txt"), root / "sub" / "secret-link.txt")
    return ["a.txt", "sub/b.bin", "sub/deep/c.txt", "linked/b.bin", "linked/deep/c.txt",
            "linked/hop/c.txt", "sub/hop/c.txt", "sub/a-link.txt", "linked/a-link-link.txt",
            "sub/dangling.txt", "sub/loop.txt", "out/secret.txt", "sub/secret-link.txt",
            "sub/missing.txt", "missing/x.txt", "a.txt/x", "linked/missing/x.txt", "sub",
            "linked", "out", "sub/deep"]


def _outcome(store, rel, kind):
    try:
        return "ok", str(store.resolve(rel, kind=kind))
    except LoadError as error:
        return error.code, error.message


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_real_paths_worked_out_per_directory_are_the_full_realpath(root, tmp_path, kind):
    """The real path from the directory's real path plus the last segment is exactly what
    realpath of the whole path gives, and so is every error (code and message), for every
    kind of segment; asked twice in one store (cached) and in a fresh store alike."""
    rels = _tree_with_links(root, tmp_path)
    store = FileStore(root)
    for rel in rels:
        expected = os.path.realpath(os.path.join(root, rel))
        got = _outcome(store, rel, kind)
        assert got == _outcome(store, rel, kind) == _outcome(FileStore(root), rel, kind), rel
        if got[0] == "ok":
            assert got[1] == expected, rel
        if got[0] == "path-escape":  # named by its first segment that leaves the root
            reals = [os.path.realpath(os.path.join(root, *rel.split("/")[:n]))
                     for n in range(1, rel.count("/") + 2)]
            leaving = next(real for real in reals if not real.startswith(f"{root}{os.sep}"))
            assert got[1].endswith(f"(to {leaving})"), rel


def test_a_directory_is_resolved_once_per_store(root, monkeypatch):
    (root / "sub" / "c.txt").write_bytes(b"c\n")
    calls = []
    real = os.lstat
    monkeypatch.setattr(files.os, "lstat", lambda p: calls.append(p) or real(p))
    store = FileStore(root)
    calls.clear()
    assert store.read_bytes("sub/b.bin") == bytes(range(256))
    assert store.read_bytes("sub/c.txt") == b"c\n"
    assert store.sha256("a.txt") == hashlib.sha256(b"hello\n").hexdigest()
    # the root is known, the directory walked once, each file's last segment looked at once
    assert calls == [os.path.join(root, *rel) for rel in
                     (["sub"], ["sub", "b.bin"], ["sub", "c.txt"], ["a.txt"])]
