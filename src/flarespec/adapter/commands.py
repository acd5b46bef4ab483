"""The runner-facing commands as library functions: ``measure`` and ``validate_pair``.

Both validate two packets in full, match them on the spec's pair identities, and write a
receipt atomically outside both packet roots. A metric appears in a receipt only when every
check of both packets and of the pair passed; anything else is a rejection without a metric.
A spec need not declare a metric: ``validate_pair`` then passes without one, while
``measure``, which exports one for the runner, rejects at spec selection (``metric.undeclared``).
No failure while choosing a spec, validating or comparing escapes as an exception: each
becomes a violation, so it rejects and never passes. An entry path spelled as a directory
(``A/packet.json/``) is a wrong argument (``ValueError``), raised before anything is read.

A packet is its root directory as named (the parent of the entry path, not resolved) plus
its entry file name. Two paths are one packet only when both name the same directory
(``samefile``) and the same entry name: a ``packet.json`` symlinked into a subfolder, named
there directly, is another packet whose root is that subfolder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from flarespec.adapter import parallel
from flarespec.adapter import receipt as receipts
from flarespec.adapter.receipt import OutputRefused, ReceiptUnwritable
from flarespec.adapter.select import SPEC_INVALID, select_spec, selectable_specs
from flarespec.engine.evaluate import INTERNAL_ERROR, Evaluation
from flarespec.engine.values import strict_equal
from flarespec.engine.outcome import Outcome, Violation, shorten
from flarespec.compiler.compile import CompiledSpec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import open_compiled

__all__ = ["EXIT_PASS", "EXIT_REJECTED", "OutputRefused", "CommandResult", "PacketResult",
           "ReceiptUnwritable", "guard_cache", "measure", "same_packet", "validate_packet",
           "validate_pair"]

EXIT_PASS = 0
EXIT_REJECTED = 2
PEER_INVALID = "pair.peer-invalid"
SAME_SPEC = "pair.same-spec"
NO_METRIC = "metric.undeclared"  # measure only: the chosen spec declares no metric to export


@dataclass
class PacketResult:
    role: str
    entry: Path
    spec: CompiledSpec | None
    report: Outcome
    selection_violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.spec is not None and self.report.ok and not self.selection_violations

    @property
    def to_validate(self) -> bool:
        """A spec was chosen and nothing found while choosing it rejects the packet."""
        return self.spec is not None and not self.selection_violations

    @property
    def violations(self) -> list[Violation]:
        return self.selection_violations + self.report.violations


@dataclass
class CommandResult:
    """What a runner command did: its exit code, the receipt it wrote, where, and each
    packet's result."""

    exit_code: int
    receipt: dict
    output: Path
    results: list[PacketResult]


def internal_error(bug: BaseException, during: str) -> Violation:
    """A bug (or an input nobody foresaw) as a violation: it rejects, it never passes."""
    return Violation(INTERNAL_ERROR, "error",
                     f"internal error {during}: {type(bug).__name__}: {shorten(str(bug))}")


def _spec_invalid(problem: SpecInvalid) -> list[Violation]:
    return [Violation(SPEC_INVALID, "error", str(issue),
                      issue.mark.file if issue.mark else None,
                      f"line {issue.mark.line}, column {issue.mark.column}"
                      if issue.mark else None) for issue in problem.issues]


def choose_spec(entry: Path, spec_path: str | Path | None, library=None
                ) -> tuple[CompiledSpec | None, list[Violation]]:
    """The spec for this packet (``spec_path`` compiled, or chosen by the ``applies_to`` of
    the bundled specs, or of a ``library``: spec.open.Library, the bundled specs and spec
    directories') or the violations saying why there is none. Never raises: an entry
    file that cannot be read is its own loader violation (``<entry rule>.<code>``), a
    broken or unreadable spec file ``spec.invalid``, anything else ``engine.internal-error``."""
    try:
        if spec_path is not None:
            return open_compiled(spec_path), []
        if library is None:
            chosen = select_spec(entry, *selectable_specs())
        else:
            chosen = select_spec(entry, library.specs, library.problems, library.directories)
        return chosen.spec, chosen.violations
    except SpecInvalid as problem:
        return None, _spec_invalid(problem)
    except OSError as problem:
        if spec_path is None:
            return None, [internal_error(problem, "while choosing the spec")]
        return None, [Violation(SPEC_INVALID, "error", f"cannot read the spec file "
                                f"{spec_path}: {problem.strerror or problem}", str(spec_path))]
    except Exception as bug:  # e.g. an entry document no loader foresaw
        return None, [internal_error(bug, "while choosing the spec")]


