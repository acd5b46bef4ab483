import json
import subprocess
import sys

import pytest

from flarespec.loaders.errors import LoadError
from flarespec.loaders.strict_json import load_json, load_json_text


def error_of(data: bytes) -> LoadError:
    with pytest.raises(LoadError) as info:
        load_json(data)
    return info.value


def test_valid_document_keeps_int_and_float_types():
    value = load_json(b'{"a": 1, "b": 1.0, "c": 1e2, "d": [true, null, "x"], "e": -0}')
    assert value == {"a": 1, "b": 1.0, "c": 100.0, "d": [True, None, "x"], "e": 0}
    assert [type(value[k]) for k in "abce"] == [int, float, float, int]


def test_utf8_text_is_decoded():
    assert load_json('{"name": "caf\u00e9 \u2026"}'.encode()) == {"name": "caf\u00e9 \u2026"}


def test_duplicate_key_at_top_level():
    error = error_of(b'{"a": 1, "b": 2, "a": 3}')
    assert (error.code, error.location, error.line) == ("duplicate-key", "$", 1)
    assert "'a'" in error.message


def test_duplicate_key_nested_names_object_path_and_line_of_repeated_key():
    text = b'{\n  "groups": [\n    {"id": 1},\n    {"id": 2,\n     "n": 1,\n     "id": 3}\n  ]\n}'
    error = error_of(text)
    assert (error.code, error.location, error.line) == ("duplicate-key", "$.groups[1]", 6)


def test_duplicate_key_path_quotes_non_identifier_keys():
    error = error_of(b'{"a.b": {"it\'s": [0, {"q": 1, "q": 2}]}}')
    assert error.location == "$['a.b']['it\\'s'][1]"


def test_duplicate_key_written_with_escape_is_still_a_duplicate():
    error = error_of(b'{"a": 1, "\\u0061": 2}')
    assert (error.code, error.location) == ("duplicate-key", "$")


def test_first_repeated_key_in_reading_order_is_reported():
    error = error_of(b'{"a": {"x": 1,\n "x": 2},\n "a": 3}')
    assert (error.location, error.line) == ("$.a", 2) and "'x'" in error.message
    error = error_of(b'{"a": 1,\n "a": {"x": 1, "x": 2}}')
    assert (error.location, error.line) == ("$", 2) and "'a'" in error.message


def test_duplicate_key_followed_by_invalid_text_is_still_a_duplicate_key():
    # The parser stops at the duplicate; what follows is never parsed (it used to crash).
    error = error_of(b'[{"x": 1, "x": 2}, {"y": tru')
    assert (error.code, error.location, error.line) == ("duplicate-key", "$[0]", 1)


def test_duplicate_key_is_located_without_a_pure_python_parse(monkeypatch):
    monkeypatch.setattr(json.scanner, "py_make_scanner", lambda *a: pytest.fail("pure-Python parse"))
    monkeypatch.setattr(json.decoder, "JSONObject", lambda *a: pytest.fail("pure-Python parse"))
    text = b'{"items": [' + b", ".join(b'{"k": %d, "s": "a,b}[{\\""}' % i for i in range(2000)) + b'],\n"items": 0}'
    error = error_of(text)
    assert (error.code, error.location, error.line) == ("duplicate-key", "$", 2)


def test_duplicate_key_in_deep_nesting_is_located():
    # The pure-Python second parse ran out of stack here and reported no location.
    depth = 900
    text = b"[" * depth + b'{"a": [1, {"b": 1}], "a": 2}' + b"]" * depth
    error = error_of(text)
    assert (error.code, error.location) == ("duplicate-key", "$" + "[0]" * depth)


def test_duplicate_key_location_unescapes_keys_and_counts_array_elements():
    text = b'{"a\\u002eb": [0, "x,y", [1, 2], {"q": 1}, {"q": {"k": 1, "k\\u0000": 2, "k": 3}}]}'
    assert error_of(text).location == "$['a.b'][4].q"


def test_same_key_in_sibling_objects_is_fine():
    assert load_json(b'[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_literals_rejected_with_line(literal):
    error = error_of(f'{{"ok": "NaN",\n "v": [1,\n {literal}]}}'.encode())
    assert (error.code, error.line) == ("non-json-literal", 3)
    assert literal in error.message


def test_string_containing_nan_is_fine():
    assert load_json(b'["NaN", "Infinity"]') == ["NaN", "Infinity"]


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"1" * 400 + b".0", b"0.5e+0309", b"17976931348623159e292"])
def test_float_overflowing_to_infinity_is_number_out_of_range(number):
    error = error_of(b'{"ok": "1e400",\n "v": [1.5, 2e300,\n ' + number + b"]}")
    assert (error.code, error.line) == ("number-out-of-range", 3)


def test_tiny_floats_underflow_to_zero_and_large_finite_floats_are_kept():
    assert load_json(b"[1e-400, 1.7976931348623157e308, -0.0]") == [0.0, 1.7976931348623157e308, 0.0]


