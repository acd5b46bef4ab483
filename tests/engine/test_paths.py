"""JSONPath (flarespec's RFC 9535 subset, engine/jsonpath.py), pointer templates,
references, locations. The RFC's own cases are tests/jsonpath/test_compliance.py; random
paths against the RFC oracle are tests/property/test_jsonpath_walker.py."""

from __future__ import annotations

import json
import textwrap

import jsonpath_rfc9535
import pytest

from flarespec.engine.evaluate import evaluate
from flarespec.engine.paths import (
    MAX_SEGMENTS,
    CompiledJsonPath,
    PathSyntaxError,
    compile_pointer,
    compile_template,
)
from flarespec.engine.readers import fixed_reader
from flarespec.engine.refs import compile_ref
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve
from flarespec.loaders.locations import child_location

DOC = {
    "items": [{"sku": "a", "count": 1}, {"sku": "b", "count": 2}, {"sku": "c", "count": 0}],
    "counts": {"a": 1, "b": 2, "x.y": 3, "it's": 4},
    "n": 5,
}


def found(path: CompiledJsonPath, value=DOC, base="$"):
    return [(m.value, m.location) for m in path.find(value, base)]


# --------------------------------------------------------------------------- JSONPath

PLAIN = ["$", "$.n", "$.items", "$.items[*]", "$.items[*].sku", "$.items.*.sku", "$.items[:]",
         "$.items[0]", "$.items[2].count", "$.items[5]", "$.counts.*", "$.counts[*]",
         "$.counts['x.y']", "$.counts.a.b", "$.n[*]", "$.n[0]", "$.items[*][*]", "$.missing.x",
         "$.items[1:].sku", "$.items[1:-1]", "$.items[-1:]", "$.items[::2].sku", "$.items[::-1]",
         "$.items[5:9]", "$.counts[1:]", "$.n[0:1]", "$.items[:-1][*]", "$.counts[:]",
         "$.counts[::]", "$.counts['*']", "$.items[::0]", "$.items[-1].sku"]
OTHER = ["$.items[?(@.count > 0)].sku", "$.items[?@.count > 0].sku", "$.items[0,1].sku",
         "$..sku", "$.counts['a','b']", "$..*", "$.items[?@.sku == 'b' || !@.count]",
         "$[?length(@) > 3]", "$.items[?count(@.*) == 2].sku", "$.items[?value(@.sku) == 'c']",
         "$.items[?@.count == $.n - 4]" if False else "$.items[?@.count == $.counts.a]"]


@pytest.mark.parametrize("source", PLAIN)
def test_plain_paths_are_steps(source):
    assert CompiledJsonPath(source).steps is not None


@pytest.mark.parametrize("source", OTHER)
def test_other_paths_are_no_steps(source):
    assert CompiledJsonPath(source).steps is None


def rfc_answer(source: str, value=DOC) -> list:
    """(value, location) per the RFC oracle, its normalized paths in flarespec's format."""
    answer = []
    for node in jsonpath_rfc9535.find(source, value):
        location = "$"
        for key in CompiledJsonPath(node.path()).steps:
            location = child_location(location, key)
        answer.append((node.value, location))
    return answer


@pytest.mark.parametrize("source", PLAIN + OTHER)
def test_find_and_values_agree_with_the_rfc_oracle(source):
    path = CompiledJsonPath(source)
    assert found(path) == rfc_answer(source)
    assert path.values(DOC) == [value for value, _ in rfc_answer(source)]


