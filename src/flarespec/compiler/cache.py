"""The compiled-spec cache: a compiled spec kept as a pickle in the user cache directory.

Compiling a spec (YAML with marks, extends, a few hundred JSONPath parses) costs a process
several times what loading its pickle does, and every ``measure`` is a new process. So a
compiled spec is stored under ``$FLARESPEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/flarespec``,
else ``~/.cache/flarespec``, and reused only while nothing it was made from has changed.

* Key: SHA-256 over this format's number, flarespec's version, a digest of the source of
  every ``*.py`` of the installed package (``code_digest``), the Python version and build,
  the package directory, and the caller's inputs (the digests of the spec files). A file
  holds one entry; its header carries the key and the payload's SHA-256, so an entry of
  another version or another code is recognised, and never unpickled, before any load.
* Witnesses: what is known only after compiling (the files a spec's parents came from, a
  neighbour that was looked at and absent, the hook modules it uses) is stored with the
  entry and checked on load: every file's digest again, every hook module imported and its
  file and digest compared.
* Bounded reads: a file larger than ``MAX_ENTRY_BYTES`` at an entry's name is ignored
  from its ``fstat`` size, without reading it, and so is an entry whose header (read first,
  alone) is not this format's with this key; only then is the payload read, and its HMAC
  checked before it is unpickled. An entry that would be larger is not written.
* Any mismatch, unreadable, truncated, oversized or corrupt file, unpickling error or
  unexpected type is ignored silently and the spec compiled again (then written again). A
  write that fails (read-only home, full disk) is silent too: the cache never changes a
  result or an exit.
* Security: unpickling runs code, so an entry is read only when it is a regular file (not
  a symlink: ``O_NOFOLLOW``) owned by the current user and not group- or world-writable,
  inside a directory (``lstat``: not a symlink) owned by the user and not group- or
  world-writable. Entries are written 0600 into a 0700 directory, atomically (a temporary
  file in the same directory, then ``os.replace``).
* Proof of authorship: an entry is unpickled only when its header carries an HMAC-SHA256
  (over the header and payload) made with this user's cache key: 32 random bytes kept in
  a user-only file (``cache_key_file``: ``$FLARESPEC_CACHE_KEY_FILE``, else
  ``~/.config/flarespec/cache-key`` with the home directory taken from the user database,
  not from ``$HOME``), outside the cache directory and moved by none of its variables. A
  pickle copied in from elsewhere (a packet, an archive, a restored CI cache) was not made
  with the key, so it is never unpickled. No key, or a key file that is not a 0600 regular
  file of this user in a directory only the user may write: nothing is read or written.
* Refusal: a run that knows its packet roots (``measure``, ``validate-pair``) calls
  ``refuse`` when the cache directory or the key file lies inside one of them; the cache is
  then neither read nor written for that run.
* ``FLARESPEC_CACHE=0`` (or ``off``) disables the cache: nothing is read or written.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import flarespec

DISABLE_VARIABLE = "FLARESPEC_CACHE"
DIRECTORY_VARIABLE = "FLARESPEC_CACHE_DIR"
KEY_VARIABLE = "FLARESPEC_CACHE_KEY_FILE"
KEY_BYTES = 32
_PRIVATE_MODE = 0o077  # the key is a secret: nobody else may even read it
DISABLED = ("0", "off", "false", "no")
# Bumped when the file layout or the meaning of an entry changes (2: HMAC-tagged entries).
FORMAT = 2
MAGIC = b"flarespec-compiled-spec"
CODE_STAMP = "code-digest"
_UNSAFE_MODE = stat.S_IWGRP | stat.S_IWOTH
UNREADABLE = "unreadable"
_HEX64 = re.compile(r"[0-9a-f]{64}")
# Far above any spec file (flarespec.compiler.load.MAX_SPEC_BYTES) or hook module source.
MAX_WITNESS_BYTES = 1 << 24
# The largest entry file read or written: the bundled specs' entry is about 0.2 MiB (213 KiB
# from the 43 KB of YAML bundled today), a spec file at most half a MiB: 64 MiB is far above any
# real entry and bounds what a file planted at an entry's name costs (3 GiB was read whole).
MAX_ENTRY_BYTES = 64 << 20
_STAMP_BYTES = 2 * 64 + 1  # the code-digest file: "<stat key>\n<digest>"

_code_digest: str | None = None
_refused: str | None = None  # why this run uses no cache (a packet root holds it), or None
_keys: dict[str, bytes] = {}  # key file -> key, read once per process


@dataclass
class Entry:
    """What a cache file holds once its header matched: the value and its witnesses."""
    value: object
    # (path, SHA-256 of its bytes, or None: the file was absent or unreadable)
    files: list[tuple[str, str | None]] = field(default_factory=list)
    # (module name, its file, SHA-256 of that file)
    hooks: list[tuple[str, str, str]] = field(default_factory=list)


def enabled() -> bool:
    return directory() is not None


def refuse(reason: str | None) -> None:
    """Use no cache for the rest of this run (``reason`` says why), or, with None, lift a
    refusal: each ``measure`` decides again for its own packet roots."""
    global _refused
    _refused = reason


def refused() -> str | None:
    return _refused


def configured_directory() -> Path | None:
    """The cache directory the environment names, refused or not (None: disabled)."""
    if os.environ.get(DISABLE_VARIABLE, "").strip().lower() in DISABLED:
        return None
    explicit = os.environ.get(DIRECTORY_VARIABLE)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # a relative one is invalid (XDG base directory spec)
        return Path(xdg) / "flarespec"
    try:
        return Path.home() / ".cache" / "flarespec"
    except (RuntimeError, KeyError):  # no home directory: no cache
        return None


def directory() -> Path | None:
    """The cache directory, or None when ``FLARESPEC_CACHE`` disables the cache or this
    run refused it (:func:`refuse`)."""
    return None if _refused is not None else configured_directory()


def cache_key_file() -> Path | None:
    """Where this user's cache key lives: ``$FLARESPEC_CACHE_KEY_FILE``, else
    ``.config/flarespec/cache-key`` in the home directory of the user database entry
    (``$HOME``, ``$XDG_CACHE_HOME`` and ``$FLARESPEC_CACHE_DIR`` do not move it)."""
    explicit = os.environ.get(KEY_VARIABLE)
    if explicit:
        return Path(explicit)
    try:
        import pwd

        home = pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):
        return None
    return Path(home) / ".config" / "flarespec" / "cache-key" if home else None


def _secret(create: bool) -> bytes | None:
    """This user's cache key, or None (then nothing is read or written). Created (random,
    0600, published with ``link`` so two processes agree on one) only when ``create``."""
    path = cache_key_file()
    if path is None or _refused is not None:
        return None
    found = _keys.get(str(path))
    if found is None:
        found = _read_key(path)
        if found is None and create:
            _create_key(path)
            found = _read_key(path)
        if found is not None:
            _keys[str(path)] = found
    return found


def _read_key(path: Path) -> bytes | None:
    try:
        if not _trusted_dir(path.parent):
            return None
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() \
                or info.st_mode & _PRIVATE_MODE:
            return None
        text = os.read(descriptor, 4 * KEY_BYTES).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(descriptor)
    return bytes.fromhex(text) if re.fullmatch(f"[0-9a-f]{{{2 * KEY_BYTES}}}", text) else None


def _create_key(path: Path) -> None:
    import tempfile

    temporary = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _trusted_dir(path.parent):
            return
        descriptor, temporary = tempfile.mkstemp(prefix=".cache-key.", dir=path.parent)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(os.urandom(KEY_BYTES).hex().encode("ascii") + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.link(temporary, path)  # never replaces a key another process published first
    except OSError:
        pass
    finally:
        _discard(temporary)


def _discard(path) -> None:
    """Remove a temporary file that was not published (None: nothing to remove)."""
    if path is not None:
        try:
            os.unlink(path)
        except OSError:
            pass


def _tag(secret: bytes, signed: bytes) -> bytes:
    return hmac.new(secret, signed, hashlib.sha256).hexdigest().encode()


def file_digest(path: str | Path) -> str | None:
    """SHA-256 of a regular file's bytes; None when nothing is there; ``UNREADABLE`` for
    anything else. As spec files are read, a FIFO, device or directory is refused after
    ``stat`` and never opened (opening a FIFO may block, a device may act on open), and a
    file larger than ``MAX_WITNESS_BYTES`` is not read."""
    try:
        if not _readable_regular(os.stat(path)):
            return UNREADABLE
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        return UNREADABLE
    try:
        if not _readable_regular(os.fstat(descriptor)):
            return UNREADABLE
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return hashlib.sha256(handle.read(MAX_WITNESS_BYTES + 1)).hexdigest()
    except OSError:
        return UNREADABLE
    finally:
        os.close(descriptor)


def _readable_regular(info: os.stat_result) -> bool:
    return stat.S_ISREG(info.st_mode) and info.st_size <= MAX_WITNESS_BYTES


def key(*inputs: str) -> str | None:
    """The key of an entry made from ``inputs`` by this flarespec, on this Python; None
    when the package's sources cannot be listed or read (nothing is cached then)."""
    try:
        parts = [str(FORMAT), flarespec.__version__, code_digest(), sys.version,
                 sys.implementation.cache_tag or "", str(_package_dir()), *inputs]
    except OSError:
        return None
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


