"""JSONPath (fast path and jsonpath-ng fallback), pointer templates, references, locations."""

from __future__ import annotations

import json
import textwrap

import pytest
from jsonpath_ng.ext import parse

from flarespec.engine.evaluate import evaluate
from flarespec.engine.paths import (
    CompiledJsonPath,
    PathSyntaxError,
    child_location,
    compile_pointer,
    compile_template,
)
from flarespec.engine.refs import compile_ref
from flarespec.spec.compile import compile_spec
from flarespec.spec.load import SpecLibrary
from flarespec.spec.resolve import resolve

DOC = {
    "items": [{"sku": "a", "count": 1}, {"sku": "b", "count": 2}, {"sku": "c", "count": 0}],
    "counts": {"a": 1, "b": 2, "x.y": 3, "it's": 4},
    "n": 5,
}


def found(path: CompiledJsonPath, value=DOC, base="$"):
    return [(m.value, m.location) for m in path.find(value, base)]


def library_only(source: str) -> CompiledJsonPath:
    """The same path, forced through jsonpath-ng's own ``find``."""
    path = CompiledJsonPath(source)
    path._steps, path._library_path = None, parse(source)
    return path


# --------------------------------------------------------------------------- JSONPath

PLAIN = ["$", "$.n", "$.items", "$.items[*]", "$.items[*].sku", "$.items.*.sku", "$.items[:]",
         "$.items[0]", "$.items[2].count", "$.items[5]", "$.counts.*", "$.counts[*]",
         "$.counts['x.y']", "$.counts.a.b", "$.n[*]", "$.n[0]", "$.items[*][*]", "$.missing.x",
         "$.items[1:].sku", "$.items[1:-1]", "$.items[-1:]", "$.items[::2].sku", "$.items[::-1]",
         "$.items[5:9]", "$.counts[1:]", "$.n[0:1]", "$.items[:-1][*]"]


@pytest.mark.parametrize("source", PLAIN)
def test_plain_paths_take_the_fast_path(source):
    assert CompiledJsonPath(source)._steps is not None


@pytest.mark.parametrize("source", PLAIN)
def test_fast_path_agrees_with_jsonpath_ng(source):
    assert found(CompiledJsonPath(source)) == found(library_only(source))


@pytest.mark.parametrize("source", ["$.items[?(@.count > 0)].sku", "$.items[?count > 0].sku",
                                    "$.items[0,1].sku", "$..sku", "$.items[::0]",
                                    "$.counts[a,b]"])
def test_other_paths_fall_back_to_jsonpath_ng(source):
    assert CompiledJsonPath(source)._steps is None


@pytest.mark.parametrize("source, expected", [
    ("$.items[*].sku", [("a", "$.items[0].sku"), ("b", "$.items[1].sku"),
                        ("c", "$.items[2].sku")]),
    ("$.items[?(@.count > 0)].sku", [("a", "$.items[0].sku"), ("b", "$.items[1].sku")]),
    ("$.items[?count > 0].sku", [("a", "$.items[0].sku"), ("b", "$.items[1].sku")]),
    ("$.items[0,2].sku", [("a", "$.items[0].sku"), ("c", "$.items[2].sku")]),
    ("$..sku", [("a", "$.items[0].sku"), ("b", "$.items[1].sku"), ("c", "$.items[2].sku")]),
    ("$.items[1:].count", [(2, "$.items[1].count"), (0, "$.items[2].count")]),
    ("$.items[-1:].sku", [("c", "$.items[2].sku")]),
    ("$.counts[a,b]", [(1, "$.counts.a"), (2, "$.counts.b")]),
    ("$.counts.*", [(1, "$.counts.a"), (2, "$.counts.b"), (3, "$.counts['x.y']"),
                    (4, "$.counts['it\\'s']")]),
    ("$.items[-1].sku", [("c", "$.items[2].sku")]),  # fast path: normalised index
])
def test_matches_and_normalised_locations(source, expected):
    assert found(CompiledJsonPath(source)) == expected


def test_base_location_is_prefixed():
    assert found(CompiledJsonPath("$.sku"), DOC["items"][1], "$.items[1]") == [
        ("b", "$.items[1].sku")]
    assert found(CompiledJsonPath("$[?(@ > 1)]"), [1, 2, 3], "$.v") == [
        (2, "$.v[1]"), (3, "$.v[2]")]


def test_fallback_normalises_negative_indices():
    assert found(CompiledJsonPath("$.items[-1,0].sku")) == [
        ("c", "$.items[2].sku"), ("a", "$.items[0].sku")]


@pytest.mark.parametrize("source", ["$.items[", "$.items[?", "$..", "$.a b", "$[?(@.a ==)]"])
def test_jsonpath_syntax_errors(source):
    with pytest.raises(PathSyntaxError, match="invalid JSONPath"):
        CompiledJsonPath(source)


def test_fast_path_and_fallback_give_the_same_violations_through_the_engine(tmp_path):
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
    assert [rule.given.jsonpath._steps is None for rule in spec.rules] == [False, True, True, True]
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


def test_long_paths_do_not_recurse():
    # jsonpath-ng nests one Child node per segment: walking it recursively hit the limit
    deep = value = {}
    for _ in range(3000):
        value["a"] = {}
        value = value["a"]
    value["x"] = 1
    [match] = CompiledJsonPath("$" + ".a" * 3000 + ".x").find(deep)
    assert match.value == 1
    with pytest.raises(ValueError, match="is nested too deeply to apply"):
        CompiledJsonPath("$" + ".a" * 3000 + "[?x==1]").find(deep)


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