def validate_packet(entry: str | Path, role: str, spec_path: str | Path | None = None, *,
                    needs_metric: bool = False) -> PacketResult:
    """Select the spec (or compile ``spec_path``) and validate one packet in full."""
    return _evaluated(_chosen(entry, role, spec_path, needs_metric=needs_metric))


def _chosen(entry: str | Path, role: str, spec_path, *, needs_metric: bool = False
            ) -> PacketResult:
    """The packet with its spec chosen and nothing validated yet (an empty report), or,
    when no spec can be chosen (or, with ``needs_metric``, the one chosen declares no
    metric), its final result."""
    entry = entry_path(entry)
    spec, selection = choose_spec(entry, spec_path)
    if needs_metric and spec is not None and spec.metric is None:
        selection = [no_metric(spec)]
    return PacketResult(role, entry, spec, Outcome(spec.id if spec else "none"), selection)


def no_metric(spec: CompiledSpec) -> Violation:
    """``measure`` only: its receipt exports one metric for the runner, and this spec
    declares none. Found when the spec is chosen; nothing is validated."""
    source = getattr(spec.resolved.chain[0], "path", None)
    named = f"{spec.id} ({source})" if source else spec.id
    return Violation(NO_METRIC, "error",
                     f"spec {named} declares no metric; measure reports one metric for the "
                     f"runner: use validate-pair, which validates a pair without one")


def _evaluated(chosen: PacketResult) -> PacketResult:
    """The chosen packet validated in full (returned as it is when it cannot be)."""
    if not chosen.to_validate:
        return chosen
    return PacketResult(chosen.role, chosen.entry, chosen.spec,
                        _run_evaluation(chosen.spec, chosen.entry))


def entry_path(entry: str | Path) -> Path:
    """A packet's entry path as given. Refused (``ValueError``) when its spelling names a
    directory (``A/packet.json/``, :func:`receipt.directory_ending`): ``Path`` would drop
    the ending and read the file before it, which the path given does not name."""
    ending = receipts.directory_ending(entry)
    if ending is not None:
        raise ValueError(f"{os.fspath(entry)!r} names a directory (it ends with {ending!r}): "
                         f"name the packet's entry file itself")
    return Path(entry)


def _run_evaluation(spec: CompiledSpec, entry: Path) -> Outcome:
    try:
        return Evaluation(spec, entry).run()
    except Exception as bug:  # never a traceback, never a metric
        report = Outcome(spec.id)
        report.add(internal_error(bug, "while validating"))
        return report


def same_packet(first: str | Path, second: str | Path) -> bool:
    """Truly one packet: the same entry file name in the same root directory, where the
    root is the directory each path names (compared with ``samefile``, so two spellings of
    one directory match), never the directory a symlinked entry file resolves into."""
    first, second = Path(first), Path(second)
    if first.name != second.name:
        return False
    try:
        return os.path.samefile(first.parent, second.parent)
    except (OSError, ValueError):  # a root that is not there: one packet only if one path
        return os.path.abspath(first) == os.path.abspath(second)


def peer_invalid(own: PacketResult, peer: PacketResult) -> list[Violation]:
    """``measure`` only: the peer, a packet other than the measured one, is invalid, so the
    pair is incomplete. The peer's own violations are listed under its role; this one says
    why the measured packet, perhaps valid itself, exports no metric."""
    if peer is own or peer.ok:
        return []
    count = len(peer.violations) + sum(peer.report.suppressed.values())
    return [Violation(PEER_INVALID, "error",
                      f"the peer {os.path.abspath(peer.entry)} is invalid ({count} "
                      f"violation{'s' * (count != 1)}, listed under packet \"{peer.role}\"); "
                      f"no metric is exported for an incomplete pair")]