@pytest.mark.parametrize("source, expected", [
    ("$.items[*].sku", [("a", "$.items[0].sku"), ("b", "$.items[1].sku"),
                        ("c", "$.items[2].sku")]),
    ("$.items[?(@.count > 0)].sku", [("a", "$.items[0].sku"), ("b", "$.items[1].sku")]),
    ("$.items[0,2].sku", [("a", "$.items[0].sku"), ("c", "$.items[2].sku")]),
    ("$..sku", [("a", "$.items[0].sku"), ("b", "$.items[1].sku"), ("c", "$.items[2].sku")]),
    ("$.items[1:].count", [(2, "$.items[1].count"), (0, "$.items[2].count")]),
    ("$.items[-1:].sku", [("c", "$.items[2].sku")]),
    ("$.counts['a','b']", [(1, "$.counts.a"), (2, "$.counts.b")]),
    ("$.counts.*", [(1, "$.counts.a"), (2, "$.counts.b"), (3, "$.counts['x.y']"),
                    (4, "$.counts['it\\'s']")]),
    ("$.items[-1].sku", [("c", "$.items[2].sku")]),  # normalised index
    ("$.items[-1,0].sku", [("c", "$.items[2].sku"), ("a", "$.items[0].sku")]),
    ("$.counts['it\\'s']", [(4, "$.counts['it\\'s']")]),
    ("$.counts[\"it's\"]", [(4, "$.counts['it\\'s']")]),
    # what the old plain-path walker read otherwise: a slice selects from arrays only, and
    # a quoted '*' is the member named "*"
    ("$.counts[:]", []), ("$.counts[::]", []), ("$['*']", []),
    ("$.items[::0]", []),  # step 0 selects nothing (RFC 9535), no error
])
def test_matches_and_normalised_locations(source, expected):
    assert found(CompiledJsonPath(source)) == expected


def test_a_quoted_star_is_a_name():
    assert found(CompiledJsonPath("$['*']"), {"*": 1, "a": 2}) == [(1, "$['*']")]


def test_the_bundled_filter_form_is_rfc():
    path = CompiledJsonPath("$.groups[?(@.kind == 'hit')].requests[0].prefix")
    value = {"groups": [{"kind": "seed", "requests": [{"prefix": 1}]},
                        {"kind": "hit", "requests": [{"prefix": 2}, {"prefix": 3}]}]}
    assert found(path, value) == [(2, "$.groups[1].requests[0].prefix")]


def test_base_location_is_prefixed():
    assert found(CompiledJsonPath("$.sku"), DOC["items"][1], "$.items[1]") == [
        ("b", "$.items[1].sku")]
    assert found(CompiledJsonPath("$[?(@ > 1)]"), [1, 2, 3], "$.v") == [
        (2, "$.v[1]"), (3, "$.v[2]")]


@pytest.mark.parametrize("source, value, expected", [
    ("$[?@ == 1]", [1, 1.0, True, "1", [1]], [1, 1.0]),         # true is no number
    ("$[?@ == true]", [1, True, "true"], [True]),
    ("$[?@ < 2]", [1, 2, "1", True, None, [0]], [1]),             # only like kinds order
    ("$[?@ <= 'b']", ["a", "b", "c", 1], ["a", "b"]),
    ("$[?@.a == @.b]", [{"a": 1}, {"a": 1, "b": 1}, {}], [{"a": 1, "b": 1}, {}]),  # Nothing
    ("$[?@.a != 1]", [{"a": 1}, {"a": 2}, {}], [{"a": 2}, {}]),
    ("$[?@.a <= @.b]", [{}, {"a": 1}], [{}]),                    # Nothing <= Nothing: ==
    ("$[?!@.a]", [{"a": None}, {}], [{}]),                       # existence, not truth
])
def test_comparison_semantics(source, value, expected):
    path = CompiledJsonPath(source)
    assert path.values(value) == expected
    assert path.values(value) == jsonpath_rfc9535.find(source, value).values()


def test_deep_equality_keeps_true_apart_from_1():
    # RFC 9535: arrays are equal when their elements are, and true is no number (the
    # jsonpath-rfc9535 oracle compares nested values with Python's ==, where True == 1)
    value = [[1, True], [1, 1], [1, True], {"a": 1.0}, {"a": True}]
    assert CompiledJsonPath("$[?@ == $[0]]").values(value) == [[1, True], [1, True]]
    assert CompiledJsonPath("$[?@ == $[3]]").values(value) == [{"a": 1.0}]


