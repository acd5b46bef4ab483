"""loaders/linear.py asks RE2 yes or no; the wrapper's ``fullmatch``/``search`` is the definition.

For generated patterns (anchors, classes, alternations, empty matches, non-ASCII) and texts
(``str``, non-ASCII included, and ``bytes``), the direct answer must be the wrapper's
``... is not None``; a lone surrogate must raise ``UnicodeEncodeError`` from both; and a
program without google-re2's ``_regexp`` must fall back to the wrapper's method.
"""

from __future__ import annotations

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from flarespec.engine.values import compiled_pattern, full_match
from flarespec.loaders.linear import _NULL_SPAN, full_matcher, searcher

PIECES = ["a", "b", "é", "日", "[0-9]", "[a-f]", "\\d", "\\w", "\\s", ".", "x*", "(?:ab)+",
          "(a|bc)", "[^a]", "^", "$", "", "\\.", "(é|e)?", "[\\x{100}-\\x{10FFFF}]"]
patterns = st.lists(st.sampled_from(PIECES), max_size=4).map("".join)
texts = st.text(alphabet="ab é日0129.-\n\u0100\U0001F600", max_size=12)


@settings(max_examples=400, deadline=None)
@given(patterns, texts)
def test_asked_as_the_wrapper_answers(pattern, text):
    program = compiled_pattern(pattern)
    assert full_matcher(program)(text) is (program.fullmatch(text) is not None)
    assert searcher(program)(text) is (program.search(text) is not None)
    data = text.encode()
    raw = re2.compile(pattern.encode())
    assert full_matcher(raw)(data) is (raw.fullmatch(data) is not None)
    assert searcher(raw)(data) is (raw.search(data) is not None)


def test_the_direct_path_is_taken_and_both_answers_occur():
    """Not vacuous: the asker is RE2's own Match (not the fallback), and says both."""
    program = compiled_pattern("[0-9a-f]{4}")
    assert callable(program._regexp.Match)
    assert program._regexp.Match(re2._Anchor.ANCHOR_BOTH, b"zz", 0, 2)[0] == _NULL_SPAN
    asked = full_matcher(program)
    assert asked.__name__ == "asked"
    assert asked("beef") is True and asked("beefs") is False and asked("日beef") is False
    assert searcher(program)("x beef x") is True and searcher(program)("bee") is False
    assert full_match("[0-9a-f]{4}") is full_match("[0-9a-f]{4}")  # compiled once


def test_a_lone_surrogate_raises_as_the_wrapper_does():
    program = compiled_pattern(".*")
    with pytest.raises(UnicodeEncodeError):
        program.fullmatch("\ud800")
    with pytest.raises(UnicodeEncodeError):
        full_matcher(program)("\ud800")


def test_a_program_without_its_own_match_falls_back_to_the_wrapper():
    class Wrapper:  # a release of google-re2 whose objects keep their program elsewhere
        def fullmatch(self, text):
            return "match" if text == "yes" else None

        def search(self, text):
            return None

    asked = full_matcher(Wrapper())
    assert asked.__name__ == "<lambda>"
    assert asked("yes") is True and asked("no") is False
    assert searcher(Wrapper())("yes") is False
