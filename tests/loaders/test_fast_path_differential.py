"""Each loader's fast path against its general path, on generated, real and written inputs.

The SSE common stream (``sse._common_stream``), the overflow guard outside strings
(``strict_json.might_overflow_json``) and Prometheus' one-match lines
(``prometheus._common_labelled`` and the simple comment and sample matches) are each
switched off by their module's ``FAST_PATH``; the general path is then the definition. For
every input the outcome must be the general path's: the same value (types, float bits,
key order: compared by ``repr``) or the same LoadError (code, message, line, location).
Every generator also counts the inputs that took the fast path, so the test is not vacuous.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flarespec.loaders import LoadError, load_json, parse_prometheus, parse_sse
from flarespec.loaders import prometheus, sse, strict_json

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]
REALWORLD = REPO.parent / "shared" / "realworld"  # the project's captures, when present
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _outcome(load, data: bytes):
    try:
        return "value", repr(load(data))
    except LoadError as error:
        return "error", (error.code, error.message, error.line, error.location)


def _both(monkeypatch, module, load, data: bytes):
    """(fast outcome, general outcome) of ``load(data)``."""
    fast = _outcome(load, data)
    with monkeypatch.context() as patch:
        patch.setattr(module, "FAST_PATH", False)
        general = _outcome(load, data)
    return fast, general


def _sse_loads(terminator):
    return [lambda data: parse_sse(data),
            lambda data: parse_sse(data, data_json=True, terminator=terminator),
            lambda data: parse_sse(data, terminator=terminator)]


def _assert_sse_same(monkeypatch, data: bytes, terminator="[DONE]"):
    for load in _sse_loads(terminator):
        fast, general = _both(monkeypatch, sse, load, data)
        assert fast == general, data[:120]


def _sse_is_common(data: bytes) -> bool:
    text = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        return sse._common_blocks(text.decode()) is not None
    except UnicodeDecodeError:
        return False


# ----------------------------------------------------------------------------- SSE

_SSE_LINES = [
    'data: {"a": 1}', 'data: {"a": 1}', 'data: {"b": [1.5, -0.0, "x"]}', "data: [DONE]", "data: [DONE]",
    'data: {"a": 1, "a": 2}', "data: {\"c\": 1e400}", "data: NaN", "data: not json", "data: ", "data:",
    'data:{"a": 1}', "data", "data:  two spaces", ": keep-alive", ":", "event: delta", "event:",
    "id: 7", "id: a\x00b", "retry: 3000", "retry: x", "unknown: field", "\ufeffdata: 1",
    'data: "\\u00e9\\"q"', "data: a\rb", "data: 1\r", 'data: {"s": "1e400 \\\\ 99"}', "data: [1, 2", "data: \v\x85 breaks",
]
_sse_line = st.sampled_from(_SSE_LINES) | st.text(alphabet="data:{} \"1\\e,\r", max_size=12)
_ends = st.sampled_from(["\n"] * 8 + ["\r\n", "\r"])


@st.composite
def _sse_bodies(draw):
    """Mostly the common form (one line a block, LF, a blank line after each), with
    near-misses: another line end, a second line in a block, a missing or extra blank line,
    a BOM, text after the last line end."""
    blocks = draw(st.lists(st.lists(_sse_line, min_size=1, max_size=3 if draw(st.booleans()) else 1),
                           max_size=8))
    end = draw(_ends) if draw(st.integers(0, 4)) == 0 else "\n"
    body = "".join(end.join(block) + end + end for block in blocks)
    if draw(st.integers(0, 5)) == 0:
        body += draw(_sse_line)
    if draw(st.integers(0, 5)) == 0:
        body = body.replace("\n\n", "\n\n\n", 1)
    prefix = draw(st.sampled_from(["", "", "", "\ufeff", "\n\n", "\ufeff\ufeff"]))
    return (prefix + body).encode("utf-8", "surrogatepass")


@SETTINGS
@given(body=_sse_bodies())
def test_generated_streams_have_the_general_outcome(monkeypatch, body):
    _assert_sse_same(monkeypatch, body)


def test_the_sse_edges_take_both_paths():
    common = sum(map(_sse_is_common, SSE_EDGES))
    assert 8 <= common <= len(SSE_EDGES) - 8, common


SSE_EDGES = [
    b"", b"\n", b"\n\n", b"data: 1\n\n", b"data: 1\n", b"data: 1", b"data: 1\n\n\n", b"data: 1\r\n\r\n",
    b"data: 1\r\rdata: 2\r\r", b"data: [DONE]\n\ndata: 1\n\n: c\n\ndata: 2\n\n",
    b"data: [DONE]\n\nevent: x\n\n", b": only a comment\n\n", b"\xef\xbb\xbfdata: 1\n\n",
    b"\xef\xbb\xbf\xef\xbb\xbfdata: 1\n\n", b"data: {\"a\": 1}\n\ndata: {\"a\": 1}\n\n",
    b"data: x\n\n" * 3 + b"data: [DONE]\n\n", b"data: \xff\n\n", b"data: \x00\n\n",
    b"data: {\"c\": 1e400}\n\ndata: [DONE]\n\n", b"data:1\n\n", b"id: 1\n\ndata: 1\n\n",
    b"data: a\rb\n\n", b"data: 1\n\ndata: 2\r\n\n", b"data: 1\r\n\n",
]


@pytest.mark.parametrize("body", SSE_EDGES, ids=range(len(SSE_EDGES)))
def test_sse_edges_have_the_general_outcome(monkeypatch, body):
    _assert_sse_same(monkeypatch, body)


def test_sse_shares_values_and_raises_the_event_limit_as_the_general_path(monkeypatch):
    body = b'data: {"a": 1}\n\n' * 5 + b'data: {"b": 2}\n\n'
    _assert_sse_same(monkeypatch, body)
    monkeypatch.setattr(sse, "MAX_SSE_EVENTS", 3)
    fast, general = _both(monkeypatch, sse, lambda data: parse_sse(data, data_json=True), body)
    assert fast == general
    assert fast[1][:3] == ("too-large", "more than 3 events (the limit for one event stream)", 7)


# ----------------------------------------------------------------------------- JSON

_long_text = st.text(alphabet="ab 1e4+0.-9:,[]{}\\\"/u", min_size=0, max_size=40).map(lambda t: t * 8)
_numbers = st.sampled_from(["1", "-0.5", "1e99", "1e400", "-2.5E+999", "1e-400", "9" * 250,
                            "1" * 4301, "0.1e0100", "12345678901234567890"])


@st.composite
def _json_texts(draw):
    """Objects of long strings (digits, exponents, quotes and backslashes inside them) and
    numbers that do or do not overflow outside them; now and then not JSON at all."""
    members = draw(st.lists(st.tuples(st.text(alphabet="ke\"\\", max_size=3), _long_text | _numbers),
                            max_size=5))
    parts = []
    for key, value in members:
        literal = value if value in _NUMBER_SET and draw(st.booleans()) else json.dumps(value)
        parts.append(f"{json.dumps(key)}: {literal}")
    text = "{" + ", ".join(parts) + "}"
    if draw(st.integers(0, 6)) == 0:
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(['"', "1e400", "\\", ""])) + text[cut:]
    return text.encode()


_NUMBER_SET = {"1", "-0.5", "1e99", "1e400", "-2.5E+999", "1e-400", "9" * 250, "1" * 4301, "0.1e0100",
               "12345678901234567890"}


@SETTINGS
@given(data=_json_texts())
def test_generated_json_has_the_general_outcome(monkeypatch, data):
    monkeypatch.setattr(strict_json, "_OUTSIDE_STRINGS_BYTES", 0)  # small texts take it too
    fast, general = _both(monkeypatch, strict_json, load_json, data)
    assert fast == general, data[:120]


@pytest.mark.parametrize("data", [
    b'{"p": "' + b"w1e400 " * 20000 + b'", "n": 1e400}', b'{"p": "' + b"x" * 100000 + b'", "n": [1, 9' + b"9" * 300 + b"]}",
    b'["' + b"1e400 " * 20000 + b'"]', b'{"p": "' + b"7" * 300 + b"y" * 100000 + b'"}',
    b'{"p": "' + b"x" * 100000 + b'", "q": "a\\"b 1e400"}', b"1e400", b'"' + b"x" * 100000,
    b'{"a": "' + b"x" * 70000 + b'"}' + b'{"b": 1e400}', b"[" + b'"x",' * 30000 + b"1e400]",
    # escaped quotes pair up wrongly: the backslash sends the text to the whole scan
    b'{"a": "\\"", "b": 1e400, "c": "\\"", "p": "' + b"x" * 70000 + b'"}',
])
def test_json_edges_have_the_general_outcome(monkeypatch, data):
    fast, general = _both(monkeypatch, strict_json, load_json, data)
    assert fast == general


def test_an_overflow_outside_long_strings_is_still_refused():
    data = b'{"p": "' + b"x" * 100000 + b'", "n": 1e400}'
    assert strict_json._outside_strings(data) is not None
    with pytest.raises(LoadError) as refused:
        load_json(data)
    assert refused.value.code == "number-out-of-range"


# ----------------------------------------------------------------------------- Prometheus

_names = st.sampled_from(["a", "a_total", "h", "h_bucket", "h_sum", "h_count", "s", "s_sum", "s_count",
                          "up:x", "9bad", '"q.name"'])
_label_items = st.sampled_from(['le="0.5"', 'le="+Inf"', 'le="x"', 'quantile="0.9"', 'a="x"', 'a="x"',
                                'b="y,z"', 'c=""', 'd="}"', 'e="a\\"b"', 'f="a\\nb"', 'g="\\q"',
                                '__name__="x"', '"q.label"="v"', '"q.name"', ' a = "x" ', "a=x", 'a="x'])
_values = st.sampled_from(["1", "0", "-3", "1.5", "2.0", "1e3", "8.128902e+06", "NaN", "+Inf", "-inf",
                           "1e400", "0x10", "1_0", "", "{", ".5", "5."])
_timestamps = st.sampled_from(["", "", "", " 1700000000000", " -1", " 1.5", " 99999999999999999999"])


@st.composite
def _sample_lines(draw):
    name = draw(_names)
    if draw(st.booleans()):
        items = draw(st.lists(_label_items, max_size=3))
        block = "{" + draw(st.sampled_from([",", ", ", ""])).join(items) + draw(st.sampled_from(["", ",", " "])) + "}"
        name += draw(st.sampled_from(["", "", "", " "])) + block
    value = draw(_values)
    return name + draw(st.sampled_from([" ", " ", "\t", ""])) + value + draw(_timestamps)


_comment_lines = st.builds(
    lambda keyword, name, text: f"# {keyword} {name}{text}",
    st.sampled_from(["HELP", "TYPE", "TYPE", "comment", "HELP"]), _names,
    st.sampled_from(["", " counter", " gauge", " histogram", " summary", " untyped", " bogus",
                     " some help", " with \\n escape", " bad \\q escape", "  "]))


@st.composite
def _expositions(draw):
    lines = draw(st.lists(_sample_lines() | _comment_lines | st.sampled_from(["", "  a 1", "# EOF",
                                                                             "a 1 # {t=\"x\"} 1"]),
                          max_size=10))
    text = "".join(line + draw(st.sampled_from(["\n"] * 12 + ["\r\n", " \n"])) for line in lines)
    if draw(st.integers(0, 8)) == 0:
        text = text.rstrip("\n")
    return text.encode()


@SETTINGS
@given(line=_sample_lines() | _comment_lines)
def test_generated_lines_have_the_general_outcome(monkeypatch, line):
    """One line alone (after a # TYPE of its family, now and then), so no earlier line's
    error hides how it is read."""
    for prefix in ("", "# TYPE h histogram\n", "# TYPE s summary\n"):
        data = (prefix + line + "\n").encode()
        fast, general = _both(monkeypatch, prometheus, parse_prometheus, data)
        assert fast == general, data


PROMETHEUS_LINES = [
    'a{b="1",c="2"} 1', 'a{b="1"c="2"} 1', 'a{b="1",} 1', 'a{,} 1', 'a{} 1', 'a{b="1"}1', 'a{b="1"} 1 2',
    'a{b="1"} 1 x', 'a{b="1",b="2"} 1', 'a{__name__="x"} 1', 'a{b="1"} 1e400', 'a{b="1"} {',
    'a {b="1"} 1', 'a{b = "1"} 1', 'a{b="x\\"y"} 1', 'h_bucket{le="x"} 1', 'h_bucket{le="0.5"} -1',
]


@pytest.mark.parametrize("line", PROMETHEUS_LINES, ids=range(len(PROMETHEUS_LINES)))
def test_prometheus_line_edges_have_the_general_outcome(monkeypatch, line):
    for prefix in ("", "# TYPE h histogram\n"):
        data = (prefix + line + "\n").encode()
        fast, general = _both(monkeypatch, prometheus, parse_prometheus, data)
        assert fast == general, data


@SETTINGS
@given(data=_expositions())
def test_generated_expositions_have_the_general_outcome(monkeypatch, data):
    fast, general = _both(monkeypatch, prometheus, parse_prometheus, data)
    assert fast == general, data[:200]


def test_remembered_comment_lines_are_read_anew_in_each_exposition(monkeypatch):
    """A common comment line is remembered (``_COMMENTS``) by what it says alone; what it
    does to an exposition (a second HELP, a TYPE after samples, an escape HELP refuses) is
    decided in each, as the general path decides it."""
    first = b"# HELP a_total Requests.\n# TYPE a_total counter\n# HELP b Bad \\q.\na_total 1\n"
    later = [b"# HELP a_total Requests.\n# HELP a_total Requests.\n",
             b"a_total 1\n# TYPE a_total counter\n",
             b"# TYPE a_total counter\n# TYPE a_total counter\n",
             b"# HELP b Bad \\q.\n",
             first]
    assert _both(monkeypatch, prometheus, parse_prometheus, first)[1][0] == "error"
    for data in [first, *later]:
        fast, general = _both(monkeypatch, prometheus, parse_prometheus, data)
        assert fast == general, data
    assert {"# HELP a_total Requests.", "# TYPE a_total counter", "# HELP b Bad \\q."} <= set(
        prometheus._COMMENTS)
    with monkeypatch.context() as patch:  # the general path never asks what is remembered
        patch.setattr(prometheus, "FAST_PATH", False)
        patch.setattr(prometheus, "_COMMENTS", {"# TYPE a_total counter": ("TYPE", "a_total",
                                                                           "gauge", None)})
        assert parse_prometheus(b"# TYPE a_total counter\n")["families"][0]["type"] == "counter"
    monkeypatch.setattr(prometheus, "_COMMENTS", {})
    monkeypatch.setattr(prometheus, "_COMMENTS_KEPT", 2)
    many = "".join(f"# HELP m{i} Text {i}.\n" for i in range(5)).encode()
    assert _both(monkeypatch, prometheus, parse_prometheus, many)[0][0] == "value"
    assert len(prometheus._COMMENTS) == 2  # bounded: the others are read each time


def test_labelled_lines_of_real_captures_take_the_fast_path():
    lines = (DATA / "sglang-production-metrics.prom").read_text().splitlines()
    labelled = [line for line in lines if "{" in line and not line.startswith("#")]
    assert labelled and all(prometheus._common_labelled(line, 1) for line in labelled)


# ----------------------------------------------------------------------------- real and written inputs

def _real_files() -> list[Path]:
    files = [DATA / "openai-chat-stream-with-usage.sse", DATA / "sglang-production-metrics.prom",
             *sorted((REPO / "fixtures" / "aiperf" / "run1").glob("*.json"))]
    if REALWORLD.is_dir():
        files += sorted(p for p in REALWORLD.rglob("*") if p.suffix in (".sse", ".prom", ".json"))
    return files


def _assert_file_same(monkeypatch, path: Path, data: bytes):
    if path.suffix == ".sse":
        _assert_sse_same(monkeypatch, data)
        for variant in (data.replace(b"\n", b"\r\n"), data.replace(b"data: ", b"data:", 1), data[:-1]):
            _assert_sse_same(monkeypatch, variant)
    elif path.suffix == ".prom":
        for variant in (data, data.replace(b'="', b'= "', 1), data.replace(b"\n", b"\r\n", 3)):
            fast, general = _both(monkeypatch, prometheus, parse_prometheus, variant)
            assert fast == general, path
    else:
        fast, general = _both(monkeypatch, strict_json, load_json, data)
        assert fast == general, path


@pytest.mark.parametrize("path", _real_files(), ids=lambda path: path.name)
def test_real_captures_have_the_general_outcome(monkeypatch, path):
    _assert_file_same(monkeypatch, path, path.read_bytes())


def test_real_streams_take_the_fast_path():
    assert _sse_is_common((DATA / "openai-chat-stream-with-usage.sse").read_bytes())


@pytest.fixture(scope="module")
def written_packet(tmp_path_factory) -> Path:
    from flarespec.adapter.select import bundled_specs
    from flarespec.fixtures.writers import write_packet

    spec = next(spec for spec in bundled_specs() if spec.id.startswith("flare/"))
    entry = write_packet(tmp_path_factory.mktemp("packet") / "packet", spec, repetitions=1, full_prompts=True)
    return entry.parent


def test_written_packets_have_the_general_outcome(monkeypatch, written_packet):
    taken = {".sse": 0, ".json": 0}
    for path in sorted(written_packet.rglob("*")):
        if path.suffix not in (".sse", ".prom", ".json"):
            continue
        data = path.read_bytes()
        _assert_file_same(monkeypatch, path, data)
        if path.suffix == ".sse":
            taken[".sse"] += _sse_is_common(data)
        elif path.suffix == ".json":
            taken[".json"] += len(data) >= strict_json._OUTSIDE_STRINGS_BYTES and \
                strict_json._outside_strings(data) is not None
    assert taken[".sse"] >= 5 and taken[".json"] >= 1, taken
