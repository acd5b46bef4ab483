import math
import subprocess
import sys
from pathlib import Path

import pytest

from flarespec.loaders import prometheus
from flarespec.loaders.errors import LoadError
from flarespec.loaders.prometheus import parse_prometheus

DATA = Path(__file__).parent / "data"


def parse(text: str) -> dict:
    return parse_prometheus(text.encode())


def error_of(text: str) -> LoadError:
    with pytest.raises(LoadError) as info:
        parse(text)
    return info.value


def test_counter_sample_name_kept_exactly_as_written():
    result = parse("# HELP x_total Things.\n# TYPE x_total counter\nx_total 3\n")
    assert result["families"] == [{"name": "x_total", "type": "counter", "help": "Things.", "line": 1}]
    assert result["samples"] == [{"name": "x_total", "labels": {}, "value": 3.0, "timestamp": None, "line": 3}]
    assert result["unlabelled"] == {"x_total": [3.0]}


def test_counter_without_total_suffix_is_not_renamed():
    result = parse("# TYPE requests counter\nrequests 7\n")
    assert [s["name"] for s in result["samples"]] == ["requests"]
    assert result["unlabelled"] == {"requests": [7.0]}


def test_histogram_samples_belong_to_one_family():
    text = ('# TYPE h histogram\nh_bucket{le="0.5"} 1\nh_bucket{le="+Inf"} 2\nh_sum 0.7\nh_count 2\n')
    result = parse(text)
    assert result["families"] == [{"name": "h", "type": "histogram", "help": None, "line": 1}]
    assert [(s["name"], s["labels"], s["line"]) for s in result["samples"]] == [
        ("h_bucket", {"le": "0.5"}, 2), ("h_bucket", {"le": "+Inf"}, 3), ("h_sum", {}, 4), ("h_count", {}, 5)]
    assert result["unlabelled"] == {"h_sum": [0.7], "h_count": [2.0]}


def test_samples_without_type_get_inferred_unknown_families():
    result = parse("# TYPE g gauge\ng 1\nother 2\nother{a=\"b\"} 3\n# TYPE u untyped\nu 4\n")
    assert result["families"] == [
        {"name": "g", "type": "gauge", "help": None, "line": 1},
        {"name": "other", "type": "unknown", "help": None, "line": 3},
        {"name": "u", "type": "untyped", "help": None, "line": 5}]


def test_help_unescaping():
    result = parse('# HELP m a\\\\b\\nc "q"\n# TYPE m gauge\nm 1\n')
    assert result["families"][0]["help"] == 'a\\b\nc "q"'


def test_empty_braces_are_the_same_unlabelled_sample_and_a_duplicate():
    result = parse("m{} 3\nm 4\n")
    assert result["unlabelled"] == {"m": [3.0, 4.0]}
    assert result["duplicates"] == [{"name": "m", "labels": {}, "lines": [1, 2]}]


def test_duplicates_keyed_by_sorted_labels():
    result = parse('m{a="1",b="2"} 1\nm{b="2",a="1"} 2\nm{a="1"} 3\nm{a="1",b="2"} 4\n')
    assert result["duplicates"] == [{"name": "m", "labels": {"a": "1", "b": "2"}, "lines": [1, 2, 4]}]
    assert result["unlabelled"] == {}
    first, last = result["samples"][0]["labels"], result["samples"][3]["labels"]
    assert first == last and first is not last  # same label block, separate dicts


def test_values_exponent_special_and_timestamp():
    result = parse("a 1.2e1\nb NaN\nc +Inf\nd -Inf 1700000000000\ne -0.5\n")
    values = {s["name"]: s["value"] for s in result["samples"]}
    assert values["a"] == 12.0 and values["e"] == -0.5
    assert math.isnan(values["b"]) and values["c"] == math.inf and values["d"] == -math.inf
    assert [s["timestamp"] for s in result["samples"]] == [None, None, None, 1700000000000.0, None]
    assert all(type(s["value"]) is float for s in result["samples"])


def test_label_values_with_escapes_braces_and_commas():
    result = parse('m{path="a}b,c",q="say \\"hi\\"",n="x\\ny",s="back\\\\slash",} 1\n')
    assert result["samples"][0]["labels"] == {
        "path": "a}b,c", "q": 'say "hi"', "n": "x\ny", "s": "back\\slash"}


def test_comments_blank_lines_tabs_and_crlf_tolerated():
    result = parse("# just a comment\n\n#\n  m\t5\r\n# HELP\tn  spaced help\nn{a=\"b\"}  6   \n")
    assert [(s["name"], s["value"], s["line"]) for s in result["samples"]] == [("m", 5.0, 4), ("n", 6.0, 6)]
    assert result["families"][1] == {"name": "n", "type": "unknown", "help": "spaced help", "line": 5}


