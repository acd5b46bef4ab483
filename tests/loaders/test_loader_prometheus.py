import math
import subprocess
import sys
from decimal import Decimal
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
    assert result["unlabelled"] == {"h_sum": [Decimal("0.7")], "h_count": [2]}
    assert type(result["unlabelled"]["h_count"][0]) is int


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
    assert values["a"] == 12 and type(values["a"]) is int
    assert values["e"] == Decimal("-0.5") and type(values["e"]) is Decimal
    assert math.isnan(values["b"]) and values["c"] == math.inf and values["d"] == -math.inf
    assert all(type(values[name]) is float for name in "bcd")
    assert [s["timestamp"] for s in result["samples"]] == [None, None, None, 1700000000000, None]
    assert type(result["samples"][3]["timestamp"]) is int


def test_label_values_with_escapes_braces_and_commas():
    result = parse('m{path="a}b,c",q="say \\"hi\\"",n="x\\ny",s="back\\\\slash",} 1\n')
    assert result["samples"][0]["labels"] == {
        "path": "a}b,c", "q": 'say "hi"', "n": "x\ny", "s": "back\\slash"}


def test_comments_blank_lines_tabs_and_leading_blanks_tolerated():
    result = parse("# just a comment\n\n#\n  m\t5\n# HELP\tn  spaced help\nn{a=\"b\"}  6\n")
    assert [(s["name"], s["value"], s["line"]) for s in result["samples"]] == [("m", 5.0, 4), ("n", 6.0, 6)]
    assert result["families"][1] == {"name": "n", "type": "unknown", "help": "spaced help", "line": 5}


@pytest.mark.parametrize("text, line", [
    ("m 5\r\n", 1),            # a CRLF line end (contract section 12: every line ends with LF)
    ("a 1\nm 5 \n", 2),         # blanks after the value
    ("m 5 1700000000\t\n", 1),  # ... or after the timestamp
    ("# TYPE m gauge\r\nm 1\n", 1),
])
def test_crlf_and_trailing_blanks_reject_as_in_prometheus(text, line):
    with pytest.raises(LoadError) as raised:
        parse(text)
    assert (raised.value.code, raised.value.line) == ("invalid-exposition", line)


def test_colons_allowed_in_metric_names():
    assert parse("ns:sub:metric 1\n")["samples"][0]["name"] == "ns:sub:metric"


@pytest.mark.parametrize("token, value", [
    ("1", 1), ("-1", -1), ("+1", 1), ("1.", 1), (".5", Decimal("0.5")), ("1e3", 1000), ("1E-3", Decimal("0.001")),
    ("-0.5e+2", -50), ("+Inf", math.inf), ("-Inf", -math.inf),
    ("1.7976931348623157e308", int(Decimal("1.7976931348623157e308"))),
])
def test_sample_values_in_the_exposition_number_grammar(token, value):
    parsed = parse(f"m {token}\n")["samples"][0]["value"]
    assert parsed == value and type(parsed) is type(value)
    assert math.isnan(parse("m NaN\n")["samples"][0]["value"])