def compare_pair(first: PacketResult, second: PacketResult) -> list[Violation]:
    """Pair violations: different specs, or a differing pair identity."""
    if first.spec is None or second.spec is None:
        return []
    if first.spec.id != second.spec.id:
        return [Violation(SAME_SPEC, "error",
                          f"the packets follow different specs: {first.spec.id} and "
                          f"{second.spec.id}", None, None, first.spec.id, second.spec.id)]
    if second is first:
        return []  # a packet is always comparable with itself
    found = []
    for rule in first.spec.pair:
        mine = first.report.identities.get(rule["identity"])
        theirs = second.report.identities.get(rule["identity"])
        if mine is None or theirs is None:
            continue  # unreadable: that packet's own violations say why
        if not strict_equal(mine, theirs):
            found.append(Violation(rule["id"], "error",
                                   f"{rule['description']} ({rule['identity']} differs between "
                                   f"{first.role} and {second.role}: "
                                   f"{pair_difference(mine, theirs, first.role, second.role)})",
                                   None, rule["identity"], mine, theirs))
    return found


PAIR_VALUE_CHARS = 80  # characters of each value a pair mismatch message quotes


def _quoted(value) -> str:
    """A value as JSON text, at most PAIR_VALUE_CHARS of it (bounded and without recursion,
    so an identity nested thousands deep is quoted as safely as a short one)."""
    from flarespec.engine.outcome import shown

    return shown(value, PAIR_VALUE_CHARS)


