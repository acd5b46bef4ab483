"""Property-based tests: `measure` over randomly mutated packets (issue 6).

A valid pair (baseline, candidate) is written once per module by the project's writer and
copied per example; one packet of the measured pair is then mutated (packets/mutation
kinds in packet_mutants.py). Three roles: the baseline measured as its own peer, the
measured baseline, or its peer.

(a) Without refreshed digests every edit of an asset is digest drift and every kept edit of
    packet.json changes what it says: always rejected, by `packet.files.digest` naming the
    file when an asset was edited, with no metric anywhere in the receipt.
(b) With digests refreshed (1-3 stacked edits): exit 0 or 2, never an exception, never
    `engine.internal-error`; a pass exports exactly the contract's metric recomputed here
    from the measured packet's own sidecar events; a rejection carries no metric.
(d) Client arrival times of 1-3 requests moved consistently (sidecar and measurements copy,
    digests refreshed): a valid packet with another metric, exported exactly as recomputed
    here; an arrival moved to 0 or below is rejected by the arrival rule alone.
(c) A required idle sample whose value holds a non-ASCII digit is rejected by a snapshot
    rule (issue 6 defect 5: the exposition grammar is ASCII).
(b) also measures every example a second time with the pass plans off (the reporting path
alone): the receipts must be equal.
Always: the packet trees are byte-identical afterwards and the written receipt is the
returned one. Example counts: the hypothesis profile (tests/conftest.py, docs/testing.md).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st
from packet_mutants import (
    ARRIVAL_SHIFTS,
    ENTRY,
    EditSample,
    Inventory,
    ShiftArrivals,
    Skipped,
    delivery_ttft_median,
    describe,
    forbidden_numbers,
    inventory,
    leaks,
    mutation,
    tree_digest,
)

from flarespec.adapter import commands
from flarespec.adapter.commands import measure
from flarespec.adapter.select import bundled_specs, selectable_specs
from flarespec.engine.evaluate import Evaluation
from flarespec.fixtures.mutations import MutationError, refresh_digests
from flarespec.fixtures.writers import write_pair

PEER_INVALID = "pair.peer-invalid"
INTERNAL_ERROR = "engine.internal-error"
DIGEST_RULE = "packet.files.digest"
ROLES = ("self", "packet", "peer")  # which packet is mutated, and how the pair is formed
MAX_STACKED_EDITS = 3  # (b) applies 1-3 edits to the same packet before measuring
# Digits of Unicode category Nd outside ASCII (fullwidth, Arabic-Indic, Devanagari...).
FOREIGN_DIGITS = st.sampled_from([chr(c) for c in range(128, sys.maxunicode + 1)
                                  if unicodedata.category(chr(c)) == "Nd"])
ASCII_DIGITS = st.sampled_from("0123456789")


@pytest.fixture(scope="module", autouse=True)
def parsed_specs_once():
    """`measure` re-parses the bundled spec YAML per call (a third of its time); the spec
    files do not change during this module, so hand it the list parsed once."""
    specs = selectable_specs()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(commands, "selectable_specs", lambda: specs)
        yield


@dataclass(frozen=True)
class Template:
    directory: Path  # holds baseline/ and candidate/
    inventories: dict[str, Inventory]
    scratch: Path
    idle_metrics: frozenset[str]  # names of the required idle samples (spec constants)

    def __repr__(self) -> str:  # hypothesis prints it with every failing example
        return f"Template({self.directory})"

    @contextmanager
    def copy(self):
        """A private copy of the pair (baseline, candidate packet.json), removed afterwards
        so that a thorough run does not fill the disk."""
        work = Path(tempfile.mkdtemp(dir=self.scratch))
        try:
            shutil.copytree(self.directory, work / "pair", symlinks=True)
            yield work / "pair" / "baseline" / ENTRY, work / "pair" / "candidate" / ENTRY, work
        finally:
            shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def template(tmp_path_factory, flare_spec, flare_constants) -> Template:
    directory = tmp_path_factory.mktemp("property-template")
    baseline, candidate = write_pair(directory, flare_spec)
    return Template(directory, {"baseline": inventory(baseline.parent),
                                "candidate": inventory(candidate.parent)},
                    tmp_path_factory.mktemp("property-examples"),
                    frozenset(metric["name"] for metric in flare_constants["idle_metrics"]))


def _mutated_name(role: str) -> str:
    return "candidate" if role == "peer" else "baseline"


def _reported_role(role: str) -> str:
    """The `packet` field the receipt gives the mutated packet's violations."""
    return "peer" if role == "peer" else "packet"


