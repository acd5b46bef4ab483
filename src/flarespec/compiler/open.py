"""One way to open a spec: a bundled id (``shop/v1``) or a file path, for every command.

``open_spec`` resolves (``extends`` applied, constants substituted); ``open_compiled``
compiles too and caches the result, so a command that validates two packets, or a test run,
reads and compiles each spec once. Across processes, compiled specs are kept in the user
cache directory (flarespec.compiler.cache): the bundled specs as one entry keyed by every
bundled file's digest, a spec file by its own digest, the bundled files' and, as witnesses,
its parents'. A reference that is neither an existing path nor a bundled id is a
``spec.unknown`` issue that lists the bundled ids and the closest one.

Spec directories (``flarespec check --specs DIR``, ``FLARESPEC_SPECS``) add every ``*.yaml``
under them to the bundled specs as one :class:`Library` (``spec_library``); a spec id used
twice is refused, naming both files. Their specs are compiled once per process (not kept
in the compiled-spec cache).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from flarespec.compiler import cache
from flarespec.compiler.compile import CompiledSpec, compile_spec
from flarespec.compiler.errors import SpecInvalid, SpecIssue, did_you_mean
from flarespec.compiler.load import SpecLibrary, bundled_spec_dir
from flarespec.compiler.resolve import ResolvedSpec, resolve

UNKNOWN_SPEC = "spec.unknown"

BUNDLED_ENTRY = "bundled.pickle"

_compiled: dict[tuple, CompiledSpec] = {}
_bundled_library: SpecLibrary | None = None
_bundled_specs: list[CompiledSpec] | None = None
_bundled_partial: tuple[list, list] | None = None  # bundled_loadable, when some file is broken


def bundled_library() -> SpecLibrary:
    """The installed specs; they do not change while a process runs, so read once."""
    global _bundled_library
    _bundled_library = _bundled_library or SpecLibrary()
    return _bundled_library


def is_path(ref: str | Path) -> bool:
    """Any existing name is a file reference (read_spec_file refuses a FIFO, device or
    directory by name); anything else is looked up as a bundled id."""
    return Path(ref).exists() or Path(ref).is_symlink()


def open_spec(ref: str | Path) -> ResolvedSpec:
    """The resolved spec named by ``ref``: a file (its parents beside it, then among the
    bundled specs) or a bundled id. Every problem is a SpecInvalid."""
    if is_path(ref):
        library, spec_file = SpecLibrary.for_file(ref)
        return resolve(spec_file, library)
    library = bundled_library()
    spec_file = library.get(str(ref))
    if spec_file is None:
        raise unknown_spec(str(ref), library)
    return resolve(spec_file, library)


def open_compiled(ref: str | Path) -> CompiledSpec:
    """``open_spec`` compiled, kept in memory by file (real path and mtime) or bundled id,
    and across processes in the compiled-spec cache."""
    if is_path(ref):
        # realpath, unlike resolve(), leaves a symlink loop as it is: read_spec_file reports it
        path = Path(os.path.realpath(ref))
        key = ("file", str(path), path.stat().st_mtime_ns if path.exists() else 0)
        if key not in _compiled:
            _compiled[key] = _compiled_file(path)
        return _compiled[key]
    found = _bundled_by_id(str(ref))
    if found is not None:
        return found
    library = bundled_library()
    spec_file = library.get(str(ref))
    if spec_file is None:
        raise unknown_spec(str(ref), library)
    return _compiled_bundled(spec_file, library)


def bundled_compiled(library: SpecLibrary | None = None) -> list[CompiledSpec]:
    """Every spec of the library (default: the bundled specs), compiled once per process
    (the bundled specs through the compiled-spec cache)."""
    if library is None or library is _bundled_library:
        return list(_bundled_set())
    return [_compiled_bundled(spec_file, library) for spec_file in library.all()]


def bundled_loadable() -> tuple[list[CompiledSpec], list[SpecIssue]]:
    """The bundled specs that compile, and the problems of the files that do not (each
    naming its file). A broken or half-written file under ``specs/`` then never changes what
    happens to a packet another spec applies to: selection, ``spec list``, ``spec test`` and
    the default spec of ``fixture write`` use the rest and report it."""
    global _bundled_partial
    try:
        return list(_bundled_set()), []
    except SpecInvalid:
        pass
    if _bundled_partial is None:
        library = bundled_library()
        files, problems = library.loadable()
        specs = []
        for spec_file in files:
            try:
                specs.append(_compiled_bundled(spec_file, library))
            except SpecInvalid as problem:
                problems.extend(problem.issues)
        _bundled_partial = (specs, problems)
    return list(_bundled_partial[0]), list(_bundled_partial[1])


def _bundled_by_id(spec_id: str) -> CompiledSpec | None:
    """The bundled spec with this id from the compiled set (the cache), or None: not there,
    or some bundled spec does not compile (the library then says what is wrong)."""
    try:
        return next((spec for spec in bundled_loadable()[0] if spec.id == spec_id), None)
    except SpecInvalid:  # a broken bundled spec must not stop another one from opening
        return None


def _compiled_bundled(spec_file, library: SpecLibrary) -> CompiledSpec:
    key = ("bundled", spec_file.id, spec_file.digest)
    if key not in _compiled:
        _compiled[key] = compile_spec(resolve(spec_file, library))
    return _compiled[key]


def _bundled_set() -> list[CompiledSpec]:
    """The bundled specs compiled: from the cache when every bundled file is unchanged
    (no YAML is parsed then), else compiled (and stored)."""
    global _bundled_specs
    if _bundled_specs is None:
        _bundled_specs = _cached_bundled_set() if cache.enabled() else _compile_bundled_set()
    return _bundled_specs


def _compile_bundled_set() -> list[CompiledSpec]:
    library = bundled_library()
    return [_compiled_bundled(spec_file, library) for spec_file in library.all()]


def _cached_bundled_set() -> list[CompiledSpec]:
    files = _bundled_files()
    entry_key = cache.key(BUNDLED_ENTRY, *_inputs(files))
    specs = cache.load(BUNDLED_ENTRY, entry_key, _all_compiled) if entry_key else None
    if specs is None:
        specs = _compile_bundled_set()
        if entry_key and _read_as_keyed(bundled_library().all(), files):
            cache.store(BUNDLED_ENTRY, entry_key, specs,
                        hook_modules=set().union(*(spec.hook_modules for spec in specs)))
    return specs


def _compiled_file(path: Path) -> CompiledSpec:
    """A spec file compiled, through the cache: keyed by its path and digest and the bundled
    files' digests (a parent may be bundled); the parents beside it, and each place a parent
    was looked for beside it, are witnesses checked on load."""
    own = cache.file_digest(path) if cache.enabled() else None
    if own in (None, cache.UNREADABLE):  # cache off, or unreadable: compiling reports it
        return compile_spec(open_spec(path))
    entry_key = cache.key("file", str(path), own, *_inputs(_bundled_files()))
    name = f"file-{hashlib.sha256(os.fsencode(path)).hexdigest()[:32]}.pickle"
    spec = cache.load(name, entry_key, lambda value: isinstance(value, CompiledSpec)) \
        if entry_key else None
    if spec is None:
        library, spec_file = SpecLibrary.for_file(path)
        spec = compile_spec(resolve(spec_file, library))
        if entry_key and spec_file.digest == own:
            cache.store(name, entry_key, spec, _parent_witnesses(spec.resolved, library),
                        spec.hook_modules)
    return spec


def _bundled_files() -> list[tuple[str, str | None]]:
    """(path, digest) of every bundled spec file, found as SpecLibrary finds them."""
    return [(str(path), cache.file_digest(path))
            for path in sorted(bundled_spec_dir().rglob("*.yaml"))]


def _inputs(files: list[tuple[str, str | None]]) -> list[str]:
    return [f"{path}={digest}" for path, digest in files]


def _read_as_keyed(spec_files, files: list[tuple[str, str | None]]) -> bool:
    """The library compiled the very bytes the key was computed from (no file changed in
    between), so the entry may be stored under that key."""
    return {str(spec.path): spec.digest for spec in spec_files} == dict(files)


def _all_compiled(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, CompiledSpec) for v in value)


def _parent_witnesses(resolved: ResolvedSpec, library: SpecLibrary
                      ) -> list[tuple[str, str | None]]:
    """The parent files compiled, and every place beside the spec where a parent was
    looked for (absent there: None), as (path, digest)."""
    witnesses = [(str(spec.path), spec.digest) for spec in resolved.chain[1:]]
    for spec in resolved.chain:
        candidate = library.sibling_path(spec.data["extends"]) if "extends" in spec.data \
            else None
        if candidate is not None:
            witnesses.append((str(candidate), cache.file_digest(candidate)))
    return witnesses


def check_spec_ref(ref: str) -> None:
    """Raise ``spec.unknown`` now when ``ref`` is neither a path nor a bundled id (for a
    command-line option: a usage error before any work)."""
    if not is_path(ref) and _bundled_by_id(ref) is None:
        library = bundled_library()
        if library.get(ref) is None:
            raise unknown_spec(ref, library)


def unknown_spec(ref: str, library: SpecLibrary) -> SpecInvalid:
    ids = sorted(spec.id for spec in library.loadable()[0])
    return SpecInvalid([SpecIssue(
        f"{ref!r} is neither a spec file nor a bundled spec id{did_you_mean(ref, ids)}; "
        f"bundled: {', '.join(ids) or 'none'}", None, UNKNOWN_SPEC)])


# ------------------------------------------------------------------ spec directories
SPECS_VARIABLE = "FLARESPEC_SPECS"
DUPLICATE_ID = "spec.duplicate-id"


class SpecDirectoryError(ValueError):
    """A spec directory named by ``--specs`` or FLARESPEC_SPECS that is not a directory."""


def spec_directories(given=(), environ=None) -> list[Path]:
    """The spec directories of a run: each ``--specs DIR`` given, then each entry of
    FLARESPEC_SPECS (``os.pathsep``-separated; empty entries ignored), each directory once.
    One that is not a directory is a SpecDirectoryError saying where it was named."""
    environ = os.environ if environ is None else environ
    named = [(d, "--specs") for d in given]
    named += [(d, SPECS_VARIABLE) for d in environ.get(SPECS_VARIABLE, "").split(os.pathsep)
              if d.strip()]
    named = [(Path(os.path.abspath(d)), where) for d, where in named]  # receipts name files
    found: list[Path] = []
    for directory, where in named:
        if not directory.is_dir():
            raise SpecDirectoryError(f"{where} {str(directory)!r} is not a directory")
        if not any(os.path.samefile(directory, known) for known in found):
            found.append(directory)
    return found


@dataclass
class Library:
    """What selection chooses among: every bundled spec that compiles and every spec file
    under the spec directories (drafts too: selection skips them, ``--spec ID`` finds
    them), the problems of the files that do not load or compile (each naming its file,
    never fatal for an entry another spec applies to), the directories searched, and the
    spec files read from them (a receipt never replaces one)."""
    specs: list[CompiledSpec]
    problems: list[SpecIssue]
    directories: list[Path]
    files: list[Path]

    def ids(self) -> list[str]:
        return sorted({spec.id for spec in self.specs})


def source_file(spec: CompiledSpec) -> Path | None:
    """The file a compiled spec was read from (None: it has none, e.g. a git revision's)."""
    return getattr(spec.resolved.chain[0], "path", None)


def spec_library(directories=()) -> Library:
    """The bundled specs (through the compiled-spec cache) and every ``*.yaml`` under each
    directory, recursively (``extends`` finds a parent among them, then among the bundled
    specs). Refused (SpecInvalid, ``spec.duplicate-id``, both files named) when a spec id is
    used twice: by a directory's file and a bundled spec, or by two directories' files. A
    run then never validates against one of two specs of one id by accident."""
    bundled, problems = bundled_loadable()
    directories = list(directories)
    if not directories:
        return Library(bundled, problems, [], [])
    library = SpecLibrary(directories, fallback=bundled_library())
    files, broken = library.loadable()
    duplicates = [issue for issue in broken if issue.code == DUPLICATE_ID]
    own = []
    for spec_file in files:
        known = next((spec for spec in bundled if spec.id == spec_file.id), None)
        if known is None:
            own.append(spec_file)
        elif not _same_file(source_file(known), spec_file.path):
            duplicates.append(SpecIssue(
                f"spec id {spec_file.id!r} is also the bundled spec's, "
                f"{source_file(known)}: a spec directory adds specs, it does not "
                f"replace a bundled one (give this spec another id)",
                spec_file.data.key_marks.get("id"), DUPLICATE_ID))
    if duplicates:
        raise SpecInvalid(duplicates)
    specs = list(bundled)
    problems = problems + [issue for issue in broken if issue.code != DUPLICATE_ID]
    for spec_file in own:
        try:
            specs.append(_compiled_in(spec_file, library))
        except SpecInvalid as problem:
            problems.extend(problem.issues)
    return Library(specs, problems, directories, [spec_file.path for spec_file in own])


def _same_file(first: Path | None, second: Path) -> bool:
    try:
        return first is not None and os.path.samefile(first, second)
    except (OSError, ValueError):
        return False


def _compiled_in(spec_file, library: SpecLibrary) -> CompiledSpec:
    """A spec directory's file compiled once per process (by path and digest)."""
    key = ("library", str(spec_file.path), spec_file.digest)
    if key not in _compiled:
        _compiled[key] = compile_spec(resolve(spec_file, library))
    return _compiled[key]


def open_in_library(ref: str, library: Library) -> CompiledSpec:
    """``--spec ID|FILE`` beside spec directories: a file of the library (found by path) or
    any other file (``open_compiled``), or the id of a spec of the library, a draft
    included; else ``spec.unknown`` naming the ids known."""
    if is_path(ref):
        found = next((spec for spec in library.specs
                      if _same_file(source_file(spec), Path(ref))), None)
        return found or open_compiled(ref)
    found = next((spec for spec in library.specs if spec.id == ref), None)
    if found is not None:
        return found
    ids = library.ids()
    where = "bundled" + "".join(f", {d}" for d in library.directories)
    raise SpecInvalid([SpecIssue(
        f"{ref!r} is neither a spec file nor a spec id{did_you_mean(ref, ids)}; known "
        f"({where}): {', '.join(ids) or 'none'}", None, UNKNOWN_SPEC)])
