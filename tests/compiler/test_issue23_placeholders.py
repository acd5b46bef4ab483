"""Issue 23 item 3 (and issue 26's "placeholders have no parsed form"): a placeholder is
parsed once (engine/placeholders.py) into its binding name, member path and meta, and one
the engine cannot run as written is refused at load, where it stands, naming the forms.

``{item.nothing@index}`` and ``{item.sku.deeper@index}`` used to lint clean and read
``{item@index}`` (the member ignored: a PASS), ``{item.nothing@bogus}`` linted clean and was
``internal error … KeyError`` per binding."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest
from cli_run import run

from flarespec.engine.evaluate import evaluate
from flarespec.engine.paths import PathSyntaxError, compile_pointer, compile_template
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import open_compiled

SPEC = """\
flarespec: 1
id: toy/issue23
title: Issue 23 placeholders
shapes:
  doc:
    type: object
    members:
      items: {type: array, items: {type: object, members: {sku: string, count: integer}}}
documents:
  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}
iterations:
  item: {over: "doc:$.items[*]"}
rules:
  - id: toy.item.count
    description: Each item's count is positive.
    for_each: item
    given: "doc:/items/%s/count"
    assert: {range: {min: 1}}
    message: "%s"
"""  # the given is line 17, the message line 19 (both at column 5)
DOC = {"items": [{"sku": "a", "count": 1}, {"sku": "b", "count": 0}]}


def spec_file(tmp_path: Path, placeholder: str, message: str = "{detail}") -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC % (placeholder, message))
    return path


# ------------------------------------------------------------------ the grammar

@pytest.mark.parametrize("inner, name, members, meta, reference", [
    ("item", "item", (), None, False),
    (" item.sku ", "item", ("sku",), None, False),
    ("item.a.0.b", "item", ("a", "0", "b"), None, False),
    ("item@index", "item", (), "index", False),
    ("item@label", "item", (), "label", False),
    ("doc:$.items[0].sku", None, (), None, True),
])
def test_a_placeholder_is_parsed_into_its_parts(inner, name, members, meta, reference):
    from flarespec.engine.placeholders import parse_placeholder

    placeholder = parse_placeholder(inner)
    assert (placeholder.name, placeholder.members, placeholder.meta, placeholder.reference) == \
        (name, members, meta, reference)
    assert placeholder == inner.strip() and placeholder.text == inner.strip()


@pytest.mark.parametrize("inner, why", [
    ("item.nothing@index", "@index reads the element of 'item', not a member of it"),
    ("item.sku.deeper@label", "@label reads the element of 'item', not a member of it"),
    ("item..sku", "a member name is empty"),
    ("item.", "a member name is empty"),
    (" ", "it names nothing"),
    ("0", "'0' is not a name"),
    ("it-em", "'it-em' is not a name"),
])
def test_a_placeholder_of_no_form_is_refused_naming_the_forms(inner, why):
    from flarespec.engine.placeholders import FORMS, UnknownMetadata, parse_placeholder

    with pytest.raises(PathSyntaxError) as caught:
        parse_placeholder(inner)
    assert not isinstance(caught.value, UnknownMetadata)
    assert str(caught.value).startswith(f"placeholder {{{inner.strip()}}}: {why}")
    assert str(caught.value).endswith("; the forms are " + ", ".join(FORMS))


@pytest.mark.parametrize("inner, meta", [("item.nothing@bogus", "bogus"), ("item@idx", "idx"),
                                         ("item@index.x", "index.x"), ("item@", "")])
def test_an_unknown_meta_is_its_own_error(inner, meta):
    from flarespec.engine.placeholders import UnknownMetadata, parse_placeholder

    with pytest.raises(UnknownMetadata) as caught:
        parse_placeholder(inner)
    assert caught.value.meta == meta
    assert str(caught.value) == (f"placeholder {{{inner}}}: an iteration has no @{meta}; "
                                 f"known: @index, @label")


def test_templates_and_pointers_hold_parsed_placeholders_that_survive_the_cache():
    """A compiled spec is pickled into the cache (compiler/cache.py): the parts come back."""
    pointer = pickle.loads(pickle.dumps(compile_pointer("/a/{item.x.y}/[k={it@index}]/{d:$.a}")))
    assert [(p.name, p.members, p.meta, p.reference) for p in pointer.placeholders] == [
        ("item", ("x", "y"), None, False), ("it", (), "index", False), (None, (), None, True)]
    template = compile_template("x{a}{a}x")
    assert template.parts == ("x", "a", "a", "x") and len(template.placeholders) == 2
    with pytest.raises(PathSyntaxError, match="not a member of it"):
        compile_template("s{item.sku@index}.json")


def test_no_reader_splits_a_placeholder_by_hand():
    """The seven hand splits of issue 26 are gone: only engine/placeholders.py reads a
    placeholder's text."""
    source = Path(__file__).parents[2] / "src" / "flarespec"
    splits = re.compile(r"""(partition|split)\(\s*["']@["']|endswith\(\s*["']@index""")
    offenders = [str(path.relative_to(source)) for path in source.rglob("*.py")
                 if path.name != "placeholders.py" or path.parent.name != "engine"
                 if splits.search(path.read_text())]
    assert offenders == []


# ------------------------------------------------------------------ at load and in lint

@pytest.mark.parametrize("placeholder, code, says", [
    ("{item.nothing@index}", "spec.path-syntax", "@index reads the element of 'item'"),
    ("{item.sku.deeper@index}", "spec.path-syntax", "@index reads the element of 'item'"),
    ("{item.nothing@bogus}", "spec.unknown-metadata", "an iteration has no @bogus"),
    ("{item@index.x}", "spec.unknown-metadata", "an iteration has no @index.x"),
])
def test_lint_refuses_a_placeholder_the_engine_cannot_run(tmp_path, placeholder, code, says):
    path = spec_file(tmp_path, placeholder)
    result = run("spec", "lint", path)
    assert result.exit_code == 2, result.output
    [line] = [line for line in result.output.splitlines() if f"[{code}]" in line]
    assert line.startswith(f"{path}:17:5: placeholder {placeholder}: {says}")
    with pytest.raises(SpecInvalid) as caught:
        open_compiled(path)
    assert [issue.code for issue in caught.value.issues] == [code]


def test_a_meta_on_a_message_field_is_refused(tmp_path):
    path = spec_file(tmp_path, "{item@index}", "{detail@index} at {item@index}")
    result = run("spec", "lint", path)
    assert result.exit_code == 2
    assert f"{path}:19:5: placeholder {{detail@index}}: 'detail' is a message field, not an " \
           f"iteration, so it has no @index [spec.unknown-metadata]" in result.output


def test_the_forms_that_exist_run(tmp_path):
    """The control: ``{item@index}`` reads the element's position, a message reads members
    and metadata (the second item's count is 0)."""
    spec = open_compiled(spec_file(tmp_path, "{item@index}",
                                   "{item.sku} ({item@label}, #{item@index}): {actual}"))
    (tmp_path / "packet").mkdir()
    (tmp_path / "packet" / "doc.json").write_text(json.dumps(DOC))
    report = evaluate(spec, tmp_path / "packet" / "doc.json")
    assert [(v.rule, v.location, v.message) for v in report.violations] == [
        ("toy.item.count", "$.items[1].count", "b ($.items[1], #1): 0")]
