"""The one ``${...}`` grammar (flarespec.compiler.tokens), read by spec resolution, spec diff and
the fixture catalog alike."""

from __future__ import annotations

import pytest

from flarespec.compiler import tokens
from flarespec.compiler.tokens import Token, TokenError, lookup_constant, scan, spelled_names, substitute

CONSTANTS = {"name": "shop", "count": 2, "rate": 0.5, "flag": True, "nothing": None,
             "kinds": ["a", "b"], "field": {"key": "stats.mean", "ttl-s": 3, "bad": "a/b"}}


def lookup(dotted):
    return lookup_constant(CONSTANTS, dotted)


@pytest.mark.parametrize("text, found", [
    ("${name}", [("${name}", "name", None)]),
    ("a ${kinds.0} b ${field.ttl-s}", [("${kinds.0}", "kinds.0", None),
                                      ("${field.ttl-s}", "field.ttl-s", None)]),
    ("${field.key|pointer}", [("${field.key|pointer}", "field.key", "pointer")]),
    ("no token: $name {name} $ {", []),
])
def test_scan_finds_every_token(text, found):
    assert [(t.text, t.name, t.filter) for t in scan(text)] == found


def test_a_token_knows_its_place_and_head():
    (token,) = scan("x-${field.key}")
    assert token == Token("${field.key}", "field.key", None, 2, 14)
    assert token.head == "field"


@pytest.mark.parametrize("text, written", [
    ("${}", "'${}'"),
    ("a ${a b} c", "'${a b}'"),
    ("${1x}", "'${1x}'"),
    ("${a.}", "'${a.}'"),
    ("${a..b}", "'${a..b}'"),
    ("${a|}", "'${a|}'"),
    ("${a + }", "'${a + }'"),          # an expression that does not parse
    ("${a < 1}", "'${a < 1}'"),        # an expression compares nothing
    ("${@a + 1}", "'${@a + 1}'"),      # ... and reads names, never @names
    ("${$.a + 1}", "'${$.a + 1}'"),
    ("${2 * 3}", "'${2 * 3}'"),        # ... at least one
    ("${a", "'${a'"),
])
def test_a_dollar_brace_that_opens_no_token_is_refused(text, written):
    with pytest.raises(TokenError) as caught:
        scan(text)
    assert caught.value.code == "syntax"
    assert str(caught.value).startswith(f"{written} is not a constant: write ${{NAME}}")
    if text == "${a":
        assert str(caught.value).endswith("the '}' is missing")


def test_a_hyphen_belongs_to_members_never_to_the_name():
    assert substitute("${field.ttl-s}", lookup) == 3
    with pytest.raises(TokenError, match="is not a constant"):
        scan("${ttl-s}")


@pytest.mark.parametrize("text, value", [
    ("${count}", 2),                       # a whole token keeps the value's type
    ("${kinds}", ["a", "b"]),
    ("${flag}", True),
    ("${nothing}", None),
    ("v${count}-${rate}/${name}", "v2-0.5/shop"),
    ("doc:${field.key|jsonpath}", "doc:$.stats.mean"),
    ("/g/0${field.key|pointer}", "/g/0/stats/mean"),
    ("${name}${name}", "shopshop"),
    ("plain text", "plain text"),
])
def test_substitute(text, value):
    assert substitute(text, lookup) == value


@pytest.mark.parametrize("text, code, message", [
    ("x${kinds}", "type", "constant ${kinds} is a structure; only a whole string may be "
                          "replaced by it"),
    ("x${flag}", "type", "constant ${flag} is true, not a string or a number; only a whole "
                         "string may be replaced by it"),
    ("x${nothing}", "type", "constant ${nothing} is null, not a string or a number; only a "
                            "whole string may be replaced by it"),
    ("${field.key|pointr}", "filter", "unknown filter |pointr in ${field.key|pointr}; known: "
                                      "|pointer, |jsonpath, |divisor"),
    ("${field.key|pointer|jsonpath}", "filter", "${field.key|pointer|jsonpath} needs a dotted "
                                                "key such as 'a.b_c' (names of letters, digits "
                                                "and _ joined by dots), got '/stats/mean'"),
    ("${field.bad|jsonpath}", "filter", "${field.bad|jsonpath} needs a dotted key such as "
                                        "'a.b_c' (names of letters, digits and _ joined by "
                                        "dots), got 'a/b'"),
])
def test_substitute_refuses_what_cannot_be_spelled(text, code, message):
    with pytest.raises(TokenError) as caught:
        substitute(text, lookup)
    assert (caught.value.code, str(caught.value)) == (code, message)


