"""Finding and reading spec files: YAML with marks, then the meta-schema."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from flarespec.compiler.errors import SpecInvalid, SpecIssue
from flarespec.compiler.yamlmarks import Mark, MarkedDict, SpecYamlError, load_marked, mark_at


@dataclass
class SpecFile:
    path: Path
    data: MarkedDict
    digest: str  # SHA-256 of the file's bytes

    @property
    def id(self) -> str:
        return self.data["id"]


# A spec file is read whole; the bundled spec is under 40 KB. Half a MiB keeps the pure-Python
# YAML scanner near a second even for text that makes few values (quoted lines, blank lines:
# about 2.5 s/MiB on a loaded 2-core machine); values are bounded by yamlmarks.MAX_NODES.
MAX_SPEC_BYTES = 1 << 19
_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


def read_spec_file(path: str | Path) -> SpecFile:
    """One spec file, read (regular files only, bounded), parsed (JSON values, bounded) and
    shape-checked; every problem is a SpecInvalid naming file:line:column and a code."""
    path = Path(path)
    raw = read_spec_bytes(path)
    try:
        data = load_marked(raw.decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise SpecInvalid([SpecIssue("spec is not UTF-8", Mark(str(path), 1, 1),
                                     "spec.yaml")]) from None
    except SpecYamlError as error:
        raise SpecInvalid([SpecIssue(error.reason, error.mark, error.code)]) from None
    if not isinstance(data, dict):
        raise SpecInvalid([SpecIssue("a spec is a YAML mapping", Mark(str(path), 1, 1),
                                     "spec.shape")])
    from flarespec.compiler.metaschema import shape_errors  # only to read YAML: not on a cache hit

    issues = [SpecIssue(message, mark_at(data, where), "spec.shape")
              for where, message in shape_errors(data)]
    if issues:
        raise SpecInvalid(issues)
    return SpecFile(path, data, hashlib.sha256(raw).hexdigest())


def read_spec_bytes(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_SPEC_BYTES. A FIFO, device, socket or
    directory is refused after ``stat`` and before ``open`` (opening a FIFO blocks, some
    devices act on open, /dev/zero never ends); the opened file is checked again with
    ``fstat`` (it may have been swapped) and read up to one byte past the limit."""
    def issue(message: str, code: str):
        return SpecInvalid([SpecIssue(message, Mark(str(path), 1, 1), code)])

    try:
        _check_regular(os.stat(path), issue)
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        raise issue(f"cannot read spec: {error.strerror}", "spec.unreadable") from None
    try:
        _check_regular(os.fstat(descriptor), issue)
        chunks, size = [], 0
        while size <= MAX_SPEC_BYTES:
            chunk = os.read(descriptor, MAX_SPEC_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise issue(f"cannot read spec: {error.strerror}", "spec.unreadable") from None
    finally:
        os.close(descriptor)
    if size > MAX_SPEC_BYTES:
        raise _too_large(issue)
    return b"".join(chunks)


def _check_regular(info: os.stat_result, issue) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _FILE_KINDS if test(info.st_mode)), "not a file")
        raise issue(f"spec is {kind}, not a regular file", "spec.not-a-file")
    if info.st_size > MAX_SPEC_BYTES:
        raise _too_large(issue)


def _too_large(issue) -> SpecInvalid:
    return issue(f"spec is larger than {MAX_SPEC_BYTES >> 10} KiB, the limit for a spec file",
                 "spec.too-large")


def bundled_spec_dir() -> Path:
    """specs/ as installed (package flarespec.bundled_specs) or in a source checkout."""
    import flarespec.bundled_specs as bundled

    return Path(next(iter(bundled.__path__)))


