"""Issue 26, "placeholders parsed once": a ``{…}`` is one immutable, typed value
(``engine/placeholders.Placeholder``: name, member path, meta, or a reference) made by the
one parser when its template is compiled, and read through it by every reader (the run-time
filler, the fixture writer, lint). What the engine cannot run is refused at load and by
``spec lint``, at file:line:column with its code, wherever the placeholder stands.

The issue's two defects: ``{file.nothing@bogus}`` linted clean and then was
``engine.internal-error … KeyError`` for every binding; ``{file.nothing@index}`` silently
read ``{file@index}``."""

from __future__ import annotations

import pickle
import re
import textwrap
from pathlib import Path

import pytest
import yaml
from cli_run import run

from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import bundled_compiled, open_compiled
from flarespec.engine import placeholders as grammar
from flarespec.engine.paths import PathSyntaxError, compile_template
from flarespec.engine.placeholders import NOT_KNOWN, Placeholder, parse_placeholder

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------ the value


def test_a_placeholder_is_immutable_and_keeps_its_parts_through_pickle(monkeypatch):
    placeholder = parse_placeholder(" file.a.0 ")
    for attribute in ("name", "members", "meta", "other"):
        with pytest.raises(AttributeError, match="immutable"):
            setattr(placeholder, attribute, "x")
    with pytest.raises(AttributeError, match="immutable"):
        del placeholder.name
    # the compiled spec's cache holds it as its parts: reading the cache parses nothing
    monkeypatch.setattr(grammar, "parse_placeholder", None)
    again = pickle.loads(pickle.dumps(placeholder))
    assert type(again) is Placeholder and again == "file.a.0" and again.text == "file.a.0"
    assert (again.name, again.members, again.meta) == ("file", ("a", "0"), None)
    assert {again: 1}["file.a.0"] == 1  # a filler keyed by the text finds it


def test_a_jsonpath_template_keeps_its_placeholders_through_pickle(monkeypatch):
    """Reading the cache parses neither the placeholders nor the probe path again."""
    from flarespec.engine import path_templates

    template = path_templates.JsonPathTemplate("$.records.{metric}.{stat.name}")
    monkeypatch.setattr(path_templates, "parse_placeholder", None)
    monkeypatch.setattr(path_templates, "CompiledJsonPath", None)
    again = pickle.loads(pickle.dumps(template))
    assert [(p.name, p.members) for p in again.placeholders] == [
        ("metric", ()), ("stat", ("name",))]
    monkeypatch.undo()  # filling compiles the filled path
    records = {"records": {"ttft": {"avg": 3}}}
    filled = {"metric": "ttft", "stat.name": "avg"}
    assert again.compiled(filled.__getitem__).values(records) == [3]


@pytest.mark.parametrize("inner, value, index, label, read", [
    ("file", {"a": 1}, 3, "L", (True, {"a": 1})),
    ("file.a", {"a": 1}, 3, "L", (True, 1)),
    ("file.a.1", {"a": [5, 6]}, 3, "L", (True, 6)),   # a member of digits indexes a list
    ("file.a.2", {"a": [5, 6]}, 3, "L", (False, None)),
    ("file.a.1", {"a": {"1": 7}}, 3, "L", (True, 7)),  # ... and names an object's member
    ("file.b", {"a": 1}, 3, "L", (False, None)),
    ("file@index", {"a": 1}, 3, "L", (True, 3)),
    ("file@label", {"a": 1}, 3, "L", (True, "L")),
])
def test_a_placeholder_reads_what_it_names(inner, value, index, label, read):
    assert parse_placeholder(inner).read(value, index, label) == read


def test_what_a_reader_is_not_told_comes_back_as_not_known():
    """The fixture writer knows an element's index, never its label."""
    assert parse_placeholder("file@label").read({"a": 1}, 0) == (True, NOT_KNOWN)
    assert parse_placeholder("file@index").read({"a": 1}) == (True, NOT_KNOWN)
    assert parse_placeholder("file.a").read({"a": 1}) == (True, 1)


def test_the_grammar_has_one_spelling_per_placeholder():
    for inner in ("file", "file.a.0.b", "file@index", "file@label", "doc:$.a[0]"):
        assert parse_placeholder(inner).written == inner


# ------------------------------------------------------------------ every placeholder in use

def _placeholders_in(value, seen: set) -> list[Placeholder]:
    """Every Placeholder reachable from a compiled spec's objects."""
    found, pending = [], [value]
    while pending:
        value = pending.pop()
        if id(value) in seen or isinstance(value, (int, float, bytes, type(None))) \
                or callable(value) and not hasattr(value, "__dict__"):
            continue
        seen.add(id(value))
        if isinstance(value, Placeholder):
            found.append(value)
        elif isinstance(value, str):
            continue
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            pending.extend(value)
        elif not isinstance(value, type) and value.__class__.__module__.startswith("flarespec"):
            pending.extend(getattr(value, "__dict__", {}).values())
            for slot in getattr(type(value), "__slots__", ()):
                if hasattr(value, slot):
                    pending.append(getattr(value, slot))
    return found


def _round_trips(placeholder: Placeholder) -> None:
    again = parse_placeholder(placeholder.written)
    assert placeholder.written == placeholder.text, placeholder
    assert (again.name, again.members, again.meta, again.reference) == \
        (placeholder.name, placeholder.members, placeholder.meta, placeholder.reference)