# ------------------------------------------------------------------------- code digest

def _package_dir() -> Path:
    return Path(flarespec.__file__).resolve().parent


def _sources() -> list[tuple[str, str, os.stat_result]]:
    """Every ``*.py`` of the package (relative name, path, stat), in a stable order."""
    root = str(_package_dir())
    found = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        relative = os.path.relpath(folder, root).replace(os.sep, "/")
        for name in sorted(n for n in names if n.endswith(".py")):
            path = os.path.join(folder, name)
            found.append((name if relative == "." else f"{relative}/{name}", path,
                          os.stat(path)))
    return found


def code_digest() -> str:
    """SHA-256 over the package's own sources: a cached spec is never trusted by other code.

    Hashing every source costs more than the stat calls, so the digest is itself kept in
    the cache directory, keyed on the sources' (name, size, mtime_ns): a stat listing
    that matches reuses it; any change hashes the sources again."""
    global _code_digest
    if _code_digest is None:
        sources = _sources()
        listing = "\n".join(f"{name}\0{info.st_size}\0{info.st_mtime_ns}"
                            for name, _, info in sources)
        stat_key = hashlib.sha256(listing.encode("utf-8", "surrogatepass")).hexdigest()
        stored = _stored_code_digest(stat_key)
        if stored is not None:
            _code_digest = stored
        else:
            digest = hashlib.sha256()
            for name, path, _ in sources:
                digest.update(name.encode("utf-8", "surrogatepass") + b"\0")
                digest.update(hashlib.sha256(Path(path).read_bytes()).digest())
            _code_digest = digest.hexdigest()
            _write(CODE_STAMP, f"{stat_key}\n{_code_digest}".encode("ascii"))
    return _code_digest