def test_a_bare_current_node_test_is_existence():
    # RFC 9535: a filter query is true when it selects a node; @ always does (the
    # jsonpath-rfc9535 oracle reads it as the value's truth and drops '' and 0)
    assert CompiledJsonPath("$[?@]").values(["", 0, False, None]) == ["", 0, False, None]
    assert CompiledJsonPath("$[?!@]").values(["", 0]) == []


def test_decimal_values_compare_exactly_with_number_literals():
    from decimal import Decimal

    value = [Decimal("0.1"), Decimal("2"), Decimal("2.5"), float("nan")]
    assert CompiledJsonPath("$[?@ == 0.1]").values(value) == [Decimal("0.1")]
    assert CompiledJsonPath("$[?@ == 2]").values(value) == [Decimal("2")]
    assert CompiledJsonPath("$[?@ > 2]").values(value) == [Decimal("2.5")]


@pytest.mark.parametrize("source, message", [
    ("$.items[", "a '[' is not closed by ']'"),
    ("$.items[?", "a filter expression is incomplete"),
    ("$..", "expected a member name, '*' or '[' after '..'"),
    ("$.a b", "unexpected 'b'"),
    ("$[?(@.a ==)]", "expected a query (@ or $), a literal or a function"),
    ("$[01]", "an index 01 has a leading zero"),
    ("$[-0]", "an index -0 is not an integer JSONPath allows"),
    ("$[9007199254740992]", "outside the exact integer range"),
    ("$. n", "no whitespace may follow '.'"),
    ("$ ", "no whitespace at its end"),
    (" $", "no whitespace before '$'"),
    ("a.b", "a JSONPath starts with '$'"),
    ("$.items[?count > 0]", "write @.count, not the bare name count (jsonpath-ng's form)"),
    ("$.counts[a,b]", "a name inside brackets is quoted: ['a']"),
    ("$['\\q']", "the escape \\q is not one of JSONPath's"),
    ("$['\\uD800']", "a \\u escape of a high surrogate is followed by a low one"),
    ("$['a\nb']", "a control character"),
    ("$[?@.* == 1]", "a comparison takes a singular query"),
    ("$[?1]", "a literal alone is no test"),
    ("$[?length(@.a)]", "length() gives a value, which is no test"),
    ("$[?count(1) == 1]", "count() takes a query (its nodes), not a literal"),
    ("$[?length(@.*) == 1]", "the argument of length() takes a singular query"),
    ("$[?foo(@) == 1]", "unknown function foo()"),
    ("$[?!@.a == 1]", "'!' negates a test or a parenthesised expression, not a comparison"),
    ("$[?@.a = 1]", "'=' is no comparison: write '=='"),
    ("$[?@.a == True]", "the literals are lower case: true, not True"),
    ("$[?@.a == 01]", "a number is RFC 9535's"),
    ("$[(@.length-1)]", "script expression"),
])
def test_jsonpath_syntax_errors_name_what_is_wrong(source, message):
    with pytest.raises(PathSyntaxError) as refused:
        CompiledJsonPath(source)
    assert str(refused.value).startswith(f"invalid JSONPath {source!r}: ")
    assert message in str(refused.value)


@pytest.mark.parametrize("source, construct", [
    ("$[?match(@.a, 'x')]", "function extension match()"),
    ("$[?search(@.a, 'x')]", "function extension search()"),
    ("$.a.`len`", "the jsonpath-ng operator `len`"),
    ("$.a.`split(',', *, -1)`", "the jsonpath-ng operator `split(',', *, -1)`"),
])
def test_refused_constructs_are_named(source, construct):
    with pytest.raises(PathSyntaxError) as refused:
        CompiledJsonPath(source)
    assert f"{construct} is not supported by flarespec's JSONPath" in str(refused.value)