def test_integer_beyond_the_digit_limit_is_number_too_long_with_line():
    limit = sys.get_int_max_str_digits()
    text = b'{"a": "' + b"9" * (limit + 5) + b'",\n "b": [-0.' + b"9" * (limit + 5) + b",\n -" + b"7" * (limit + 1) + b"]}"
    error = error_of(text)
    assert (error.code, error.line) == ("number-too-long", 3)
    assert str(limit) in error.message


def test_integer_at_the_digit_limit_and_long_fractions_are_kept():
    limit = sys.get_int_max_str_digits()
    assert load_json(b"9" * limit) == int("9" * limit)
    assert load_json(b"0." + b"3" * 100000) == pytest.approx(1 / 3)


def test_number_errors_inside_sse_style_text():
    with pytest.raises(LoadError) as info:
        load_json_text('{"retry": ' + "5" * 5000 + "}")
    assert (info.value.code, info.value.line) == ("number-too-long", 1)


@pytest.mark.parametrize("text, line", [
    (b'{"a": 1,\n "b": }', 2),
    (b'{"a": 1}\n\nx', 3),
    (b"", 1),
    (b"[1, 2", 1),
    (b'{"a": "tab\there"}', 1),  # raw control character inside a string
    (b"{'a': 1}", 1),
])
def test_syntax_errors_are_invalid_json_with_line(text, line):
    error = error_of(text)
    assert (error.code, error.line) == ("invalid-json", line)


def test_bom_rejected():
    error = error_of(b'\xef\xbb\xbf{"a": 1}')
    assert (error.code, error.line) == ("bom", 1)


def test_invalid_utf8_rejected_with_line():
    error = error_of(b'{\n"a":\n "\xff"}')
    assert (error.code, error.line) == ("invalid-utf8", 3)


def test_too_deep_nesting_is_invalid_json_not_a_crash():
    assert error_of(b"[" * 100000 + b"]" * 100000).code == "invalid-json"


def test_load_json_text_applies_same_rules_without_bom_handling():
    assert load_json_text('{"a": [1, 2]}') == {"a": [1, 2]}
    with pytest.raises(LoadError) as info:
        load_json_text('{"a": 1, "a": 1}')
    assert info.value.code == "duplicate-key"
    with pytest.raises(LoadError) as info:
        load_json_text("\ufeff{}")  # a BOM char in text is just an invalid character here
    assert info.value.code == "invalid-json"


def test_floats_are_the_stdlib_floats():
    literals = ["0.1", "-2.5e-3", "1E+2", "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
                "123456789012345678901234567890.5", "0.30000000000000004", "-0.0"]
    text = "[" + ", ".join(literals) + "]"
    assert [repr(v) for v in load_json(text.encode())] == [repr(v) for v in json.loads(text)]


@pytest.mark.slow
def test_late_duplicate_in_a_24_mib_document_within_budget():
    """Issue 6, defect 12: 24 MiB of small objects, the repeated key at the very end (the
    pure-Python re-parse took about 9 s CPU and 1.2 GB here)."""
    code = """
import resource, sys
from flarespec.loaders import LoadError, load_json
item = b'{"k": 123456}, '
data = b'{"schema": "x", "padding": [' + item * ((24 << 20) // len(item)) + b'0],\\n "schema": "y"\\n}\\n'
try:
    load_json(data)
except LoadError as error:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(error.code, error.location, error.line, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300).stdout
    code_, location, line, peak, cpu = out.split()
    assert (code_, location, line) == ("duplicate-key", "$", "2")
    assert int(peak) < 800 * 2**20, f"peak RSS {int(peak) / 2**20:.0f} MiB"
    assert float(cpu) < 15


# --------------------------------------------------- issue 15: the scanner called directly


@pytest.mark.parametrize("text", ['{"a": [1, 2.5, "x", null, true]}', ' \n{"a": 1}\r\n\t', "[]",
                                  "0", '"s"', "  -1.5e3  ", "\n[\n]\n"])
def test_values_are_those_of_json_loads_with_blanks_anywhere(text):
    assert load_json_text(text) == json.loads(text)
    assert load_json(text.encode()) == json.loads(text)


@pytest.mark.parametrize("text", ["", "   ", '{"a": 1} x', '{"a": 1}\n\n]', "[1,]", '{"a" 1}',
                                  "\n\n  {", "nul"])
def test_errors_are_those_of_the_decoder_message_and_position(text):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(LoadError) as info:
        load_json_text(text)
    assert info.value.code == "invalid-json"
    assert info.value.message == f"invalid JSON: {expected.value.msg} (column {expected.value.colno})"
    assert info.value.line == expected.value.lineno


def test_a_documents_repeated_keys_are_one_string():
    first, second = load_json_text('[{"key": 1, "other": 2}, {"key": 3, "other": 4}]')
    assert [id(k) for k in first] == [id(k) for k in second]