def test_every_placeholder_of_the_bundled_specs_is_parsed_at_compile_time_and_round_trips():
    seen: set = set()
    found = [p for spec in bundled_compiled() for p in _placeholders_in(spec, seen)]
    assert len(found) > 50  # the bundled specs use placeholders throughout
    forms = {(p.reference, bool(p.members), p.meta) for p in found}
    assert {(False, True, None), (False, False, "index"), (True, False, None)} <= forms
    for placeholder in found:
        _round_trips(placeholder)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _documented_yaml() -> list:
    texts = [path.read_text() for path in sorted((ROOT / "docs" / "examples").rglob("*.yaml"))]
    for page in sorted((ROOT / "docs").glob("*.md")):
        texts += [textwrap.dedent(block) for block in re.findall(
            r"^ *```yaml\n(.*?)^ *```$", page.read_text(), re.S | re.M)]
    loaded = []
    for text in texts:
        try:
            loaded.append(yaml.safe_load(text))
        except yaml.YAMLError:
            continue  # a fragment (an excerpt with "…"): not a spec
    return loaded


def test_every_placeholder_the_docs_examples_use_round_trips():
    """Every template of a YAML example in docs/ and docs/examples/ that compiles: its
    placeholders are written back as they were (the docs' negative examples do not compile
    and are left out)."""
    found = []
    for document in _documented_yaml():
        for text in _strings(document):
            if "{" not in text or "${" in text:
                continue
            try:
                found.extend(compile_template(text).placeholders)
            except PathSyntaxError:
                continue
    assert len(found) > 30
    for placeholder in found:
        _round_trips(placeholder)


# ------------------------------------------------------------------ refused where they stand

SPEC = """\
flarespec: 1
id: toy/issue26-placeholders
title: Placeholders the engine cannot run
shapes:
  doc:
    type: object
    members:
      files: {type: array, items: {type: object, members: {name: string, size: integer}}}
      sizes: {type: object, members: {a: integer}}
  side: {type: object, members: {x: integer}}
documents:
  doc: {loader: json, entry: true, rule: toy.doc, shape: doc}
  side: {loader: json, path: "side-{file.name}-%(path)s.json", each: file, shape: side}
iterations:
  file: {over: "doc:$.files[*]"}
rules:
  - id: toy.file.size
    description: Each file's size is positive.
    for_each: file
    given: "doc:/files/%(pointer)s/size"
    assert: {range: {min: 1}}
    message: "%(message)s"
  - id: toy.file.named
    description: A member named by a binding.
    for_each: file
    given: "doc:$.sizes.%(jsonpath)s"
    assert: {range: {min: 1}}
"""
FINE = {"path": "x", "pointer": "{file@index}", "message": "{file.name}: {detail}",
        "jsonpath": "{file.name}"}
# where each site's placeholder stands: (line, column) of its key's value
SITES = {"path": (13, 24), "pointer": (20, 5), "message": (22, 5), "jsonpath": (26, 5)}
DEFECTS = [
    ("{file.nothing@bogus}", "spec.unknown-metadata",
     "placeholder {file.nothing@bogus}: an iteration has no @bogus"),
    ("{file.nothing@index}", "spec.path-syntax",
     "placeholder {file.nothing@index}: @index reads the element of 'file', not a member of it"),
]


def _spec(tmp_path: Path, **sites) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC % {**FINE, **sites})
    return path


def test_the_control_spec_lints_clean(tmp_path):
    path = _spec(tmp_path)
    result = run("spec", "lint", path)
    assert result.exit_code == 0, result.output
    open_compiled(path)


@pytest.mark.parametrize("site", sorted(SITES))
@pytest.mark.parametrize("placeholder, code, says", DEFECTS)
def test_a_placeholder_the_engine_cannot_run_is_refused_where_it_stands(
        tmp_path, site, placeholder, code, says):
    """In a document's path, a pointer segment, a message and a JSONPath name: lint says
    where with the code, and the spec does not load (no packet is checked with it)."""
    path = _spec(tmp_path, **{site: placeholder})
    result = run("spec", "lint", path)
    assert result.exit_code == 2, result.output
    line, column = SITES[site]
    errors = [text for text in result.output.splitlines() if text.startswith(f"{path}:")
              and ": warning: " not in text]
    assert len(errors) == 1 and errors[0].startswith(f"{path}:{line}:{column}: {says}"), \
        result.output
    assert errors[0].endswith(f"[{code}]")
    with pytest.raises(SpecInvalid) as caught:
        open_compiled(path)
    assert [issue.code for issue in caught.value.issues] == [code]


def test_a_pointer_filter_value_is_refused_too(tmp_path):
    path = _spec(tmp_path, pointer="[name={file.nothing@index}]")
    result = run("spec", "lint", path)
    assert result.exit_code == 2
    assert f"{path}:20:5: placeholder {{file.nothing@index}}: @index reads the element" \
        in result.output and "[spec.path-syntax]" in result.output


# ------------------------------------------------------------------ one reader

def test_no_reader_but_the_grammar_interprets_a_member_path():
    """A placeholder's member path is walked by ``Placeholder.read``/``member_of`` alone
    (the rule "a member of digits indexes a list" lives in one place)."""
    source = ROOT / "src" / "flarespec"
    walks = re.compile(r"member_at\([^)]*\.members\b")
    offenders = [str(path.relative_to(source)) for path in source.rglob("*.py")
                 if path != source / "engine" / "placeholders.py"
                 if walks.search(path.read_text())]
    assert offenders == []