def _assert_untouched_packet_is_clean(receipt: dict, role: str, report: str) -> None:
    """An edit of one packet of a pair never shows up as a violation of the other one."""
    other = {"packet": "peer", "peer": "packet"}.get(role)
    blamed = [v["rule"] for v in receipt["violations"] if v["packet"] == other]
    assert not blamed, f"the unedited {other} packet is blamed: {blamed}\n{report}"


def _measure_checked(baseline: Path, candidate: Path, role: str, work: Path):
    """Measure like the runner would and check what holds for every outcome: no exception
    (it would fail the test), packets untouched, the written receipt is the returned one,
    no internal error. Returns (outcome, error rule ids, readable summary)."""
    peer = baseline if role == "self" else candidate
    before = tree_digest(baseline.parent.parent)
    output = work / "out" / "receipt.json"
    outcome = measure(baseline, peer, output)
    receipt = outcome.receipt
    report = describe(receipt)
    assert tree_digest(baseline.parent.parent) == before, "measure changed packet bytes"
    assert json.loads(output.read_bytes()) == receipt, "the written receipt is not the returned one"
    errors = {v["rule"] for v in receipt["violations"] if v["severity"] == "error"}
    assert INTERNAL_ERROR not in errors, f"internal error\n{report}"
    return outcome, errors, report


def _assert_rejected_without_metric(outcome, errors: set, report: str, *entries: Path) -> None:
    receipt = outcome.receipt
    assert outcome.exit_code == 2, f"expected a rejection\n{report}"
    assert receipt["status"] == "rejected" and "metrics" not in receipt, report
    assert errors - {PEER_INVALID}, f"a rejection must name its cause\n{report}"
    leaked = leaks(receipt, forbidden_numbers(*entries))
    assert not leaked, f"metric or TTFT sample in a rejection: {leaked}\n{report}"


# ------------------------------------------------------------------ (a) digests stale


@given(data=st.data())
def test_an_edit_without_refreshed_digests_is_always_rejected(template, data):
    role = data.draw(st.sampled_from(ROLES), label="role")
    edit = data.draw(mutation(template.inventories[_mutated_name(role)], strict=True), label="edit")
    with template.copy() as (baseline, candidate, work):
        mutated = candidate if role == "peer" else baseline
        try:
            edit.apply(mutated.parent)
        except Skipped:
            assume(False)  # e.g. a sample set to the value it has: no edit at all
        event(f"edit: {type(edit).__name__}")
        outcome, errors, report = _measure_checked(baseline, candidate, role, work)
        _assert_rejected_without_metric(outcome, errors, report, baseline, candidate)
        assert (PEER_INVALID in errors) == (role == "peer"), (
            f"{PEER_INVALID} must be reported exactly when the peer is invalid\n{report}")
        _assert_untouched_packet_is_clean(outcome.receipt, role, report)
        mine = [v for v in outcome.receipt["violations"] if v["packet"] == _reported_role(role)]
        assert mine, f"no violation of the mutated {role} packet\n{report}"
        if edit.file != ENTRY:  # an asset edited: digest drift, naming that asset
            drift = [v for v in mine if v["rule"] == DIGEST_RULE
                     and edit.file in f"{v.get('location')} {v.get('message')}"]
            assert drift, f"{DIGEST_RULE} does not name {edit.file}\n{report}"


# ------------------------------------------------------------------ (b) digests refreshed


def _apply_stack(root: Path, edits: list) -> int:
    """Apply the edits in order (a later one may no longer fit: skipped); then re-hash the
    files map if packet.json can still be read as one. Returns how many applied."""
    applied = 0
    for edit in edits:
        try:
            edit.apply(root)
            applied += 1
        except Skipped:
            continue
    try:
        refresh_digests(root)
    except MutationError:  # packet.json itself broken: nothing to refresh
        pass
    return applied


@given(data=st.data())
def test_an_edit_with_refreshed_digests_passes_correctly_or_is_rejected(template, data):
    role = data.draw(st.sampled_from(ROLES), label="role")
    inv = template.inventories[_mutated_name(role)]
    edits = data.draw(st.lists(mutation(inv, strict=False), min_size=1, max_size=MAX_STACKED_EDITS),
                      label="edits")
    with template.copy() as (baseline, candidate, work):
        mutated = candidate if role == "peer" else baseline
        assume(_apply_stack(mutated.parent, edits))
        outcome, errors, report = _measure_checked(baseline, candidate, role, work)
        event(f"exit {outcome.exit_code}")  # --hypothesis-show-statistics: how many passed
        _assert_reporting_path_agrees(outcome, baseline, candidate, role, work)
        if outcome.exit_code == 0:
            receipt = outcome.receipt
            assert receipt["status"] == "pass" and receipt["violations"] == [], report
            assert receipt["metrics"] == {"delivery_ttft_ns": delivery_ttft_median(baseline)}, (
                f"the exported metric is not the one recomputed from the sidecar events\n{report}")
        else:
            _assert_rejected_without_metric(outcome, errors, report, baseline, candidate)
            _assert_untouched_packet_is_clean(outcome.receipt, role, report)


