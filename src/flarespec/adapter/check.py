"""``flarespec check``: validate entry files of any benchmark tool against their specs.

Each entry file is validated in full against the spec named (``--spec ID|FILE``) or the
one whose ``applies_to`` holds among the bundled specs and the spec directories'
(spec.open.spec_library). No peer, no metric, no receipt is required: with an output, the
receipt is the model ``measure`` writes (every file read and its digest, each spec's and
hook's digest; a metric only on pass and only where the spec declares one), written
atomically outside every entry's root. Entries are validated on the usable cores (a
forked worker each, adapter/parallel.py) and reported in argument order, as ``entry 1``,
``entry 2``, ...

Fails closed as ``measure`` does: no failure while choosing a spec or validating escapes
as an exception, each is a violation of its entry. What makes the run itself impossible
(a spec id used twice in the library, ``--spec`` naming no spec) is :class:`CheckRefused`
before any entry is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from flarespec.adapter import parallel
from flarespec.adapter import receipt as receipts
from flarespec.adapter.commands import (
    EXIT_PASS, EXIT_REJECTED, PacketResult, _inputs_read, _run_evaluation, _spec_invalid,
    choose_spec, entry_path, guard_cache, internal_error)
from flarespec.engine.outcome import Outcome
from flarespec.compiler.compile import CompiledSpec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import Library, is_path, open_in_library, spec_library

COMMAND = "check"


class CheckRefused(Exception):
    """Nothing can be checked: the message says why (no receipt is written)."""


@dataclass
class CheckOutcome:
    exit_code: int
    receipt: dict
    output: Path | None
    results: list[PacketResult]
    library: Library | None


def role(index: int) -> str:
    """The role of the entry at this position of the arguments (0-based)."""
    return f"entry {index + 1}"


def check(entries, *, spec_ref: str | None = None, spec_dirs=(),
          output: str | Path | None = None,
          on_done: Callable[[int], None] | None = None) -> CheckOutcome:
    """Validate each entry file; write the receipt to ``output`` when given. ``spec_dirs``:
    directories of spec files beside the bundled ones (already checked to be directories:
    spec.open.spec_directories). ``on_done(index)`` as each entry is done (any order).
    Raises ValueError for an entry path spelled as a directory, receipts.OutputRefused for
    a bad output, CheckRefused when no spec can be used."""
    paths = [entry_path(entry) for entry in entries]
    target = None
    if output is not None:
        target = receipts.check_output(output, *paths)
        receipts.refuse_inputs(output, target, [(spec_ref, "the --spec file")]
                               if spec_ref is not None and is_path(spec_ref) else [])
    guard_cache(*paths)  # before any spec is opened
    library, named = _specs(spec_ref, spec_dirs)
    results = _validated(paths, library, named, on_done)
    passed = all(result.ok for result in results)
    receipt = receipts.check_receipt(results, passed)
    if target is not None:
        read = _inputs_read(*results) + [(str(path), "a spec file of a spec directory")
                                         for path in (library.files if library else [])]
        receipts.refuse_inputs(target, target, read)
        receipts.write_atomically(target, receipt)
    return CheckOutcome(EXIT_PASS if passed else EXIT_REJECTED, receipt, target, results,
                        library)


def _specs(spec_ref: str | None, spec_dirs
           ) -> tuple[Library | None, tuple[CompiledSpec | None, list] | None]:
    """The library to select from, or the named spec (or the violations of a named spec
    file that does not compile). A spec file named by path needs no library."""
    if spec_ref is not None and is_path(spec_ref):
        spec, problems = choose_spec(None, spec_ref)
        return None, (spec, problems)
    try:
        library = spec_library(spec_dirs)
    except SpecInvalid as problem:
        raise CheckRefused("; ".join(map(str, problem.issues))) from None
    if spec_ref is None:
        return library, None
    try:
        return library, (open_in_library(spec_ref, library), [])
    except SpecInvalid as problem:
        if any(issue.code == "spec.unknown" for issue in problem.issues):
            raise CheckRefused("; ".join(map(str, problem.issues))) from None
        return library, (None, _spec_invalid(problem))


def _validated(paths: list[Path], library: Library | None, named, on_done
               ) -> list[PacketResult]:
    """Every entry chosen for and validated, in a worker each (at most the usable cores at
    a time), as PacketResults in argument order."""
    candidates = list(library.specs) if library is not None else []
    if named is not None and named[0] is not None and _position(named[0], candidates) is None:
        candidates.append(named[0])

    def one(index: int) -> tuple[int | None, list, Outcome]:
        return _one(paths[index], library, named, candidates)

    def failed(index: int, problem: BaseException) -> tuple[None, list, Outcome]:
        return None, [internal_error(problem, "in the worker validating this entry")], \
            Outcome("none")

    workers = min(parallel.jobs(), len(paths))
    outcomes = parallel.run_all(one, [(index,) for index in range(len(paths))], failed,
                                workers=workers, on_done=on_done)
    results = []
    for index, (position, selection, report) in enumerate(outcomes):
        spec = candidates[position] if position is not None else None
        results.append(PacketResult(role(index), paths[index], spec, report, selection))
    return results


def _one(entry: Path, library: Library | None, named, candidates: list[CompiledSpec]
         ) -> tuple[int | None, list, Outcome]:
    """One entry: its spec (the named one, or chosen) as a position among ``candidates``
    (a compiled spec is not sent back from a worker), the violations of choosing it, and
    its report. Never raises."""
    try:
        spec, selection = named if named is not None else choose_spec(entry, None, library)
        if spec is None or selection:
            return _position(spec, candidates), list(selection), \
                Outcome(spec.id if spec else "none")
        return _position(spec, candidates), [], _run_evaluation(spec, entry)
    except Exception as bug:  # never a traceback, never a pass
        return None, [internal_error(bug, "while checking this entry")], Outcome("none")


def _position(spec: CompiledSpec | None, candidates: list[CompiledSpec]) -> int | None:
    """Where ``spec`` itself is among the candidates (by identity: compiled specs are not
    compared by value)."""
    return next((i for i, candidate in enumerate(candidates) if candidate is spec), None)
