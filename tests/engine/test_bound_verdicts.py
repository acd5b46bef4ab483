"""``Kind.verdict``: a kind's verdict bound to one argument (what pass plans and ``count``'s
``where`` call) is the same derivation as ``holds_for``/``holds_alone``; the scalar verdicts
it remembers never mix values that are equal but of another type (1, 1.0, True)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_kind_verdicts import ARGUMENTS, EXACT, NUMERIC_KINDS, VALUES

from flarespec.engine.kinds import KINDS, ArgumentMistyped


def _outcome(decide, *args):
    try:
        return decide(*args)
    except Exception as problem:
        return type(problem)


@pytest.mark.parametrize("name", sorted(set(ARGUMENTS)))
@settings(max_examples=100)
@given(data=st.data())
def test_a_bound_verdict_is_holds_for_and_holds_alone(name, data):
    kind = KINDS[name]
    values = st.one_of(VALUES, EXACT) if name in NUMERIC_KINDS else VALUES
    selection = data.draw(st.lists(values, max_size=4))
    arg = ARGUMENTS[name](data, selection if kind.collective else
                          (selection[0] if selection else None))
    if kind.argument_problem(arg) is not None:  # outside the kind's argument schema:
        with pytest.raises(ArgumentMistyped):  # refused once read, never decided
            kind.holds_for(None, selection, arg)
        return
    bound, alone = kind.verdict(arg), kind.verdict(arg, alone=True)
    for _ in range(2):  # the second time from what was remembered
        assert _outcome(bound, selection) == _outcome(kind.holds_for, None, selection, arg)
        for value in selection:
            assert _outcome(alone, value) == _outcome(kind.holds_alone, None, value, arg)


def test_remembered_scalars_keep_their_types_apart():
    equals_one = KINDS["equals"].verdict(1, alone=True)
    assert [equals_one(v) for v in (1, True, 1.0, 1, "1", True)] == \
        [True, False, False, True, False, False]
    not_null = KINDS["not"].verdict({"equals": None}, alone=True)
    assert [not_null(v) for v in (None, 0, False, "", None)] == [False, True, True, True, False]
    positive = KINDS["range"].verdict({"exclusive_min": 0}, alone=True)
    assert [positive(v) for v in (0.5, 0, 0.0, -0.0, 1, True)] == \
        [True, False, False, False, True, False]


def test_count_where_over_a_kind_that_needs_the_context_still_asks_it():
    class Context:
        def document_paths(self, names, complete=False):
            return {"a.json"}

    arg = {"equals": 1, "where": {"not": {"manifest_lists_all": ["doc"]}}}
    values = [{"a.json": "x"}, {"b.json": "y"}]
    assert KINDS["count"].holds(Context(), values, arg) is True
