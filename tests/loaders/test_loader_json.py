import math

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


def test_outer_duplicate_reported_before_inner_one():
    error = error_of(b'{"a": {"x": 1, "x": 2}, "a": 3}')
    assert (error.location, error.line) == ("$", 1)
    assert "'a'" in error.message


def test_same_key_in_sibling_objects_is_fine():
    assert load_json(b'[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_literals_rejected_with_line(literal):
    error = error_of(f'{{"ok": "NaN",\n "v": [1,\n {literal}]}}'.encode())
    assert (error.code, error.line) == ("non-json-literal", 3)
    assert literal in error.message


def test_string_containing_nan_is_fine():
    assert load_json(b'["NaN", "Infinity"]') == ["NaN", "Infinity"]


def test_huge_exponent_overflows_to_inf_like_the_stdlib():
    # Syntactically valid JSON; the engine's finite check is what rejects it.
    assert math.isinf(load_json(b"1e400"))


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