def pair_difference(mine, theirs, first: str, second: str) -> str:
    """What differs, in words: for a mapping identity (prepared capacity) each differing
    member with both values (``pages_total 7000 in baseline, 8000 in candidate``),
    members only one side has said so; otherwise both values. Values are JSON (a ``1``
    and a ``1.0`` differ, as the comparison is type-strict), cut to 80 characters."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        parts = []
        for key in sorted(set(mine) | set(theirs), key=str):
            if key not in theirs:
                parts.append(f"{key} {_quoted(mine[key])} in {first}, absent in {second}")
            elif key not in mine:
                parts.append(f"{key} absent in {first}, {_quoted(theirs[key])} in {second}")
            elif not strict_equal(mine[key], theirs[key]):
                parts.append(f"{key} {_quoted(mine[key])} in {first}, "
                             f"{_quoted(theirs[key])} in {second}")
        if parts:
            return "; ".join(parts)
    return f"{_quoted(mine)} in {first}, {_quoted(theirs)} in {second}"


def _pair_violations(one: PacketResult, two: PacketResult, *, peer_check: bool
                     ) -> list[Violation]:
    try:
        return (peer_invalid(one, two) if peer_check else []) + compare_pair(one, two)
    except Exception as bug:  # e.g. identities too deep to compare: reject, never pass
        return [internal_error(bug, "while comparing the pair")]


def guard_cache(*entries: str | Path) -> str | None:
    """Refuse the compiled-spec cache for this run when its directory or its key file lies
    inside a root of any of these packets (named, resolved, or the folder of the resolved
    entry file; also by device and inode): it would write into the packet and could load a
    pickle the packet ships. Returns why it was refused (None: the cache may be used).
    Never raises: when the roots cannot be worked out, the cache is refused too."""
    from flarespec.compiler import cache

    cache.refuse(None)
    try:
        roots = set().union(*(receipts.packet_roots(entry) for entry in entries))
        for what, path in (("directory", cache.configured_directory()),
                           ("key file", cache.cache_key_file())):
            if path is None:
                continue
            inside = receipts._root_holding(os.path.abspath(path),
                                            os.path.join(os.path.realpath(path), "entry"),
                                            roots)
            if inside is not None:
                reason = (f"the compiled-spec cache {what} {path} lies inside the packet "
                          f"root {inside}; the cache is not used for this run")
                cache.refuse(reason)
                return reason
    except Exception as problem:  # noqa: BLE001 - in doubt, no cache (never a changed verdict)
        reason = f"the compiled-spec cache is not used for this run ({problem})"
        cache.refuse(reason)
        return reason
    return None


def _validate_both(first: str | Path, second: str | Path, roles: tuple[str, str],
                   output: str | Path, spec_path, *, measuring: bool,
                   needs_metric: bool = True
                   ) -> tuple[Path, PacketResult, PacketResult, list[Violation]]:
    """Refuse a bad entry path or output first, then validate both packets (once if they
    are the same); no spec is opened before the cache has been refused if a packet root
    holds it. ``measuring``: the first packet's spec must declare a metric (``measure``
    exports it), and an invalid peer is ``pair.peer-invalid``."""
    first, second = entry_path(first), entry_path(second)
    target = receipts.check_output(output, first, second)
    receipts.refuse_inputs(output, target, [(spec_path, "the --spec file")] if spec_path
                           is not None and Path(spec_path).exists() else [])
    guard_cache(first, second)
    if same_packet(first, second):
        one = two = validate_packet(first, roles[0], spec_path,
                                    needs_metric=measuring and needs_metric)
    else:
        one, two = _validate_two(_chosen(first, roles[0], spec_path,
                                         needs_metric=measuring and needs_metric),
                                 _chosen(second, roles[1], spec_path))
    return target, one, two, _pair_violations(one, two, peer_check=measuring)


def _validate_two(one: PacketResult, two: PacketResult) -> tuple[PacketResult, PacketResult]:
    """Both packets validated: the second in a forked worker while this process validates
    the first, when two cores are there to use (``FLARESPEC_JOBS``, see parallel.py)."""
    if not (one.to_validate and two.to_validate and parallel.enabled()):
        return _evaluated(one), _evaluated(two)
    worker = parallel.start(_run_evaluation, two.spec, two.entry)
    first = _evaluated(one)
    report = parallel.result(worker, lambda bug: _failed_report(two.spec, bug))
    return first, PacketResult(two.role, two.entry, two.spec, report)


def _failed_report(spec: CompiledSpec, problem: BaseException) -> Outcome:
    report = Outcome(spec.id)
    report.add(internal_error(problem, "in the worker validating this packet"))
    return report


def _finish(target: Path, receipt_of, one: PacketResult, two: PacketResult,
            pair: list[Violation]) -> CommandResult:
    passed = one.ok and two.ok and not pair
    receipt = receipt_of(one, two, pair, passed)
    receipts.refuse_inputs(target, target, _inputs_read(one, two))
    receipts.write_atomically(target, receipt)
    return CommandResult(EXIT_PASS if passed else EXIT_REJECTED, receipt, target, [one, two])


def _inputs_read(*results: PacketResult) -> list[tuple[str, str]]:
    """Every file outside the packets that this run read: each spec's files and hooks
    (packet files are inside their roots, where check_output already refuses an output)."""
    found = [(str(result.entry), f"the {result.role} entry file") for result in results]
    for spec in {id(r.spec): r.spec for r in results if r.spec is not None}.values():
        found.extend(receipts.spec_inputs(spec))
    return found


def measure(packet: str | Path, peer: str | Path, output: str | Path, *,
            spec_path: str | Path | None = None, needs_metric: bool = True) -> CommandResult:
    """Validate both packets and their pair; export the packet's metric only if all pass.
    An invalid peer adds ``pair.peer-invalid``: the packet itself may be valid. A spec
    without a metric is ``metric.undeclared`` for the packet, found before it is validated
    (``needs_metric=False``: a pass without one, for ``spec test`` of such a spec)."""
    checked = _validate_both(packet, peer, ("packet", "peer"), output, spec_path,
                             measuring=True, needs_metric=needs_metric)
    return _finish(checked[0], receipts.measure_receipt, *checked[1:])


def validate_pair(baseline: str | Path, candidate: str | Path, output: str | Path, *,
                  spec_path: str | Path | None = None) -> CommandResult:
    """Validate both packets and their pair; record both metrics (when the spec declares
    one) under "pair" only if all pass. Both packets are subjects here: each one's violations are listed under its role,
    with no ``pair.peer-invalid``."""
    checked = _validate_both(baseline, candidate, ("baseline", "candidate"), output,
                             spec_path, measuring=False)
    return _finish(checked[0], receipts.pair_receipt, *checked[1:])