def test_an_unknown_name_is_the_lookups_own_error():
    with pytest.raises(KeyError, match="kinds.2"):
        substitute("${kinds.2}", lookup)


def test_spelled_names_skips_what_is_no_token():
    assert list(spelled_names("${a.b} ${} ${c|pointer} ${d e}")) == ["a", "c"]


def test_the_grammar_is_defined_once():
    """resolve, diff, lint, scaffold and the catalog hold no ${...} pattern of their own,
    and lint's placeholder check reads templates as the engine does (compile_template)."""
    from flarespec.authoring import lint, placeholders, scaffold
    from flarespec.fixtures import catalog
    from flarespec.review import changes, constants, diff
    from flarespec.compiler import resolve

    assert "_CONSTANT" not in vars(resolve)
    # resolve imports lookup_constant and substitute from spec.tokens where it substitutes
    # (a compiled spec from the cache needs neither): it defines no lookup of its own
    assert "lookup_constant" not in vars(resolve) and "PATH_FILTERS" not in vars(resolve)
    assert all("_SPELLED" not in vars(module) for module in (diff, changes, constants))
    assert "PLACEHOLDER" not in vars(catalog)
    assert "_REFERENCE" not in vars(lint) and "_REFERENCE" not in vars(scaffold)
    assert "_PLACEHOLDER" not in vars(placeholders) and "_REFERENCE" not in vars(placeholders)


# ------------------------------------------------------------------ in a spec (resolve)

SPEC = """\
flarespec: 1
id: toy/tokens
title: Tokens
constants:
  flag: true
  limits: {ttl-s: 3}
documents:
  doc: {loader: json, entry: true}
rules:
  - id: toy.a
    description: A rule.
    given: "doc:$.a"
    assert: {equals: EQUALS}
"""  # the `equals` key stands at line 13, column 14


def resolve_issues(tmp_path, equals: str) -> list[tuple]:
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.load import SpecLibrary
    from flarespec.compiler.resolve import resolve

    (tmp_path / "tokens.yaml").write_text(SPEC.replace("EQUALS", equals))
    library = SpecLibrary([tmp_path])
    with pytest.raises(SpecInvalid) as caught:
        resolve(library.get("toy/tokens"), library)
    return [(i.mark.line, i.mark.column, i.code, i.message) for i in caught.value.issues]


@pytest.mark.parametrize("equals, code, message", [
    ('"v${}"', "spec.constant-syntax", "'${}' is not a constant: write ${NAME}, "
                                       "${NAME.member.0}, ${NAME.member|pointer} or an "
                                       "expression such as ${NAME.member + 1} (NAME: "
                                       "letters, digits and _, not starting with a digit)"),
    ('"${limits ttl}"', "spec.constant-syntax", "'${limits ttl}' is not a constant"),
    ('"on: ${flag}"', "spec.constant-type", "constant ${flag} is true, not a string or a "
                                            "number; only a whole string may be replaced by it"),
])
def test_a_spec_refuses_what_the_grammar_refuses_at_its_key(tmp_path, equals, code, message):
    ((line, column, found_code, found_message),) = resolve_issues(tmp_path, equals)
    assert (line, column, found_code) == (13, 14, code)
    assert found_message.startswith(message)


def test_a_hyphenated_member_resolves_in_a_spec(tmp_path):
    from flarespec.compiler.load import SpecLibrary
    from flarespec.compiler.resolve import resolve

    (tmp_path / "tokens.yaml").write_text(SPEC.replace("EQUALS", '"${limits.ttl-s}s"'))
    library = SpecLibrary([tmp_path])
    resolved = resolve(library.get("toy/tokens"), library)
    assert resolved.plain()["rules"][0]["assert"] == {"equals": "3s"}