def test_colons_allowed_in_metric_names():
    assert parse("ns:sub:metric 1\n")["samples"][0]["name"] == "ns:sub:metric"


@pytest.mark.parametrize("token, value", [
    ("1", 1.0), ("-1", -1.0), ("+1", 1.0), ("1.", 1.0), (".5", 0.5), ("1e3", 1000.0), ("1E-3", 0.001),
    ("-0.5e+2", -50.0), ("+Inf", math.inf), ("-Inf", -math.inf), ("1.7976931348623157e308", 1.7976931348623157e308),
])
def test_sample_values_in_the_exposition_number_grammar(token, value):
    assert parse(f"m {token}\n")["samples"][0]["value"] == value
    assert math.isnan(parse("m NaN\n")["samples"][0]["value"])


@pytest.mark.parametrize("token", [
    "\uff10", "\uff14\uff10", "\u0661\u0662", "1\u0660", "\u0967", "Inf", "inf", "nan", "NAN", "+NaN", "Infinity",
    "-infinity", "0x1p3", "1_000", "1e", "e3", ".", "--1", "1e+", "\u00bd",
])
def test_anything_else_is_not_a_sample_value(token):
    error = error_of(f"ok 1\nm {token}\n")
    assert (error.code, error.line) == ("invalid-exposition", 2)
    assert "not a number" in error.message


@pytest.mark.parametrize("token", ["1e999", "-1e309", "1" * 400])
def test_finite_looking_value_too_large_for_a_double_is_rejected(token):
    error = error_of(f"m {token}\n")
    assert (error.code, error.line) == ("invalid-exposition", 1) and "too large" in error.message


@pytest.mark.parametrize("token", ["\u0661\u0662", "\uff11", "9223372036854775808", "-9223372036854775809", "1" * 5000])
def test_timestamp_must_be_an_ascii_64_bit_integer(token):
    assert error_of(f"m 1 {token}\n").code == "invalid-exposition"
    assert parse("m 1 -9223372036854775808\n")["samples"][0]["timestamp"] == -9223372036854775808.0


@pytest.mark.parametrize("text", [
    "m\u00a01\n", "\u3000m 1\n", "m 1\u00a0\n", "m 1\u20032\n", "m 1\x0c\n",
])
def test_only_spaces_and_tabs_separate_fields(text):
    assert error_of(text).code == "invalid-exposition"


def test_blanks_around_label_tokens_and_after_the_block():
    result = parse('m{ a = "1" ,\tb="2" , } 1\nn{a="x"}2\n')
    assert [(s["labels"], s["value"]) for s in result["samples"]] == [({"a": "1", "b": "2"}, 1.0), ({"a": "x"}, 2.0)]


@pytest.mark.parametrize("text", [
    'm{a="\\x"} 1\n',     # unknown escape (prometheus_client kept it verbatim)
    'm{a="\\"} 1\n',      # the escaped quote leaves the value unterminated
    'm{,a="b"} 1\n',       # leading comma
    'm{a="b",,c="d"} 1\n',
    'm{a="b" c="d"} 1\n',  # missing comma
    'm{a="b"}} 1\n',
    'm{a="b"\n',
])
def test_malformed_label_blocks(text):
    assert error_of(text).code == "invalid-exposition"


def _parse_in_subprocess(body: bytes, timeout: float) -> str:
    """Parse in a child process, so a parser that never finishes fails the test instead of hanging it."""
    code = ("import sys; from flarespec.loaders import LoadError, parse_prometheus\n"
            "try:\n    r = parse_prometheus(sys.stdin.buffer.read()); print('ok', len(r['samples']))\n"
            "except LoadError as e:\n    print(e.code, e.line)\n")
    try:
        completed = subprocess.run([sys.executable, "-c", code], input=body, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"parsing did not finish within {timeout} s")
    assert completed.returncode == 0, completed.stderr.decode()[-2000:]
    return completed.stdout.decode().strip()


MB2 = 2 << 20