def _stored_code_digest(stat_key: str) -> str | None:
    """The digest kept in the ``code-digest`` file ("<stat key>\\n<digest>") for this listing."""
    stamp = (_read_trusted(CODE_STAMP, _STAMP_BYTES) or b"").decode("ascii", "replace").split("\n")
    if len(stamp) == 2 and stamp[0] == stat_key and _HEX64.fullmatch(stamp[1]):
        return stamp[1]
    return None


# ------------------------------------------------------------------------- entries

def load(name: str, entry_key: str, valid: Callable[[object], bool]) -> object | None:
    """The value stored under ``name`` when its key and witnesses match and ``valid``
    accepts it; None otherwise (never an exception)."""
    secret = _secret(create=False)
    raw = _read_trusted(name, MAX_ENTRY_BYTES, b" ".join((MAGIC, entry_key.encode(), b""))) \
        if secret is not None else None
    if raw is None:
        return None
    header, _, payload = raw.partition(b"\n")
    fields = header.split(b" ")
    if len(fields) != 3 or fields[0] != MAGIC or fields[1] != entry_key.encode() \
            or not hmac.compare_digest(fields[2], _tag(secret, _signed(entry_key, payload))):
        return None  # not made by a flarespec holding this user's key: never unpickled
    try:
        entry = pickle.loads(payload)
        if not isinstance(entry, Entry) or not _witnesses_hold(entry):
            return None
    except Exception:  # noqa: BLE001 - any broken entry is a miss, never an error
        return None
    return entry.value if valid(entry.value) else None