def test_match_and_search_are_refused_because_they_run_a_regex():
    with pytest.raises(PathSyntaxError, match="runs a regular expression on the evidence.*"
                                              "`regex` assertion \\(RE2"):
        CompiledJsonPath("$[?match(@, '(a+)+$')]")


def test_compiled_paths_pickle():
    import pickle

    for source in PLAIN + OTHER:
        path = CompiledJsonPath(source)
        again = pickle.loads(pickle.dumps(path))
        assert again.source == source and found(again) == found(path)
        assert again.steps == path.steps


def test_parent():
    assert CompiledJsonPath("$.a[?@.b].c").parent().source == "$.a[?@.b]"
    assert CompiledJsonPath("$.a").parent().source == "$"
    assert CompiledJsonPath("$").parent().source == "$"


def test_the_engine_gives_the_same_violations_whichever_way_places_are_selected(tmp_path):
    """The same places selected four ways fail the same rule at the same locations."""
    rules = ""
    for name, path in [("plain", "$.items[*].sku"), ("filter", "$.items[?(@.count >= 0)].sku"),
                       ("union", "$.items[0,1,2].sku"), ("descent", "$..sku")]:
        rules += f"""
          - id: toy.sku.{name}
            description: Skus are upper case ({name}).
            given: "doc:{path}"
            assert: {{regex: "^[A-Z]$"}}"""
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (spec_dir / "case.yaml").write_text(textwrap.dedent("""\
        flarespec: 1
        id: toy/case
        title: Toy case
        documents:
          doc: {loader: json, entry: true}
        rules:""") + rules + "\n")
    library = SpecLibrary([spec_dir])
    spec = compile_spec(resolve(library.get("toy/case"), library))
    assert [rule.given.jsonpath.steps is None for rule in spec.rules] == [False, True, True, True]
    (tmp_path / "doc.json").write_text(json.dumps({"items": [
        {"sku": "A", "count": 1}, {"sku": "b", "count": 2}, {"sku": "c", "count": 0}]}))
    report = evaluate(spec, tmp_path / "doc.json")
    by_rule = {}
    for violation in report.violations:
        by_rule.setdefault(violation.rule, []).append(
            (violation.file, violation.location, violation.message, violation.actual))
    expected = [("doc.json", "$.items[1].sku", "does not match /^[A-Z]$/", "b"),
                ("doc.json", "$.items[2].sku", "does not match /^[A-Z]$/", "c")]
    assert by_rule == {f"toy.sku.{name}": expected
                       for name in ("plain", "filter", "union", "descent")}


# --------------------------------------------------------------------------- locations

@pytest.mark.parametrize("key, expected", [
    ("a", "$.a"), ("_a1", "$._a1"), (0, "$[0]"), (12, "$[12]"), ("x.y", "$['x.y']"),
    ("a b", "$['a b']"), ("1a", "$['1a']"), ("a-b", "$['a-b']"), ("it's", "$['it\\'s']"),
    ("back\\slash", "$['back\\\\slash']"), ("", "$['']"),
    ("a\n", "$['a\n']"),  # a trailing newline is no identifier ($ before "\n" once said so)
])
def test_child_location(key, expected):
    assert child_location("$", key) == expected


def nested_dicts(depth: int) -> dict:
    deep = value = {}
    for _ in range(depth):
        value["a"] = {}
        value = value["a"]
    value["x"] = 1
    return deep


def nested_lists(depth: int):
    deep = value = []
    for _ in range(depth):
        value.append([])
        value = value[0]
    value.append({"x": 1})
    return deep


def test_long_paths_do_not_recurse():
    """The longest query (MAX_SEGMENTS segments) is walked without recursion; a longer one
    is refused (tests/security/test_issue23_path_bounds.py)."""
    names = MAX_SEGMENTS - 1
    deep = nested_dicts(names)
    [match] = CompiledJsonPath("$" + ".a" * names + ".x").find(deep)
    assert match.value == 1
    assert match.location == "$" + ".a" * names + ".x"
    filtered = CompiledJsonPath("$" + ".a" * (names - 1) + "[?@.x==1]")
    assert filtered.values(deep) == [{"x": 1}]
    assert [m.location for m in filtered.find(deep)] == ["$" + ".a" * names]