@pytest.mark.parametrize("line, outcome", [
    (b'm{a="' + b'x\\"' * (MB2 // 3) + b'"} 1\n', "ok 2"),                          # escaped quotes (was quadratic)
    (b'm{a="' + b'x\\"' * (MB2 // 3) + b'\n', "invalid-exposition 2"),             # ... unterminated
    (b"m{" + b",".join(b'l%d="v"' % i for i in range(MB2 // 10)) + b"} 1\n", "ok 2"),  # many labels (was quadratic)
    (b'm{a="' + b"\\\\" * (MB2 // 2) + b'"} 1\n', "ok 2"),                          # backslashes
    (b"m{" + b'"' * MB2 + b"} 1\n", "invalid-exposition 2"),                         # quotes
    (b"m" + b"{" * MB2 + b" 1\n", "invalid-exposition 2"),                           # braces
    (b'm{a="b"' + b',a="\\"}' * (MB2 // 8) + b" 1\n", "invalid-exposition 2"),
    (b"m " + b"1" * MB2 + b"\n", "invalid-exposition 2"),                             # overflowing value
])
def test_hostile_two_megabyte_lines_take_linear_time(line, outcome):
    # each 2 MB line follows one good sample: a success has 2 samples, an error is on line 2
    assert _parse_in_subprocess(b"ok 1\n" + line, timeout=30) == outcome


def test_more_samples_than_the_limit_is_too_large(monkeypatch):
    monkeypatch.setattr(prometheus, "MAX_SAMPLES", 2)
    assert len(parse("a 1\nb 2\n# c\n")["samples"]) == 2
    error = error_of("a 1\nb 2\n# c\nc 3\n")
    assert (error.code, error.line) == ("too-large", 4)


def test_family_line_is_its_first_help_or_type_line_or_first_sample():
    result = parse("x 1\n# HELP h doc\n\n# TYPE h histogram\nh_sum 1\n# TYPE x gauge\n")
    assert [(f["name"], f["type"], f["line"]) for f in result["families"]] == [("x", "gauge", 1), ("h", "histogram", 2)]


@pytest.mark.parametrize("text, line", [
    ("ok 1\nm\n", 2),                       # no value
    ("m 1 2 3\n", 1),                       # too many fields
    ("m one\n", 1),                         # value not a number
    ("m 1_000\n", 1),                       # float() would accept it
    ("m 1 12.5\n", 1),                      # timestamp must be integer milliseconds
    ("1m 1\n", 1),                          # invalid metric name
    ('1m{a="b"} 1\n', 1),
    ("m-x 1\n", 1),
    ('m{a=b} 1\n', 1),                      # unquoted label value
    ('m{a="b" 1\n', 1),                     # unterminated label block
    ('m{a="1",a="2"} 1\n', 1),              # repeated label name
    ('m{"a.b"="1"} 1\n', 1),                # quoted (UTF-8) label name is not 0.0.4
    ('m{__name__="n"} 1\n', 1),             # metric name given twice
    ("# TYPE m\nm 1\n", 1),                 # TYPE without a type
    ("# TYPE m bogus\n", 1),
    ("# TYPE m gauge\n# TYPE m counter\n", 2),
    ("# HELP m a\n# HELP m b\n", 2),
    ("# HELP 9m a\n", 1),
    ("{} 1\n", 1),
])
def test_malformed_lines_are_invalid_exposition_with_line(text, line):
    error = error_of(text)
    assert (error.code, error.line) == ("invalid-exposition", line)


def test_bom_and_invalid_utf8_rejected():
    assert error_of("\ufeffm 1\n").code == "bom"
    with pytest.raises(LoadError) as info:
        parse_prometheus(b'm 1\nm{a="\xff"} 2\n')
    assert (info.value.code, info.value.line) == ("invalid-utf8", 2)


def test_empty_exposition():
    assert parse("") == {"families": [], "samples": [], "unlabelled": {}, "duplicates": []}


def test_real_sglang_capture():
    result = parse_prometheus((DATA / "sglang-production-metrics.prom").read_bytes())
    assert len(result["families"]) == 12
    assert len(result["samples"]) == 91
    assert result["unlabelled"] == {} and result["duplicates"] == []
    assert {f["type"] for f in result["families"]} == {"counter", "gauge", "histogram"}
    by_line = {s["line"]: s for s in result["samples"]}
    assert by_line[3] == {"name": "sglang:prompt_tokens_total",
                          "labels": {"model_name": "meta-llama/Llama-3.1-8B-Instruct"},
                          "value": 8128902.0, "timestamp": None, "line": 3}
    inf_bucket = by_line[36]
    assert inf_bucket["name"] == "sglang:time_to_first_token_seconds_bucket"
    assert list(inf_bucket["labels"]) == ["le", "model_name"] and inf_bucket["labels"]["le"] == "+Inf"
    assert inf_bucket["value"] == 11008.0
    func = [s for s in result["samples"] if s["name"] == "sglang:func_latency_seconds_bucket"]
    assert func[1]["labels"] == {"le": "0.07500000000000001", "name": "generate_request"}
    assert all(math.isfinite(s["value"]) for s in result["samples"])
