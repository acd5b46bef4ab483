"""Files named by relative paths and confined to one root directory.

Paths come from documents under validation, so they are untrusted: they are checked as
text first (no absolute paths, no ``..``, no ``.``, no backslashes, no empty segments), then
resolved segment by segment from the root: every symlink met on the way -- a directory of
the path as much as its last segment, and any link met while following a link's target --
must itself resolve inside the root, else ``path-escape`` (a directory linked outside whose
files link back inside is refused, though the final real path lies inside). A file is stat-ed before it
is opened, and opened non-blocking, so a FIFO or device named by a packet cannot hang the
validator. A file read whole for parsing is refused beyond ``limits.MAX_DOCUMENT_BYTES``.
Nothing is ever written.

Messages about a file that is missing, of the wrong kind or unreadable do not repeat its
path: whoever reports the error names the file already. Messages about the path itself
(its syntax, or where it leads) quote it.

Hashes are cached twice: per store by real path (a file is hashed at most once per store),
and per process by (real path, device, inode, size, mtime) so validating the same packet
twice in one process -- e.g. a packet compared with itself -- hashes each file once. A file
read whole is hashed from the very bytes returned, so a caller that reads a file before
asking for its digest never reads it twice. A checked relative path's real path is worked
out once per store (a store lives for one validation), from its directory's real path,
which is worked out once per store too (``_real_path``); each symlink is followed and
checked once per store (``_follow``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from pathlib import Path

from .errors import LoadError
from .limits import MAX_DOCUMENT_BYTES, too_large

CHUNK_SIZE = 1 << 20  # 1 MiB: large enough to keep hashing at disk speed, small for memory
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_DRIVE_PREFIX = re.compile(r"[A-Za-z]:")
# Segments of letters, digits, '_', '-' and '.', none starting with '.': never empty, '.',
# '..', absolute, a drive, a backslash, NUL or a surrogate. A subset of what check_relative
# accepts, so matching it is an answer and not matching it asks the full checks.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*+(?:/[A-Za-z0-9_-][A-Za-z0-9_.-]*+)*+")

# Symlinks followed within one resolution before it counts as a loop (Linux's own bound).
MAX_SYMLINKS = 40
_LOOP = "symlink loop (too many levels of symbolic links)"

_process_hashes: dict[tuple, str] = {}


def clear_process_hash_cache() -> None:
    """Forget every hash computed in this process (tests; long-lived processes)."""
    _process_hashes.clear()


def _identity(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


# U+D800-U+DFFF: never text. A JSON string may still hold one ("\\ud800"); the file system
# encoding cannot encode most, and would turn U+DC80-U+DCFF (surrogateescape) into raw bytes.
_SURROGATE = re.compile("[\ud800-\udfff]")


class FileStore:
    """Read-only access to files below ``root``, addressed by checked relative paths."""

    def __init__(self, root: str | os.PathLike):
        try:
            real = os.path.realpath(os.fspath(root))
        except (UnicodeEncodeError, ValueError):  # a lone surrogate or NUL in the name
            raise LoadError("path-invalid", f"root {os.fspath(root)!r}: the name contains a "
                                            f"character no file name can hold (a lone "
                                            f"surrogate or NUL)") from None
        try:
            st = _stat(real)
        except LoadError as error:
            raise LoadError(error.code, f"root {os.fspath(root)!r}: {error.message}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise LoadError("not-directory", f"root {os.fspath(root)!r}: is not a directory ({_describe(st)})")
        self.root = Path(real)
        self._root_text = real
        self._inside_prefix = real if real.endswith(os.sep) else real + os.sep
        self._hashes: dict[str, str] = {}  # real path -> sha256 hex, for this store
        self._reals: dict[str, str] = {}   # checked relative path -> real path, for this store
        self._real_directories: dict[str, str] = {}  # relative directory -> its real path
        self._links: dict[str, str | None] = {}  # a symlink's path -> its checked real path
        # (None while it is being followed: meeting it again then is a loop)
        self.hash_count = 0                # files actually hashed by this store (cache misses)

    # ------------------------------------------------------------------ paths

    def check_relative(self, rel: str) -> None:
        """Reject, by syntax alone, anything but a plain ``a/b/c`` relative path."""
        if type(rel) is str and _PLAIN_PATH.fullmatch(rel):
            return  # the common path, accepted at once (every check below would accept it)
        if not isinstance(rel, str):
            raise LoadError("path-not-string", f"a path must be a string, not {type(rel).__name__}")
        if rel == "":
            raise LoadError("path-empty", "the path is empty")
        if "\x00" in rel:
            raise LoadError("path-nul", f"path {rel!r} contains a NUL character")
        surrogate = _SURROGATE.search(rel)
        if surrogate:
            raise LoadError("path-surrogate",
                            f"path {rel!r} contains a lone surrogate "
                            f"(U+{ord(surrogate.group()):04X}), which is not a character and "
                            f"names no file; a path is Unicode text")
        if "\\" in rel:
            raise LoadError("path-backslash", f"path {rel!r} contains a backslash; use '/'")
        if rel.startswith("/") or _DRIVE_PREFIX.match(rel):
            raise LoadError("path-absolute", f"path {rel!r} is absolute; it must be relative to the root")
        if rel.endswith("/"):
            raise LoadError("path-trailing-slash", f"path {rel!r} ends with '/'")
        for segment in rel.split("/"):
            if segment == "":
                raise LoadError("path-empty-segment", f"path {rel!r} has an empty segment ('//')")
            if segment == "..":
                raise LoadError("path-dotdot", f"path {rel!r} contains '..'")
            if segment == ".":
                raise LoadError("path-dot", f"path {rel!r} contains a '.' segment")

    def resolve(self, rel: str, *, kind: str = "file") -> Path:
        """The real path of ``rel``; it must exist inside the root and be of ``kind``
        ("file": a regular file, "dir": a directory)."""
        return Path(self._resolve(rel, kind)[0])

    def _resolve(self, rel: str, kind: str) -> tuple[str, os.stat_result]:
        if kind not in ("file", "dir"):
            raise ValueError(f"kind must be 'file' or 'dir', not {kind!r}")
        real = self._reals.get(rel) if isinstance(rel, str) else None
        st = None
        if real is None:
            self.check_relative(rel)
            real, st = self._real_path(rel)
            self._reals[rel] = real
        if st is None:
            try:
                st = _stat(real)  # stat, never open: opening a FIFO could block
            except LoadError as error:
                st = self._magic_link_target(rel, error)
        if kind == "file" and not stat.S_ISREG(st.st_mode):
            raise LoadError("not-regular-file", f"is not a regular file ({_describe(st)})")
        if kind == "dir" and not stat.S_ISDIR(st.st_mode):
            raise LoadError("not-directory", f"is not a directory ({_describe(st)})")
        return real, st

    def _real_path(self, rel: str) -> tuple[str, os.stat_result | None]:
        """The real path of ``root/rel``, every symlink on the way checked (``_follow``),
        with each directory's real path worked out once per store (a packet names
        thousands of files in a few hundred directories). The last segment is ``lstat``-ed
        in the real directory: when it is not a symlink, its real path is the directory's
        plus its name and that ``lstat`` is its ``stat`` too (returned, so it is not asked
        twice). A symlink is followed; a missing name is taken as it is (the stat, left to
        the caller, says what is wrong)."""
        directory, _, name = rel.rpartition("/")
        real_directory = self._real_directory(directory, rel) if directory else self._root_text
        candidate = os.path.join(real_directory, name)
        try:
            st = os.lstat(candidate)
        except OSError:
            return candidate, None
        if stat.S_ISLNK(st.st_mode):
            return self._follow(candidate, rel, 0), None
        return candidate, st

    def _real_directory(self, directory: str, rel: str) -> str:
        """The checked real path of a relative directory, from its parent's when that is
        known (the parent is remembered too: siblings share it)."""
        real = self._real_directories.get(directory)
        if real is None:
            parent, _, name = directory.rpartition("/")
            base = self._real_directories.get(parent) if parent else self._root_text
            if base is None:
                base = self._real_directories[parent] = self._walk(self._root_text, parent, rel, 0)
            real = self._real_directories[directory] = self._walk(base, name, rel, 0)
        return real

    def _walk(self, base: str, path: str, rel: str, depth: int) -> str:
        """``path`` (relative to the real directory ``base``, or absolute) resolved segment
        by segment as ``os.path.realpath`` does -- a missing segment is kept as it is, and
        ``..`` takes the parent of what was reached -- each symlink followed by
        ``_follow``."""
        current = "/" if path.startswith("/") else base
        for segment in path.split("/"):
            if segment in ("", "."):
                continue
            if segment == "..":
                current = os.path.dirname(current)
                continue
            candidate = os.path.join(current, segment)
            try:
                is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
            except OSError:
                is_link = False
            current = self._follow(candidate, rel, depth) if is_link else candidate
        return current

    def _follow(self, link: str, rel: str, depth: int) -> str:
        """The real path of the symlink ``link`` (its directory is real), which must lie
        inside the root, and so must every symlink its target leads through
        (``path-escape``); each link is followed once per store."""
        if link in self._links:
            known = self._links[link]
            if known is None:  # met again while it is being followed
                raise LoadError("unreadable", _LOOP)
            return known
        if depth >= MAX_SYMLINKS:
            raise LoadError("unreadable", _LOOP)
        try:
            target = os.readlink(link)
        except OSError as exc:
            raise LoadError("unreadable", _failure("cannot read the symlink", exc)) from None
        self._links[link] = None
        try:
            real = self._walk(os.path.dirname(link), target, rel, depth + 1)
        finally:
            del self._links[link]
        if not self._inside(real):
            raise self._escape(link, real, rel)
        self._links[link] = real
        return real

    def _inside(self, real: str) -> bool:
        return real.startswith(self._inside_prefix) or real == self._root_text

    def _escape(self, link: str, real: str, rel: str) -> LoadError:
        shown = link[len(self._inside_prefix):] if self._inside(link) else link
        if shown == rel:  # the path's own last segment
            return LoadError("path-escape", f"path {rel!r} resolves outside the root (to {real})")
        return LoadError("path-escape", f"path {rel!r} resolves outside the root at the "
                                        f"symlink {shown!r} on the way (to {real})")

    def _magic_link_target(self, rel: str, error: LoadError) -> os.stat_result:
        """A path whose resolved name does not exist may still be a link to something that
        has no name (``/proc/self/fd/0`` on a pipe resolves to ``pipe:[…]``): say what it is
        when it is not a regular file, rather than "does not exist"."""
        if error.code != "missing":
            raise error
        try:
            st = os.stat(os.path.join(self.root, rel))
        except (OSError, ValueError):
            raise error from None
        if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
            raise error  # never followed: only a nameless, non-regular target is described
        return st

    # ------------------------------------------------------------------ reading

    def read_bytes(self, rel: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
        """The whole file, at most ``limit`` bytes (else ``too-large``, checked before reading
        and again while reading, in case it grows); its SHA-256 is remembered so it is never
        hashed again."""
        real, st = self._resolve(rel, "file")
        if st.st_size > limit:
            raise too_large("file", st.st_size, limit)
        handle, before = self._open(real)
        with handle:
            data = _read_at_most(handle, limit + 1, expected=st.st_size + 1)
            after = os.fstat(handle.fileno())
        if len(data) > limit:
            raise too_large("file", limit=limit)
        if real not in self._hashes:
            known = _process_hashes.get((real, *_identity(before))) \
                if _identity(before) == _identity(after) else None
            if known is None:
                self.hash_count += 1
                known = hashlib.sha256(data).hexdigest()
            self._remember(real, known, before, after)
        return data

    def read_head(self, rel: str, n: int) -> bytes:
        """At most the first ``n`` bytes."""
        if n < 0:
            raise ValueError("n must be >= 0")
        real, _ = self._resolve(rel, "file")
        with self._open(real)[0] as handle:
            return _read_at_most(handle, n)

    def size(self, rel: str) -> int:
        return self._resolve(rel, "file")[1].st_size

    def sha256(self, rel: str) -> str:
        """64 lowercase hex digits; streamed in 1 MiB chunks, each file hashed at most once."""
        known = self._reals.get(rel) if isinstance(rel, str) else None
        if known is not None and known in self._hashes:  # read or hashed by this store already
            return self._hashes[known]
        real, _ = self._resolve(rel, "file")
        cached = self._hashes.get(real)
        if cached is not None:
            return cached
        handle, before = self._open(real)
        with handle:
            digest = _process_hashes.get((real, *_identity(before)))
            if digest is None:
                self.hash_count += 1
                hasher = hashlib.sha256()
                buffer = bytearray(CHUNK_SIZE)
                view = memoryview(buffer)
                while count := _read_or_fail(handle.readinto, buffer):
                    hasher.update(view[:count])
                digest = hasher.hexdigest()
                self._remember(real, digest, before, os.fstat(handle.fileno()))
        self._hashes[real] = digest
        return digest

    def _remember(self, real: str, digest: str, before: os.stat_result, after: os.stat_result) -> None:
        self._hashes[real] = digest
        if _identity(before) == _identity(after):  # not changed while read: safe to share
            _process_hashes[(real, *_identity(before))] = digest

    def _open(self, real: str) -> tuple:
        """The file opened for reading (unbuffered), and its ``fstat`` as opened (every
        open of a store goes through here)."""
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except OSError as exc:
            raise LoadError("unreadable", _failure("cannot open", exc)) from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between stat and open
            os.close(fd)
            raise LoadError("not-regular-file", f"is not a regular file ({_describe(st)})")
        return open(fd, "rb", buffering=0), st


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise LoadError("missing", "does not exist") from None
    except OSError as exc:
        raise LoadError("unreadable", _failure("cannot stat", exc)) from None


def _failure(action: str, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return _LOOP
    return f"{action}: {exc.strerror or exc}"


def _read_or_fail(read, argument):
    try:
        return read(argument)
    except OSError as exc:
        raise LoadError("unreadable", _failure("cannot read", exc)) from None


def _read_at_most(handle, n: int, expected: int | None = None) -> bytes:
    """Up to ``n`` bytes from the start. The first read asks for ``expected`` bytes (the size
    from stat, plus one to see the end), so a file of the size stat gave is read in one
    buffer; raw reads may return fewer bytes than asked, and a file may grow meanwhile."""
    chunks, wanted = [], n
    ask = n if expected is None else expected
    while wanted and (chunk := _read_or_fail(handle.read, min(wanted, ask))):
        chunks.append(chunk)
        wanted -= len(chunk)
        ask = CHUNK_SIZE
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _describe(st: os.stat_result) -> str:
    mode = st.st_mode
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "an unknown file type"