def test_spec_diff_reads_constants_with_the_shared_scanners():
    from flarespec.review.changes import spelled_constants as _spelled_constants
    from flarespec.review.constants import runtime_constants as _runtime_constants
    from flarespec.compiler.references import referenced_members

    rule = {"given": "doc:${field.key|jsonpath}", "assert": {"equals": "${count}-${}"},
            "args": ["constants:$.colours[*]", "{constants:/sizes/0}", "constants:$['odd']",
                     "myconstants:$.not_a_constant", "shelf:$.name"]}
    assert sorted(_spelled_constants(rule)) == ["count", "field"]
    assert _runtime_constants(rule) == {"colours", "sizes", "odd"}
    assert referenced_members("shelf:$.name and {item:/kind}") == [("shelf", "name"),
                                                                   ("item", "kind")]


def test_find_tokens_is_scan_without_refusing():
    text = "${a.b|pointer} ${} ${c}"
    assert [t.text for t in tokens.find_tokens(text)] == ["${a.b|pointer}", "${c}"]
    assert list(tokens.find_tokens("${a}-${b.0}")) == scan("${a}-${b.0}")


# ------------------------------------------------------------------ expressions and |divisor

RATE = {"rate": {"formula": "count * 1e9 / stats.elapsed_ns", "two": "a / b / c",
                 "none": "a * 2", "grouped": "a / (b - c)", "bad": "a +"},
        "size": 4096, "extra": 512, "rows": [{"n": 1}, {"n": 2}], "limits": {"ttl-s": 3}}


def rate(dotted):
    return lookup_constant(RATE, dotted)


@pytest.mark.parametrize("text, value", [
    ("${size + extra}", 4608),                   # an int stays an int
    ("${size / 2}", 2048.0),                     # true division, as in a formula
    ("${-extra}", -512),
    ("${sum(rows.*.n) * 10}", 30),
    ("${limits.ttl-s * 2}", 6),                  # a hyphenated member, as in a name token
    ("v${size + 1}-${rows.1.n}", "v4097-2"),     # inside text: spelled as digits
    ("${rate.formula|divisor}", "stats.elapsed_ns"),
    ("${rate.formula|divisor|pointer}", "/stats/elapsed_ns"),
    ("doc:${rate.formula|divisor|jsonpath}", "doc:$.stats.elapsed_ns"),
])
def test_expressions_and_filter_chains(text, value):
    assert substitute(text, rate) == value
    assert type(substitute(text, rate)) is type(value)


def test_an_expression_token_reads_each_name_once_and_knows_them():
    (token,) = scan("${sum(rows.*.n) + size + size}")
    assert token.names == ("rows", "size") and token.head == "rows" and token.filter is None
    assert list(spelled_names("${a.b + c} ${d|divisor|pointer}")) == ["a", "c", "d"]
    assert scan("${d|divisor|pointer}")[0].filters == ("divisor", "pointer")


@pytest.mark.parametrize("text, message", [
    ("${rate.two|divisor}", "${rate.two|divisor} needs a formula that divides by one field "
                            "(a dotted key such as 'a.b_c'), but 'a / b / c' divides by 'b', 'c'"),
    ("${rate.none|divisor}", "but 'a * 2' divides by nothing"),
    ("${rate.grouped|divisor}", "but 'a / (b - c)' divides by '(b - c)'"),
    ("${rate.bad|divisor}", "${rate.bad|divisor} needs a formula, got 'a +'"),
    ("${size|divisor}", "${size|divisor} needs a formula, got 4096"),
])
def test_divisor_refuses_what_divides_by_no_one_field(text, message):
    with pytest.raises(TokenError) as caught:
        substitute(text, rate)
    assert caught.value.code == "filter" and message in str(caught.value)


def test_an_expression_that_cannot_be_computed_says_why():
    with pytest.raises(TokenError) as caught:
        substitute("${rate.formula + 1}", rate)
    assert caught.value.code == "expression"
    assert str(caught.value).startswith("${rate.formula + 1} cannot be computed: field "
                                        "'rate.formula' is not a number: string")


def test_divisors_are_read_from_the_formula_tree():
    from flarespec.engine.formula import compile_formula, divisors

    assert divisors(compile_formula("x * 1e9 / a.b")) == ("a.b",)
    assert divisors(compile_formula("sum(xs) / len(xs) > 1 and p / q == 1 / q")) == \
        ("len(xs)", "q")
    assert divisors(compile_formula("-a / -(b + c) + abs(d / e)")) == ("-(b + c)", "e")
    assert divisors(compile_formula("a * b")) == ()
