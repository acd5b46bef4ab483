"""One way to open a spec: a bundled id (``shop/v1``) or a file path, for every command.

``open_spec`` resolves (``extends`` applied, constants substituted); ``open_compiled``
compiles too and caches the result, so a command that validates two packets, or a test run,
reads and compiles each spec once. A reference that is neither an existing path nor a
bundled id is a ``spec.unknown`` issue that lists the bundled ids and the closest one.
"""

from __future__ import annotations

import os
from pathlib import Path

from flarespec.spec.compile import CompiledSpec, compile_spec
from flarespec.spec.errors import SpecInvalid, SpecIssue, did_you_mean
from flarespec.spec.load import SpecLibrary
from flarespec.spec.resolve import ResolvedSpec, resolve

UNKNOWN_SPEC = "spec.unknown"

_compiled: dict[tuple, CompiledSpec] = {}
_bundled_library: SpecLibrary | None = None


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
    """``open_spec`` compiled, cached by file (real path and mtime) or by bundled id and
    digest."""
    if is_path(ref):
        # realpath, unlike resolve(), leaves a symlink loop as it is: read_spec_file reports it
        path = Path(os.path.realpath(ref))
        key = ("file", str(path), path.stat().st_mtime_ns if path.exists() else 0)
        if key not in _compiled:
            _compiled[key] = compile_spec(open_spec(path))
        return _compiled[key]
    library = bundled_library()
    spec_file = library.get(str(ref))
    if spec_file is None:
        raise unknown_spec(str(ref), library)
    return _compiled_bundled(spec_file, library)


def bundled_compiled(library: SpecLibrary | None = None) -> list[CompiledSpec]:
    """Every spec of the library (default: the bundled specs), compiled once per process."""
    library = library or bundled_library()
    return [_compiled_bundled(spec_file, library) for spec_file in library.all()]


def _compiled_bundled(spec_file, library: SpecLibrary) -> CompiledSpec:
    key = ("bundled", spec_file.id, spec_file.digest)
    if key not in _compiled:
        _compiled[key] = compile_spec(resolve(spec_file, library))
    return _compiled[key]


def check_spec_ref(ref: str) -> None:
    """Raise ``spec.unknown`` now when ``ref`` is neither a path nor a bundled id (for a
    command-line option: a usage error before any work)."""
    if not is_path(ref):
        library = bundled_library()
        if library.get(ref) is None:
            raise unknown_spec(ref, library)


def unknown_spec(ref: str, library: SpecLibrary) -> SpecInvalid:
    ids = sorted(spec.id for spec in library.all())
    return SpecInvalid([SpecIssue(
        f"{ref!r} is neither a spec file nor a bundled spec id{did_you_mean(ref, ids)}; "
        f"bundled: {', '.join(ids) or 'none'}", None, UNKNOWN_SPEC)])