def _assert_reporting_path_agrees(outcome, baseline: Path, candidate: Path, role: str,
                                  work: Path) -> None:
    """The pass tests (engine/passes.py) only ever say "passes": with them off, the
    reporting path alone writes the same receipt for the same mutated packets."""
    peer = baseline if role == "self" else candidate
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(commands, "Evaluation", partial(Evaluation, pass_checks=False))
        reporting_only = measure(baseline, peer, work / "out" / "reporting-only.json")
    assert reporting_only.receipt == outcome.receipt, (
        f"pass tests changed the receipt\n{describe(outcome.receipt)}\n"
        f"reporting path alone:\n{describe(reporting_only.receipt)}")
    with pytest.MonkeyPatch.context() as patch:  # nor does the schedule (engine/schedule.py)
        patch.setattr(commands, "Evaluation", partial(Evaluation, streaming=False))
        one_by_one = measure(baseline, peer, work / "out" / "one-by-one.json")
    assert one_by_one.receipt == outcome.receipt, (
        f"streaming changed the receipt\n{describe(outcome.receipt)}\n"
        f"rules one by one:\n{describe(one_by_one.receipt)}")


# ------------------------------------------------------------------ (c) sample grammar


def _required_sample_lines(inv: Inventory, names: frozenset[str]) -> list[tuple[str, int]]:
    """(snapshot file, line) of every unlabelled sample of a required idle metric."""
    found = []
    for facts in inv.of_kind(".prom"):
        lines = (inv.root / facts.path).read_text(encoding="utf-8").split("\n")
        found += [(facts.path, n) for n in facts.sample_lines if lines[n].split(" ")[0] in names]
    return found


@st.composite
def foreign_numeral(draw) -> str:
    """A number in the exposition layout with at least one non-ASCII digit in it."""
    digits = draw(st.lists(st.one_of(FOREIGN_DIGITS, ASCII_DIGITS), max_size=5))
    digits.insert(draw(st.integers(0, len(digits))), draw(FOREIGN_DIGITS))
    sign = draw(st.sampled_from(["", "-", "+"]))
    tail = draw(st.sampled_from(["", ".0", "e0", ".5e1"]))
    return sign + "".join(digits) + tail


@given(data=st.data())
def test_a_required_sample_with_a_non_ascii_digit_is_rejected(template, data):
    inv = template.inventories["baseline"]
    samples = _required_sample_lines(inv, template.idle_metrics)
    file, line = data.draw(st.sampled_from(samples), label="sample")
    value = data.draw(foreign_numeral(), label="value")
    with template.copy() as (baseline, candidate, work):
        EditSample(file, line, value).apply(baseline.parent)
        refresh_digests(baseline.parent)
        outcome, errors, report = _measure_checked(baseline, candidate, "self", work)
        _assert_rejected_without_metric(outcome, errors, report, baseline)
        assert all(rule.startswith("snapshot.") for rule in errors - {PEER_INVALID}), (
            f"{value!r} in {file} line {line + 1} must be rejected as a snapshot value\n{report}")


# ------------------------------------------------------------------ (d) valid variations

ARRIVAL_RULE = "observation.events.arrival-positive"


@given(data=st.data())
def test_moved_arrival_times_export_the_recomputed_metric(template, data):
    inv = template.inventories["baseline"]
    sidecars = st.sampled_from(inv.of_kind("/observation.json")).map(lambda facts: facts.path)
    shifts = data.draw(st.lists(st.builds(ShiftArrivals, sidecars, ARRIVAL_SHIFTS),
                                min_size=1, max_size=MAX_STACKED_EDITS,
                                unique_by=lambda shift: shift.file), label="shifts")
    with template.copy() as (baseline, candidate, work):
        for shift in shifts:
            shift.apply(baseline.parent)
        refresh_digests(baseline.parent)
        outcome, errors, report = _measure_checked(baseline, candidate, "self", work)
        arrivals_positive = _all_arrivals_positive(baseline.parent, shifts)
        event(f"exit {outcome.exit_code}")
        if arrivals_positive:
            assert outcome.exit_code == 0, report
            assert outcome.receipt["metrics"] == {"delivery_ttft_ns": delivery_ttft_median(baseline)}, report
        else:
            _assert_rejected_without_metric(outcome, errors, report, baseline)
            assert errors == {ARRIVAL_RULE}, report


def _all_arrivals_positive(root: Path, shifts: list) -> bool:
    for shift in shifts:
        events = json.loads((root / shift.file).read_bytes())["events"]
        if any(item["arrival_ns"] <= 0 for item in events):
            return False
    return True
