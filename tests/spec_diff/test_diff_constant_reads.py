"""A constant read at run time is put into the assertion as the run reads it
(review/constants.py): a reference's ``default`` stands in when the constant is absent, and
a ``{literal: …}`` is never read."""

from __future__ import annotations

import pytest

from flarespec.review.diff import diff_specs


def _spec(constants: dict, minimum) -> dict:
    return {"id": "toy/floor", "constants": constants,
            "rules": [{"id": "toy.floor", "given": "doc:$.n",
                       "assert": {"range": {"min": minimum}}}]}


FLOOR = {"ref": "constants:$.floor", "default": 1}


@pytest.mark.parametrize("floor, cls", [(2, "tightening"), (0, "loosening"), (1, "neutral")])
def test_a_constant_added_where_a_default_stood_is_classed_against_the_default(floor, cls):
    result = diff_specs(_spec({}, FLOOR), _spec({"floor": floor}, FLOOR))
    constant, = (change for change in result.changes if change.subject == "constant floor")
    assert (constant.cls, constant.rules) == (cls, ["rule toy.floor"])


def test_a_constant_removed_leaves_the_default():
    result = diff_specs(_spec({"floor": 3}, FLOOR), _spec({}, FLOOR))
    constant, = (change for change in result.changes if change.subject == "constant floor")
    assert constant.cls == "loosening"  # min 3 -> the default 1


def test_a_reference_without_a_default_that_selects_nothing_is_review():
    plain = {"ref": "constants:$.floor"}
    result = diff_specs(_spec({}, plain), _spec({"floor": 2}, plain))
    constant, = (change for change in result.changes if change.subject == "constant floor")
    assert constant.cls == "review"


def test_a_literal_is_not_read():
    """``{literal: {ref: …}}`` is the mapping itself (compiler/compile.py): the constant
    changes what no assertion reads."""
    written = {"literal": {"ref": "constants:$.floor"}}
    result = diff_specs(_spec({"floor": 1}, written), _spec({"floor": 2}, written))
    constant, = (change for change in result.changes if change.subject == "constant floor")
    assert constant.cls == "neutral"