def store(name: str, entry_key: str, value, files=(), hook_modules=()) -> None:
    """Write ``value`` with its witnesses: ``files`` as (path, digest or None) and the hook
    modules it needs (imported now). Any failure (read-only, full disk, a value that cannot
    be pickled) leaves the cache as it was, silently."""
    try:
        entry = Entry(value, list(files), _hook_witnesses(hook_modules))
        payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a value that cannot be cached is simply not cached
        return
    secret = _secret(create=directory() is not None)
    if secret is None:
        return
    header = b" ".join((MAGIC, entry_key.encode(), _tag(secret, _signed(entry_key, payload))))
    if len(header) + 1 + len(payload) <= MAX_ENTRY_BYTES:  # else it would never be read
        _write(name, header + b"\n" + payload)


def _signed(entry_key: str, payload: bytes) -> bytes:
    """What an entry's tag covers: the magic, the key and the payload."""
    return MAGIC + b" " + entry_key.encode() + b"\n" + payload


def _hook_witnesses(modules) -> list[tuple[str, str, str]]:
    """(module, file, digest) of each imported hook module, to compare on load."""
    witnesses = []
    for module_name in sorted(modules):
        path = getattr(sys.modules.get(module_name), "__file__", None)
        digest = file_digest(path) if path else None
        if digest is None:
            raise ValueError(f"hook module {module_name} has no readable source")
        witnesses.append((module_name, path, digest))
    return witnesses


def _witnesses_hold(entry: Entry) -> bool:
    if any(file_digest(path) != digest for path, digest in entry.files):
        return False
    import importlib

    for module_name, path, digest in entry.hooks:
        module = importlib.import_module(module_name)  # registers its hooks, as discover does
        if getattr(module, "__file__", None) != path or file_digest(path) != digest:
            return False
    return True


# ------------------------------------------------------------------------- files

def _trusted_dir(path: Path) -> bool:
    """A real directory (not a symlink) of this user that nobody else may write to."""
    info = os.lstat(path)
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() \
        and not info.st_mode & _UNSAFE_MODE


def _read_trusted(name: str, limit: int, start: bytes = b"") -> bytes | None:
    """The bytes of a cache file when the file and its directory are trusted, it holds at
    most ``limit`` bytes and starts with ``start``, else None. Its size is checked from
    ``fstat`` before reading, ``start``'s length is read first and alone (an entry's magic
    and key: another entry's payload is never read), and no more than ``limit + 1`` bytes
    are ever read (a file may grow)."""
    folder = directory()
    if folder is None:
        return None
    try:
        if not _trusted_dir(folder):
            return None
        descriptor = os.open(folder / name,
                             os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() \
                or info.st_mode & _UNSAFE_MODE or info.st_size > limit:
            return None
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            head = handle.read(len(start))
            if head != start:
                return None
            data = head + handle.read(limit + 1 - len(head))
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _write(name: str, data: bytes) -> None:
    """Atomically replace a cache file (0600, in a 0700 directory); silent on any failure."""
    folder = directory()
    if folder is None:
        return
    import tempfile  # only when writing: its imports cost a cache hit more than it reads

    temporary = None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _trusted_dir(folder):
            return
        descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, folder / name)
        temporary = None
    except OSError:
        pass
    finally:
        _discard(temporary)