@pytest.mark.parametrize("token", [
    "\uff10", "\uff14\uff10", "\u0661\u0662", "1\u0660", "\u0967", "+NaN", "-nan", "infin", "Infinit",
    "Infinityy", "0x1p3", "0x10", "0X1P-2", "1_000", "0x_1p0", "1e", "e3", ".", "--1", "1e+", "\u00bd",
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
    result = parse("x 1\n# HELP h doc\n\n# TYPE h histogram\nh_sum 1\n# HELP x late help\n")
    assert [(f["name"], f["type"], f["line"]) for f in result["families"]] == [("x", "unknown", 1), ("h", "histogram", 2)]


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


# ----------------------------------------------------------------- section 12 of the contract


@pytest.mark.parametrize("text, line", [
    ("b 42\nc 4", 2),                # a capture cut inside "c 42": not read as 4
    ("b 4", 1),
    ("b 42\n# HELP c doc", 2),
    ("b 42\n\n  ", 3),               # blanks after the last line feed are an unterminated line
    ("b 42\r", 1),
])
def test_a_file_whose_last_byte_is_not_a_line_feed_is_rejected(text, line):
    error = error_of(text)
    assert (error.code, error.line) == ("invalid-exposition", line)
    assert "line feed" in error.message


def test_an_empty_file_parses_to_nothing_and_a_final_line_feed_is_enough():
    assert parse("") == {"families": [], "samples": [], "unlabelled": {}, "duplicates": []}
    assert parse("\n")["samples"] == [] and parse("b 4\n")["unlabelled"] == {"b": [4]}


@pytest.mark.parametrize("text, line", [
    ("x 1\n# TYPE x counter\n", 2),
    ("# HELP x doc\nx 1\n# TYPE x gauge\n", 3),
    ('# TYPE h histogram\nh_bucket{le="1"} 1\n# TYPE h histogram\n', 3),   # also a second TYPE
    ('{"a.b"} 1\n# TYPE "a.b" gauge\n', 2),
])
def test_type_after_samples_of_its_family_is_rejected(text, line):
    error = error_of(text)
    assert (error.code, error.line) == ("invalid-exposition", line)


def test_help_after_samples_is_allowed_and_type_before_them_is_kept():
    result = parse("# TYPE x counter\nx 1\n# HELP x doc\n")
    assert result["families"] == [{"name": "x", "type": "counter", "help": "doc", "line": 1}]


@pytest.mark.parametrize("token, value", [
    ("12", 12), ("12.0", 12), ("1.2e1", 12), ("120e-1", 12), ("9007199254740993", 9007199254740993),
    ("9007199254740993.0", 9007199254740993), ("1152921504606846976", 2 ** 60), ("-0", 0), ("0e999999999", 0),
    ("1e308", 10 ** 308), ("0.1", Decimal("0.1")), ("9007199254740993.5", Decimal("9007199254740993.5")),
    ("12.5", Decimal("12.5")), ("1e-400", Decimal("1e-400")), ("08", 8),
])
def test_values_are_the_exact_decimal_number_their_text_spells(token, value):
    parsed = parse(f"m {token}\n")["samples"][0]["value"]
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize("token", ["1e999999999", "-1e999999999", "1.8e308", "1" * 310])
def test_huge_exponents_are_too_large_without_building_the_number(token):
    error = error_of(f"m {token}\n")
    assert (error.code, error.line) == ("invalid-exposition", 1) and "too large" in error.message


@pytest.mark.parametrize("token, value", [("+5", 5), ("-5", -5), ("000000000000000000001700000000000", 1700000000000),
                                          ("0", 0), ("-0", 0)])
def test_timestamps_are_ints(token, value):
    timestamp = parse(f"m 1 {token}\n")["samples"][0]["timestamp"]
    assert timestamp == value and type(timestamp) is int


@pytest.mark.parametrize("token", ["+", "-", "1e3", "0x10", "1.0"])
def test_timestamps_that_are_not_integers(token):
    assert error_of(f"m 1 {token}\n").code == "invalid-exposition"


def test_quoted_metric_and_label_names_parse():
    text = ('# HELP "name.with.dots" text \\"q\\"\n# TYPE "name.with.dots" counter\n'
            '{"name.with.dots", label="x"} 1\n{"name.with.dots"} 2\nplain{"label.dotted"="y"} 3\n'
            '{ "a\\\\b\\"c\\nd" , "l.1" = "v" , } 4\n')
    result = parse(text)
    assert result["families"][0] == {"name": "name.with.dots", "type": "counter", "help": 'text "q"', "line": 1}
    assert [(s["name"], s["labels"], s["value"]) for s in result["samples"]] == [
        ("name.with.dots", {"label": "x"}, 1), ("name.with.dots", {}, 2), ("plain", {"label.dotted": "y"}, 3),
        ('a\\b"c\nd', {"l.1": "v"}, 4)]
    assert result["unlabelled"] == {"name.with.dots": [2]}
    assert parse('{"flare_x"} 5\nflare_x{} 6\n')["duplicates"] == [{"name": "flare_x", "labels": {}, "lines": [1, 2]}]


@pytest.mark.parametrize("text", [
    '{"a.b","c.d"} 1\n',          # two metric names
    '{"a.b".x="1"} 1\n',          # the name runs into a label
    '{name} 1\n',                 # an unquoted name in braces
    '{x="1"} 1\n',                # no metric name at all
    '{""} 1\n',                   # an empty quoted name
    'm{"a.b"} 1\n',               # a second (quoted) metric name after a plain one
    'm{""="v"} 1\n',              # an empty label name
    'm{"__name__"="v"} 1\n',
    'm{a="1","a"="2"} 1\n',       # the same label, plain and quoted
    '{"a\\tb"} 1\n',              # an escape other than \\ \" \n
    '{"a.b} 1\n',                 # unterminated
    '"a.b" 1\n',                  # a quoted name outside braces
    '# TYPE "a.b\n',
    '# TYPE "" counter\n',
    '# HELP "a.b"x text\n',
    '# HELP m bad \\t escape\n',  # HELP escapes are \\ \n \" only, as in Prometheus
    '# HELP m trailing backslash \\\n',
    '# HELP\n',                   # HELP needs a metric name
    '# TYPE m COUNTER\n',         # types are lowercase
    '# TYPE m gaugehistogram\n',  # OpenMetrics, not 0.0.4
])
def test_malformed_quoted_names_and_comment_lines(text):
    error = error_of(text)
    assert (error.code, error.line) == ("invalid-exposition", 1)


@pytest.mark.parametrize("text, line", [
    ('# TYPE h histogram\nh_bucket{le="x"} 1\n', 2),
    ('# TYPE h histogram\nh_bucket{le="1e999"} 1\n', 2),
    ('# TYPE s summary\ns{quantile="0x1p-3"} 1\n', 2),
    ('# TYPE h histogram\nh_count -1\n', 2),
    ('# TYPE h histogram\nh_bucket{le="1"} -0.5\n', 2),
    ('# TYPE h histogram\nh_bucket{le="+Inf"} -Inf\n', 2),
])
def test_what_prometheus_checks_in_histograms_and_summaries(text, line):
    error = error_of(text)
    assert (error.code, error.line) == ("invalid-exposition", line)


def test_histogram_and_summary_bounds_prometheus_accepts():
    result = parse('# TYPE h histogram\nh_bucket{le="Inf"} 1\nh_bucket{le="+infinity"} 1\nh_sum -3\n'
                   'h_count NaN\n# TYPE s summary\ns{quantile="NaN"} -1\ns_count -2\n')
    assert [s["value"] for s in result["samples"]][2] == -3


def test_a_malformed_line_anywhere_rejects_even_in_a_family_nobody_reads():
    good = "# TYPE flare_x gauge\nflare_x 0\n"
    for bad in ("# TYPE other_family\n", "garbage here\n", 'other{a="1"} 1 2 3\n', "# HELP 1bad doc\n"):
        assert error_of(good + bad).line == 3


@pytest.mark.parametrize("line, outcome", [
    (b'{"' + b'x\\"' * (MB2 // 3) + b'"} 1\n', "ok 2"),                               # a quoted name of escaped quotes
    (b'{"' + b'x\\"' * (MB2 // 3) + b'} 1\n', "invalid-exposition 2"),                # ... unterminated
    (b'{"a"' + b', "b"' * (MB2 // 5) + b"} 1\n", "invalid-exposition 2"),              # many bare names
    (b"m{" + b",".join(b'"l.%d"="v"' % i for i in range(MB2 // 12)) + b"} 1\n", "ok 2"),  # many quoted labels
    (b'# HELP "' + b'x\\"' * (MB2 // 3) + b'" ' + b"\\\\" * (MB2 // 2) + b"\n", "ok 1"),
    (b"m{a=" + b" " * MB2 + b"x} 1\n", "invalid-exposition 2"),                        # blanks, then no value
])
def test_hostile_quoted_names_take_linear_time(line, outcome):
    assert _parse_in_subprocess(b"ok 1\n" + line, timeout=30) == outcome


@pytest.mark.parametrize("text, line", [
    ('h_bucket{le="+Inf"} 3\nh_sum 1\nh_count 3\n# TYPE h histogram\n', 4),
    ('h_bucket{le="+Inf"} 3\n# TYPE h histogram\nh_sum 1\nh_count 3\n', 2),
    ("s_sum 1\ns_count 3\n# TYPE s summary\n", 3),
])
def test_type_after_a_histogram_or_summary_suffix_sample_rejects(text, line):
    """An independent differential test: # TYPE h histogram after h_bucket samples passed
    (those samples were families of their own until the TYPE line named them)."""
    with pytest.raises(LoadError) as raised:
        parse(text)
    assert (raised.value.code, raised.value.line) == ("invalid-exposition", line)
    assert "comes after samples of its family" in raised.value.message


# ------------------------------------- issue 15: the common lines read in one match each


def _slow(monkeypatch):
    """The parser with its one-match readings of the common lines turned off."""
    never = type("Never", (), {"fullmatch": lambda *a: None})()
    monkeypatch.setattr(prometheus, "_SIMPLE_COMMENT", never)
    monkeypatch.setattr(prometheus, "_SIMPLE_SAMPLE", never)


def _outcome(text: str):
    try:
        return repr(parse_prometheus(text.encode()))  # repr: NaN equals itself
    except LoadError as error:
        return error.code, error.message, error.line


@pytest.mark.parametrize("text", [
    "# HELP a Some help.\n# TYPE a counter\na 1\n",
    "#HELP a  x \\n y\n#\tTYPE a\tgauge\t\na\t2\t1700000000000\n",
    "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1.5\nh_count 1\n",
    "# HELP a\n# HELP a again\n",                # second HELP
    "# TYPE a counter\n# TYPE a gauge\n",         # second TYPE
    "# TYPE a nonsense\n", "# HELP a \\q\n",      # bad type, bad escape
    "# HELP a{ x\n", "# HELPER a x\n# help a x\n",
    "a 1\n# TYPE a counter\n",                   # TYPE after samples
    "a x\n", "a 1 x\n", "a x x\n", "a 1 2 3\n", "a {x=\"1\"} 2\n", "a 1{\n", "a 1e400\n",
    "a 99999999999999999999\n", "a 1 99999999999999999999\n", "a -0\n", "a 1\na 1\n",
    "a:b 0.5\n", "1a 1\n", "a\t+Inf\n", "a NaN -5\n",
])
def test_the_one_match_readings_give_what_the_step_by_step_reading_gives(text, monkeypatch):
    fast = _outcome(text)
    _slow(monkeypatch)
    assert fast == _outcome(text)
