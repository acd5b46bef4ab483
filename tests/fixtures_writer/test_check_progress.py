"""``check_cases(..., on_case=...)``: the progress hook of ``spec test``. Every case's result
is told once, as it is made (before the next case runs), in the cases' order, a skipped
(not applicable) case's included; without the hook the results are the same."""

from __future__ import annotations

import flarespec.fixtures.check as check
from flarespec.fixtures.catalog import Case

CASES = [Case("first", "a pass", expect={"accept": True}),
         Case("skipped", "not for this spec", expect={"rejected_by": ["x.dropped"]}),
         Case("third", "a rejection", expect={"rejected_by": ["x.rule"]})]


def skip(case: Case) -> str | None:
    return "rule x.dropped is dropped" if case.name == "skipped" else None


def test_each_result_is_told_as_it_is_made_skipped_ones_included(monkeypatch):
    events: list[str] = []

    def fake_check_case(case, directory, spec, spec_path=None, templates=None, *, oracle=None):
        events.append(f"run {case.name}")
        return check.CaseResult(case.name, check.PASSED, check.expected_text(case), "pass")

    monkeypatch.setattr(check, "check_case", fake_check_case)
    results = check.check_cases(CASES, spec=None, skip=skip,
                                on_case=lambda result: events.append(f"told {result.name}"))
    assert events == ["run first", "told first", "told skipped", "run third", "told third"]
    assert [r.status for r in results] == [check.PASSED, check.NOT_APPLICABLE, check.PASSED]


def test_a_crashing_case_is_told_too_and_the_hook_changes_no_result():
    """A case that cannot be built (no spec here) is a failed result, told like any other."""
    told: list[check.CaseResult] = []
    hooked = check.check_cases(CASES, spec=None, skip=skip, on_case=told.append)
    plain = check.check_cases(CASES, spec=None, skip=skip)
    assert told == hooked and [r.name for r in told] == ["first", "skipped", "third"]
    assert [r.status for r in told] == [check.FAILED, check.NOT_APPLICABLE, check.FAILED]
    assert [(r.name, r.status, r.got) for r in plain] == [(r.name, r.status, r.got) for r in hooked]