class SpecLibrary:
    """Every spec under some directories, indexed by id (for ``extends`` and selection), plus
    the specs given by path (``add``) and, for a spec given by path, its parents beside it;
    ``fallback``: where an id found nowhere here is looked up (a spec directory's library
    falls back to the bundled one, whose files it then need not read unless a parent is
    there)."""

    def __init__(self, directories: list[Path] | None = None, *, siblings: Path | None = None,
                 fallback: SpecLibrary | None = None):
        self.directories = directories if directories is not None else [bundled_spec_dir()]
        self.fallback = fallback
        # a spec given by path finds a parent beside it, named after the parent id's last
        # segment (extends: a/b -> b.yaml); no other neighbour is read (see sibling())
        self.siblings = siblings
        self._by_id: dict[str, SpecFile] | None = None
        self._added: dict[str, SpecFile] = {}
        self._sibling_files: dict[Path, SpecFile] = {}
        # a broken file in the directories must not stop a valid spec from loading; all()
        # still reports it
        self.broken: list[SpecIssue] = []

    def _index(self) -> dict[str, SpecFile]:
        if self._by_id is None:
            self._by_id = {}
            for directory in self.directories:
                for path in sorted(Path(directory).rglob("*.yaml")):
                    self._index_file(path)
        return self._by_id

    def _index_file(self, path: Path) -> None:
        try:
            spec = read_spec_file(path)
        except SpecInvalid as problem:
            self.broken.extend(problem.issues)
            return
        known = self._by_id.get(spec.id)
        if known is None:
            self._by_id[spec.id] = spec
        elif known.path.resolve() != spec.path.resolve():
            self.broken.append(SpecIssue(
                f"spec id {spec.id!r} is also used by {known.path}",
                spec.data.key_marks.get("id"), "spec.duplicate-id"))

    @classmethod
    def for_file(cls, path: str | Path) -> tuple["SpecLibrary", SpecFile]:
        """A library for a spec given by path: the file itself wins, then a parent beside it
        (for ``extends``), then the bundled specs."""
        path = _absolute(Path(path))
        spec_file = read_spec_file(path)
        bundled = bundled_spec_dir()
        library = cls([bundled], siblings=path.parent if path.parent != bundled else None)
        library.add(spec_file)
        return library, spec_file

    def add(self, spec: SpecFile) -> None:
        self._added[spec.id] = spec

    def sibling_path(self, spec_id: str) -> Path | None:
        """Where a parent ``spec_id`` would lie beside a spec given by path."""
        if self.siblings is None:
            return None
        return self.siblings / f"{spec_id.rsplit('/', 1)[-1]}.yaml"

    def sibling(self, spec_id: str) -> SpecFile | None:
        """The spec beside the given file that is named after ``spec_id`` and has that id.

        Only this one file is read, and only when a parent is looked up: every other file in
        the directory (/tmp holds anything) stays unread, so a FIFO, a huge file or an alias
        bomb beside a spec cannot affect it. A broken candidate is reported: it is the file
        the id names."""
        path = self.sibling_path(spec_id)
        if path is None or not (path.exists() or path.is_symlink()):
            return None
        if path not in self._sibling_files:
            self._sibling_files[path] = read_spec_file(path)
        spec = self._sibling_files[path]
        return spec if spec.id == spec_id else None

    def get(self, spec_id: str) -> SpecFile | None:
        """The spec with this id; when it is not found and some file is broken, that file's
        issues are the likelier answer than "unknown spec", so they are raised."""
        found = self._added.get(spec_id) or self.sibling(spec_id) or self._index().get(spec_id)
        if found is None and self.fallback is not None:
            found = self.fallback.get(spec_id)
        if found is None and self.broken:
            raise SpecInvalid(self.broken)
        return found

    def loadable(self) -> tuple[list[SpecFile], list[SpecIssue]]:
        """Every spec file that reads, and the issues of those that do not (each naming its
        file): one broken file never hides the others."""
        specs = {**self._index(), **self._added}
        return list(specs.values()), list(self.broken)

    def all(self) -> list[SpecFile]:
        """Every spec; a broken file among them is an error here (bundled specs must all load)."""
        specs = {**self._index(), **self._added}
        if self.broken:
            raise SpecInvalid(self.broken)
        return list(specs.values())


def _absolute(path: Path) -> Path:
    """The resolved path, or the absolute one when symlinks loop (read_spec_file reports it)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))