@pytest.mark.parametrize("depth", [5000])
def test_descendant_segments_walk_deep_documents(depth):
    for deep, location, below in [(nested_dicts(depth), "$" + ".a" * depth + ".x", depth + 1),
                                  (nested_lists(depth), "$" + "[0]" * (depth + 1) + ".x",
                                   depth + 2)]:
        path = CompiledJsonPath("$..x")
        assert path.values(deep) == [1]
        assert [m.location for m in path.find(deep)] == [location]
        assert len(CompiledJsonPath("$..*").values(deep)) == below  # all but the root
        assert len(CompiledJsonPath("$..*").find(deep)) == below
        assert CompiledJsonPath("$[?@..x]").values([deep]) == [deep]


def test_deep_values_compare_without_recursion():
    left, right = nested_lists(5000), nested_lists(5000)
    assert CompiledJsonPath("$[?@ == $[1]]").values([left, right]) == [left, right]
    right[0][0].append(2)
    assert CompiledJsonPath("$[?@ == $[1]]").values([left, right]) == [right]


@pytest.mark.parametrize("source", [
    "$" + "[?@" * 100 + "]" * 100,
    "$[?" + "(" * 3000 + "@" + ")" * 3000 + "]",
    "$[?" + "length(" * 100 + "@" + ")" * 100 + " > 0]",
    "$[?" + "!(" * 3000 + "@" + ")" * 3000 + "]",
])
def test_deeply_nested_paths_are_refused_cleanly(source):
    with pytest.raises(PathSyntaxError, match="nested more than 64 deep"):
        CompiledJsonPath(source)


# --------------------------------------------------------------------------- pointers

def fill_from(bindings: dict):
    return lambda placeholder: bindings[placeholder]


def test_pointer_with_placeholders():
    pointer = compile_pointer("/items/{item@index}/sku")
    assert pointer.placeholders == ("item@index",)
    [match] = pointer.find(DOC, fill_from({"item@index": 1}))
    assert (match.value, match.location) == ("b", "$.items[1].sku")


@pytest.mark.parametrize("pointer, bindings, expected", [
    ("/", {}, [(DOC, "$")]),
    ("/n", {}, [(5, "$.n")]),
    ("/counts/{sku}", {"sku": "b"}, [(2, "$.counts.b")]),
    ("/counts/x.y", {}, [(3, "$.counts['x.y']")]),
    ("/items/-1/sku", {}, [("c", "$.items[2].sku")]),
    ("/items/3/sku", {}, []),
    ("/items/one", {}, []),
    ("/items/\u0661", {}, []),                          # only ASCII digits index a list
    ("/items/\uff10", {}, []),
    ("/counts/z", {}, []),
    ("/n/0", {}, []),
    ("/items/[sku=b]/count", {}, [(2, "$.items[1].count")]),
    ("/items/[sku={s}]", {"s": "c"}, [({"sku": "c", "count": 0}, "$.items[2]")]),
    ("/items/[{k}={s}]/sku", {"k": "sku", "s": "a"}, [("a", "$.items[0].sku")]),
    ("/items/[sku=z]", {}, []),
    ("/counts/[sku=a]", {}, []),                     # a filter segment needs a list
    ("/items/[count=1]", {}, []),                    # filter values compare as text only
])
def test_pointer_find(pointer, bindings, expected):
    assert [(m.value, m.location) for m in
            compile_pointer(pointer).find(DOC, fill_from(bindings))] == expected


class _Marked(dict):
    """A dict subclass, as the spec's constants are (marked containers)."""


@pytest.mark.parametrize("pointer", ["/", "/n", "/counts/x.y", "/items/-1/sku", "/items/-4",
                                     "/items/3/sku", "/items/one", "/items/\u0661", "/n/0",
                                     "/counts/z", "/items/01/sku", "/items/0/sku/0",
                                     "/marked/0", "/marked/k/-1"])
