"""The runner-facing commands as library functions: ``measure`` and ``validate_pair``.

Both validate two packets in full, match them on the spec's pair identities, and write a
receipt atomically outside both packet roots. A metric appears in a receipt only when every
check of both packets and of the pair passed; anything else is a rejection without a metric.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flarespec.adapter import receipt as receipts
from flarespec.adapter.select import SPEC_INVALID, bundled_specs, compile_file, select_spec
from flarespec.engine.evaluate import INTERNAL_ERROR, Evaluation
from flarespec.engine.kinds import strict_equal
from flarespec.engine.report import Report, Violation
from flarespec.spec.compile import CompiledSpec
from flarespec.spec.errors import SpecInvalid

EXIT_PASS = 0
EXIT_REJECTED = 2
PEER_INVALID = "pair.peer-invalid"
SAME_SPEC = "pair.same-spec"


class OutputRefused(Exception):
    """The receipt path lies inside a packet root: nothing is written anywhere."""


@dataclass
class PacketResult:
    role: str
    entry: Path
    spec: CompiledSpec | None
    report: Report
    selection_violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.spec is not None and self.report.ok and not self.selection_violations

    @property
    def violations(self) -> list[Violation]:
        return self.selection_violations + self.report.violations


@dataclass
class Outcome:
    exit_code: int
    receipt: dict
    output: Path
    results: list[PacketResult]


def validate_packet(entry: str | Path, role: str, spec_path: str | Path | None = None
                    ) -> PacketResult:
    """Select the spec (or compile ``spec_path``) and validate one packet in full."""
    entry = Path(entry)
    try:
        if spec_path is not None:
            spec, selection = compile_file(spec_path), []
        else:
            chosen = select_spec(entry, bundled_specs())
            spec, selection = chosen.spec, chosen.violations
    except SpecInvalid as problem:
        violations = [Violation(SPEC_INVALID, "error", str(issue),
                                issue.mark.file if issue.mark else None,
                                f"line {issue.mark.line}, column {issue.mark.column}"
                                if issue.mark else None) for issue in problem.issues]
        return PacketResult(role, entry, None, Report("none"), violations)
    if spec is None:
        return PacketResult(role, entry, None, Report("none"), selection)
    try:
        report = Evaluation(spec, entry).run()
    except Exception as bug:  # never a traceback, never a metric
        report = Report(spec.id)
        report.add(Violation(INTERNAL_ERROR, "error",
                             f"internal error: {type(bug).__name__}: {bug}", None, None))
    return PacketResult(role, entry, spec, report)


def compare_pair(first: PacketResult, second: PacketResult) -> list[Violation]:
    """Pair violations: an invalid peer, different specs, or a differing pair identity."""
    found = []
    for result in (first,) if second is first else (first, second):
        if not result.ok:
            count = len(result.violations)
            found.append(Violation(PEER_INVALID, "error",
                                   f"the {result.role} {result.entry} is invalid "
                                   f"({count} violation{'s' * (count != 1)}); no metric is "
                                   f"exported for an incomplete pair", str(result.entry)))
    if first.spec is None or second.spec is None:
        return found
    if first.spec.id != second.spec.id:
        found.append(Violation(SAME_SPEC, "error",
                               f"the packets follow different specs: {first.spec.id} and "
                               f"{second.spec.id}", None, None, first.spec.id, second.spec.id))
        return found
    if second is first:
        return found  # a packet is always comparable with itself
    for rule in first.spec.pair:
        mine = first.report.identities.get(rule["identity"])
        theirs = second.report.identities.get(rule["identity"])
        if mine is None or theirs is None:
            continue  # unreadable: that packet's own violations (and peer-invalid) say why
        if not strict_equal(mine, theirs):
            found.append(Violation(rule["id"], "error",
                                   f"{rule['description']} ({rule['identity']} differs between "
                                   f"{first.role} and {second.role})",
                                   None, rule["identity"], mine, theirs))
    return found


def check_output(output: str | Path, *entries: Path) -> Path:
    """The resolved output path, refused when it lies inside any packet root."""
    target = Path(output).expanduser().resolve()
    for entry in entries:
        root = Path(entry).expanduser().resolve().parent
        if target == root or root in target.parents:
            raise OutputRefused(f"output {output} lies inside the packet root {root}; "
                                f"receipts are written outside packets")
    return target


def _validate_both(first: str | Path, second: str | Path, roles: tuple[str, str],
                   output: str | Path, spec_path) -> tuple[Path, PacketResult, PacketResult,
                                                          list[Violation]]:
    """Refuse a bad output first, then validate both packets (once if they are the same)."""
    target = check_output(output, Path(first), Path(second))
    one = validate_packet(first, roles[0], spec_path)
    two = one if Path(second).resolve() == Path(first).resolve() else \
        validate_packet(second, roles[1], spec_path)
    return target, one, two, compare_pair(one, two)


def _finish(target: Path, receipt_of, one: PacketResult, two: PacketResult,
            pair: list[Violation]) -> Outcome:
    passed = one.ok and two.ok and not pair
    receipt = receipt_of(one, two, pair, passed)
    receipts.write_atomically(target, receipt)
    return Outcome(EXIT_PASS if passed else EXIT_REJECTED, receipt, target, [one, two])


def measure(packet: str | Path, peer: str | Path, output: str | Path, *,
            spec_path: str | Path | None = None) -> Outcome:
    """Validate both packets and their pair; export the packet's metric only if all pass."""
    checked = _validate_both(packet, peer, ("packet", "peer"), output, spec_path)
    return _finish(checked[0], receipts.measure_receipt, *checked[1:])


def validate_pair(baseline: str | Path, candidate: str | Path, output: str | Path, *,
                  spec_path: str | Path | None = None) -> Outcome:
    """Validate both packets and their pair; record both metrics under "pair" only if all pass."""
    checked = _validate_both(baseline, candidate, ("baseline", "candidate"), output, spec_path)
    return _finish(checked[0], receipts.pair_receipt, *checked[1:])

