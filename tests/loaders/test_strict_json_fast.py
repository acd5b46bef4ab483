"""The compiled parser's path (jiter) against the stdlib path alone, on every text.

``load_json`` offers a text to jiter first and takes its value only where jiter accepts it
and no number in it could overflow (``might_overflow``); everything else goes the stdlib
way, which decides and words it. So for every input the outcome must be the stdlib path's
alone: the same value (types, float bits and key order included, compared by ``repr``) or
the same LoadError (code, message, line, location).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flarespec.loaders import LoadError, load_json, parse_sse
from flarespec.loaders import strict_json


def _outcome(load, data: bytes):
    try:
        return "value", repr(load(data))
    except LoadError as error:
        return "error", (error.code, error.message, error.line, error.location)


def _stdlib_only(monkeypatch, data: bytes):
    with monkeypatch.context() as patch:
        patch.setattr(strict_json, "fast_value", lambda data: strict_json._UNDECIDED)
        return _outcome(load_json, data)


def _assert_same(monkeypatch, data: bytes):
    assert _outcome(load_json, data) == _stdlib_only(monkeypatch, data), data[:80]


EDGES = [
    b'{"a": 1, "a": 2}', b'{"a": 1, "\\u0061": 2}', b'{"": 1, "": 2}', b'[{"x": {"k": 1, "k": 1}}]',
    b"NaN", b"[Infinity]", b'{"v": -Infinity}', b"1e400", b"-1e400", b"[1E+0400]", b"1.7976931348623157e308",
    b"1.7976931348623159e308", b"1e-400", b"-0", b"-0.0", b"0e0", b"1e2", b"9007199254740993",
    b"9007199254740993.0", b"0.1000000000000000055511151231257827", b"2.2250738585072011e-308",
    b"1" * 4300, b"1" * 4301, b"-" + b"9" * 5000, b"1" * 320 + b".5", b"[" + b"1" * 250 + b"e-300]",
    b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud834\\udd1e"', b'"\\u0000"', b'"\x01"', b'"\xed\xa0\x80"',
    b"\xff", b"\xef\xbb\xbf{}", b"", b" ", b"01", b"1.", b".5", b"[1,]", b'{"a":1,}', b"1 2", b"\x0c1",
    b"[" * 150 + b"]" * 150, b"[" * 250 + b"]" * 250, b"[" * 5000 + b"]" * 5000,
    b'{"sha": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "n": 1e5}',
    b' \t\n\r{"a" : [ 1 , 2 ] }\r\n', b'"\\/\\b\\f\\n\\r\\t\\"\\\\"', "\"héllo \U0001f600\"".encode(),
    # invalid UTF-8 inside a string (overlong, surrogate, beyond U+10FFFF, stray, truncated)
    b'"\xc0\xaf"', b'"\xe0\x80\xaf"', b'"\xf4\x90\x80\x80"', b'"\x80"', b'"\xf0\x9f\x98"',
    # what JSON is not: signs, hex, NBSP, comments, single quotes, bad escapes, NUL bytes
    b"+1", b"0x10", b"\xc2\xa01", b"/* c */ 1", b"'a'", b'"\\x41"', b'"\\U0041"', b"tru", b"[1 2]",
    b'{"a" 1}', b"{1: 2}", b"[-]", b"\x00", b'"a\x00b"', b"1\x00", b'"\x7f"', b"-0e1",
    b'{"\\u00e9": 1, "\xc3\xa9": 2}',  # the same key, escaped and raw
]


@pytest.mark.parametrize("data", EDGES, ids=range(len(EDGES)))
def test_each_edge_has_the_stdlib_outcome(monkeypatch, data):
    _assert_same(monkeypatch, data)


def test_the_edges_take_both_paths(monkeypatch):
    """Not vacuous: some edges are decided by jiter, some by the stdlib path after it
    refused, some skip it (might_overflow)."""
    taken = {"jiter": 0, "refused": 0, "skipped": 0}
    for data in EDGES:
        if strict_json.might_overflow(data):
            taken["skipped"] += 1
        elif strict_json.fast_value(data) is strict_json._UNDECIDED:
            taken["refused"] += 1
        else:
            taken["jiter"] += 1
    assert min(taken.values()) >= 5, taken


def test_a_lone_surrogate_jiter_refuses_is_the_stdlib_value():
    assert strict_json.fast_value(b'"\\ud800"') is strict_json._UNDECIDED
    assert load_json(b'["\\ud800"]') == ["\ud800"]


@pytest.mark.parametrize("data", [b"1e400", b"[-2.5E+999]", b'{"a": 1e0100}', b"7" * 200])
def test_a_number_that_might_overflow_skips_jiter(data):
    assert strict_json.might_overflow(data)
    assert strict_json.might_overflow(data.decode())


@pytest.mark.parametrize("data", [b'"1e400"', b'"e3b0c44298fc1e464"', b"1e99", b"1e-400", b"7" * 199])
def test_a_text_without_such_a_number_is_offered_to_jiter(data):
    assert not strict_json.might_overflow(data)


# ----------------------------------------------------------------------------- generated

_scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10 ** 60), max_value=10 ** 60)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=25)
_number_texts = st.from_regex(r"\A-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,4})?\Z")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_values, ascii_only=st.booleans(), compact=st.booleans())
def test_generated_documents_have_the_stdlib_outcome(monkeypatch, value, ascii_only, compact):
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":") if compact else None)
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate kept raw: no UTF-8 file holds it
        return
    _assert_same(monkeypatch, data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(number=_number_texts, wrap=st.sampled_from(["{}", "[{}]", '{{"n": {}}}', " {} "]))
def test_generated_numbers_have_the_stdlib_outcome(monkeypatch, number, wrap):
    _assert_same(monkeypatch, wrap.format(number).encode())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(st.sampled_from(["a", "b", "\\u0061", "\\u0062", "a\\u0000"]), min_size=1, max_size=5))
def test_generated_key_lists_have_the_stdlib_outcome(monkeypatch, keys):
    """Repeated keys, also spelled by escapes: refused the same way, or equal values."""
    data = ("{" + ", ".join(f'"{key}": {n}' for n, key in enumerate(keys)) + "}").encode()
    _assert_same(monkeypatch, data)


SSE_BODIES = [
    b'data: {"a": 1, "t": "\\ud800"}\n\ndata: {"b": [1.5, -0.0, 12345678901234567890]}\n\ndata: [DONE]\n\n',
    b'data: {"a": 1}\n\ndata: {"a": 1, "a": 2}\n\ndata: [DONE]\n\n',
    b'data: {"c": 1e400}\n\ndata: [DONE]\n\n',
    b'data: {"c": 1e300}\n\ndata: NaN\n\n',
    b'data: {"c": [1, 2}\n\n',
]


@pytest.mark.parametrize("body", SSE_BODIES, ids=range(len(SSE_BODIES)))
def test_sse_payloads_have_the_stdlib_outcome(monkeypatch, body):
    def parse(data):
        return parse_sse(data, data_json=True, terminator="[DONE]")
    fast = _outcome(parse, body)
    with monkeypatch.context() as patch:
        patch.setattr("flarespec.loaders.sse.fast_value", lambda data: strict_json._UNDECIDED)
        assert _outcome(parse, body) == fast


def test_sse_refuses_an_overflowing_payload_on_the_fast_path_too():
    with pytest.raises(LoadError) as refused:
        parse_sse(b'data: {"c": 1e400}\n\n', data_json=True)
    assert refused.value.code == "number-out-of-range"
    assert not math.isinf(parse_sse(b'data: {"c": 1e300}\n\n', data_json=True)["events"][0]["json"]["c"])