def test_a_literal_pointer_reads_as_the_general_walk(pointer):
    """The reader of a pointer of literal keys (its generated reader, engine/readers.py)
    selects what the one walk selects, whatever the value holds there (a string is not
    indexed)."""
    compiled = compile_pointer(pointer)
    value = {**DOC, "marked": _Marked({"0": "zero", "k": [1, 2]})}
    assert compiled.reader() is fixed_reader(compiled.fixed_steps())
    assert compiled.reader()(value) == compiled._walk(value, None)
    assert [m.value for m in compiled.find(value, None)] == compiled.reader()(value)


def test_a_pointer_with_placeholders_is_read_by_the_general_walk():
    compiled = compile_pointer("/items/{item@index}/sku")
    assert compiled.reader() == compiled._walk


def test_pointer_escapes():
    value = {"a/b": {"c~d": 1}}
    [match] = compile_pointer("/a~1b/c~0d").find(value, fill_from({}))
    assert (match.value, match.location) == (1, "$['a/b']['c~d']")


def test_pointer_filter_picks_the_first_matching_element():
    value = [{"k": "x", "v": 1}, {"k": "x", "v": 2}]
    [match] = compile_pointer("/[k=x]/v").find(value, fill_from({}), "$.list")
    assert (match.value, match.location) == (1, "$.list[0].v")


@pytest.mark.parametrize("source, message", [
    ("items/0", "a pointer starts with '/'"),
    ("/items/{x", "unbalanced braces in template '{x'"),
    ("/items/x}", "unbalanced braces in template 'x}'"),
])
def test_pointer_syntax_errors(source, message):
    with pytest.raises(PathSyntaxError) as caught:
        compile_pointer(source)
    assert str(caught.value).startswith(message)


def test_template_placeholders_and_render():
    template = compile_template("shelves/{shelf.name}/{doc:$.run}-{ item@index }.json")
    assert template.placeholders == ("shelf.name", "doc:$.run", "item@index")
    assert template.render({"shelf.name": "s0", "doc:$.run": "r1", "item@index": 2}.get) == \
        "shelves/s0/r1-2.json"


# --------------------------------------------------------------------------- references

@pytest.mark.parametrize("source, target, kind, detail", [
    ("doc", "doc", "jsonpath", "$"),
    ("doc:$.a[*]", "doc", "jsonpath", "$.a[*]"),
    ("doc:/a/{x.y}", "doc", "pointer", ("x.y",)),
    ("doc:@sha256", "doc", "metadata", "sha256"),
    ("doc:@path", "doc", "metadata", "path"),
    ("doc:@size", "doc", "metadata", "size"),
    ("it:@index", "it", "metadata", "index"),
    ("it:@label", "it", "metadata", "label"),
    ("constants:/m/[k={it.k}]/v", "constants", "pointer", ("it.k",)),
])
def test_compile_ref(source, target, kind, detail):
    ref = compile_ref(source)
    assert ref.target == target
    if kind == "jsonpath":
        assert ref.jsonpath.source == detail and ref.pointer is None and ref.metadata is None
    elif kind == "pointer":
        assert ref.placeholders == detail and ref.jsonpath is None
    else:
        assert ref.metadata == detail and ref.jsonpath is None and ref.pointer is None


@pytest.mark.parametrize("source, message", [
    ("doc:a.b", "a selector starts with '$' (JSONPath), '/' (pointer) or '@'"),
    ("doc:@md5", "unknown metadata '@md5' in 'doc:@md5'"),
    ("1doc:$", "a reference looks like 'document:$.path'"),
    ("doc.x:$", "a reference looks like 'document:$.path'"),
    (5, "a reference is a string 'target:selector'"),
])
def test_compile_ref_errors(source, message):
    with pytest.raises(PathSyntaxError) as caught:
        compile_ref(source)
    assert str(caught.value).startswith(message)
