"""``impact(..., on_input=...)``: the progress hook of ``spec impact``. Each input's impact is
told once, as it arrives, in the order of the inputs (the result's order), with one worker
or a process pool."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_spec_impact import corpus  # noqa: F401 (a fixture)

from flarespec.review.impact import InputImpact, Verdict, _arrived, entries, impact


@pytest.mark.parametrize("workers", [1, 2])
def test_each_input_is_told_once_in_the_order_of_the_inputs(corpus, workers):  # noqa: F811
    old, new, inputs = corpus
    given = entries([str(inputs)], "index.json")
    told: list[InputImpact] = []
    result = impact(str(old), str(new), given, workers=workers, on_input=told.append)
    assert [r.input for r in result.inputs] == [str(path) for path in given]
    assert told == result.inputs and all(a is b for a, b in zip(told, result.inputs))


def test_without_the_hook_the_result_is_the_same(corpus):  # noqa: F811
    old, new, inputs = corpus
    given = entries([str(inputs)], "index.json")
    told: list[InputImpact] = []
    hooked = impact(str(old), str(new), given, workers=1, on_input=told.append)
    plain = impact(str(old), str(new), given, workers=1)
    assert [r.as_dict() for r in plain.inputs] == [r.as_dict() for r in hooked.inputs]
    assert plain.findings == hooked.findings


def test_an_input_is_told_as_it_arrives_not_after_the_last():
    """The hook runs between two verdict pairs: progress moves while the work goes on."""
    events: list[str] = []

    def verdicts():
        for number in range(3):
            events.append(f"verdicts {number}")
            yield Verdict(True, None, {}), Verdict(number != 1, None, {})

    inputs = [Path(f"in{number}") for number in range(3)]
    results = _arrived(inputs, verdicts(), {},
                       lambda result: events.append(f"told {result.input}"))
    assert events == ["verdicts 0", "told in0", "verdicts 1", "told in1", "verdicts 2",
                      "told in2"]
    assert [r.flip for r in results] == [None, "pass→fail", None]
