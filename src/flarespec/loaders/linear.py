"""RE2 programs asked yes or no: a whole match, or a match anywhere, without a match object.

google-re2's ``fullmatch`` and ``search`` build their match object through a generator and,
for a ``str``, map byte offsets back to character offsets: some 8 µs a call where the
program's own ``Match`` takes 1.3 µs. The spec's regexes (the ``regex`` kind, a shape's
``pattern``) and the JSON overflow guard only ask whether there is a match, so they ask the
program directly: ``Match(anchor, data, 0, len(data))`` over the text's UTF-8 bytes (what
the wrapper encodes too, so a lone surrogate still raises ``UnicodeEncodeError``), no match
being the null span. The program is the wrapper's own (its ``_regexp``); where a release of
google-re2 has none, the wrapper's method answers instead. tests/loaders/test_linear.py
holds both answers to the wrapper's on generated patterns and texts.
"""

from __future__ import annotations

from typing import Callable

import re2

_NULL_SPAN = (-1, -1)  # the span RE2's Match gives for "no match"


def full_matcher(program) -> Callable[[str | bytes], bool]:
    """True when ``program`` (``re2.compile``'s) matches the whole text, as its ``fullmatch``."""
    return _asker(program, "ANCHOR_BOTH", program.fullmatch)


def searcher(program) -> Callable[[str | bytes], bool]:
    """True when ``program`` matches somewhere in the text, as its ``search``."""
    return _asker(program, "UNANCHORED", program.search)


def _asker(program, anchor_name: str, wrapped: Callable) -> Callable[[str | bytes], bool]:
    own = getattr(program, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), anchor_name, None)
    if anchor is None or not callable(getattr(own, "Match", None)):
        return lambda text: wrapped(text) is not None
    match = own.Match

    def asked(text: str | bytes) -> bool:
        data = text if type(text) is bytes else text.encode("utf-8")
        return match(anchor, data, 0, len(data))[0] != _NULL_SPAN
    return asked
