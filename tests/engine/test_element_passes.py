"""Element passes (engine/passes.py) and fixed readers (engine/readers.py).

An element pass tests all the rules over a leaf iteration in one generated loop per parent,
the element's fixed selections read inline (each prefix once): the report with it is the
report with the scope form alone (each binding made and tested) and the report of the
reporting path alone. A fixed reader must select what the one walker selects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from document_files import compile_text, write_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flarespec.engine import passes
from flarespec.engine.evaluate import Evaluation
from flarespec.engine.jsonpath import CompiledJsonPath
from flarespec.engine.paths import compile_pointer
from flarespec.engine.readers import MAX_GENERATED_STEPS, fixed_reader

SPEC = """
flarespec: 1
id: toy/loops
title: each item's stream, its copy and its tags, event by event
documents:
  index: {loader: json, entry: true}
  stream: {loader: json, each: item, path: "streams/{item.name}.json"}
  copy: {loader: json, each: item, path: "copies/{item.name}.json"}
iterations:
  item: {over: "index:$.items[*]", label: "{item.name}"}
  event: {over: "stream:$.events[*]", parent: item, label: "{item.name}#{event@index}"}
rules:
  - id: toy.event.positive
    description: Every event's n is at least 1 (a JSONPath of one name).
    for_each: event
    given: "event:$.n"
    assert: {range: {min: 1}}
  - id: toy.event.kind
    description: An event's first part, when it has one, is a string (optional).
    for_each: event
    optional: true
    given: "event:/parts/0/kind"
    assert: {type: string}
  - id: toy.event.copied
    description: The copy has the event at the same position, with its n, parts and position.
    for_each: event
    given: "copy:/events/{event@index}"
    assert:
      includes:
        n: {ref: "event:$.n"}
        seq: {ref: "event:@index"}
        kind: {ref: "event:/parts/0/kind", default: null}
        size: {ref: "event:/parts/0/size", default: 0}
  - id: toy.event.listed
    description: Every event's parts, all of them, are a list of at most three.
    for_each: event
    given: "event:$.parts"
    assert: {length: {max: 3}}
"""

ELEMENT_FORM = ["toy.event.positive", "toy.event.kind", "toy.event.copied", "toy.event.listed"]


def compiled(tmp_path: Path):
    return compile_text(tmp_path / "spec", SPEC)


def _SPEC(factory, _made=[]):  # noqa: B006 - compiled once for all generated examples
    if not _made:
        _made.append(compiled(factory.mktemp("spec")))
    return _made[0]


def packet(root: Path, events: list, copies: dict) -> Path:
    names = ["a", "b"]
    docs = {"index.json": {"items": [{"name": name} for name in names]}}
    for name in names:
        docs[f"streams/{name}.json"] = {"events": events}
        docs[f"copies/{name}.json"] = copies.get(name, {"events": _copied(events)})
    write_files(root, docs)
    return root / "index.json"


def _copied(events: list) -> list:
    copied = []
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            copied.append(event)
            continue
        parts = event.get("parts")
        first = parts[0] if isinstance(parts, list) and parts and isinstance(parts[0], dict) else {}
        copied.append({"n": event.get("n"), "seq": index, "kind": first.get("kind"),
                       "size": first.get("size", 0)})
    return copied


def _described(report) -> list:
    return [(v.rule, v.file, v.location, v.binding, v.message, json.dumps(v.expected),
             json.dumps(v.actual), v.line) for v in report.violations]


def three_reports(spec, entry: Path, monkeypatch) -> tuple[list, list, list]:
    """(with the element form, with the scope form alone, the reporting path alone)."""
    with_elements = _described(Evaluation(spec, entry).run())
    with monkeypatch.context() as patch:
        patch.setattr(passes.Passes, "element_form", lambda self, rule: False)
        scopes_only = _described(Evaluation(spec, entry).run())
    alone = _described(Evaluation(spec, entry, pass_checks=False).run())
    return with_elements, scopes_only, alone


def test_every_toy_rule_is_tested_in_the_element_form(tmp_path):
    spec = compiled(tmp_path)
    evaluation = Evaluation(spec, packet(tmp_path / "p", [{"n": 1}], {}))
    assert [rule.id for rule in spec.rules if evaluation._passes.element_form(rule)] == \
        ELEMENT_FORM
    group, = set(evaluation._passes.groups(range(len(spec.rules))).values())
    assert group.element and group.numbers == (0, 1, 2, 3)
    # /parts/0/kind read once for toy.event.kind and toy.event.copied: parts, 0, kind, size,
    # n; the copy's /events/{event@index}: events (once per item), the element's index
    assert group.steps == 7


def test_a_rule_with_a_when_or_a_template_is_tested_in_the_scope_form(tmp_path):
    text = SPEC.replace('    given: "event:$.n"\n    assert: {range: {min: 1}}',
                        '    when: {given: "event:$.n", type: integer}\n'
                        '    given: "event:$.n"\n    assert: {range: {min: 1}}')
    spec = compile_text(tmp_path / "spec", text)
    evaluation = Evaluation(spec, packet(tmp_path / "p", [{"n": 1}], {}))
    rules = {rule.id: rule for rule in spec.rules}
    assert not evaluation._passes.element_form(rules["toy.event.positive"])
    assert evaluation._passes.alone(rules["toy.event.positive"]) is not None


@pytest.mark.parametrize("steps, inline", [(MAX_GENERATED_STEPS, True),
                                           (MAX_GENERATED_STEPS + 1, False)])
def test_a_selection_of_more_steps_than_one_generated_function_reads_is_read_by_its_accessor(
        tmp_path, steps, inline):
    """The code generator's bound (readers.MAX_GENERATED_STEPS) holds for passes: a
    reference of more literal steps is read through its accessor, not inline."""
    pointer = "/".join(["/parts"] + ["0"] * (steps - 1))
    text = SPEC.replace('given: "event:/parts/0/kind"', f'given: "event:{pointer}"')
    spec = compile_text(tmp_path / "spec", text)
    evaluation = Evaluation(spec, packet(tmp_path / "p", [{"n": 1}], {}))
    rule = {rule.id: rule for rule in spec.rules}["toy.event.kind"]
    group = evaluation._passes.alone(rule, element=True)
    assert group.steps == (steps if inline else 0)


def test_a_clean_packet_passes_every_way(tmp_path, monkeypatch):
    events = [{"n": i + 1, "parts": [{"kind": "k", "size": i}]} for i in range(5)]
    spec = compiled(tmp_path)
    assert three_reports(spec, packet(tmp_path / "p", events, {}), monkeypatch) == ([], [], [])


_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.sampled_from(["", "k"]),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["n", "parts", "kind", "size", "0"]), inner, max_size=3),
                     max_leaves=8)
_part = st.fixed_dictionaries({}, optional={"kind": _json, "size": _json}) | _json
_event = st.fixed_dictionaries({}, optional={"n": st.integers(-1, 3) | _json,
                                             "parts": st.lists(_part, max_size=4) | _json}) | _json


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(events=st.lists(_event, max_size=5), copy_edit=st.sampled_from(
    ["none", "short", "object", "shifted", "not-a-list"]))
def test_element_and_scope_forms_and_the_reporting_path_agree(tmp_path_factory, monkeypatch, events, copy_edit):
    copies = {"events": _copied(events)}
    if copy_edit == "short":
        copies["events"] = copies["events"][:-1]
    elif copy_edit == "object":
        copies["events"] = {str(i): event for i, event in enumerate(copies["events"])}
    elif copy_edit == "shifted":
        copies["events"] = [{"n": 9}] + copies["events"]
    elif copy_edit == "not-a-list":
        copies = {"events": 7}
    root = tmp_path_factory.mktemp("p")
    with_elements, scopes_only, alone = three_reports(_SPEC(tmp_path_factory), packet(
        root / "p", events, {"b": copies}), monkeypatch)
    assert with_elements == scopes_only == alone


# ----------------------------------------------------------------------------- readers

_keys = st.sampled_from(["a", "b", "0", "1", "-1", "01"])
_documents = st.recursive(st.none() | st.integers(0, 2) | st.sampled_from(["", "ab"]),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
                          max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(document=_documents, keys=st.lists(_keys, min_size=1, max_size=4))
def test_a_literal_pointer_reader_is_the_walk(document, keys):
    pointer = compile_pointer("/" + "/".join(keys))
    assert pointer.reader()(document) == pointer._walk(document, None)


@settings(max_examples=400, deadline=None)
@given(document=_documents, steps=st.lists(st.sampled_from(["a", "b", 0, 1, -1, 2]), max_size=4))
def test_a_fixed_jsonpath_reader_is_the_walk(document, steps):
    source = "$" + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps)
    path = CompiledJsonPath(source)
    assert path.fixed_steps() is not None
    assert path.values(document) == [match.value for match in path.find(document)]


def test_a_reader_is_made_once_per_path():
    steps = (("a", None), (None, 0))
    assert fixed_reader(steps) is fixed_reader(list(steps))
    with pytest.raises(TypeError):
        fixed_reader(((None, "0"),))


@settings(max_examples=400, deadline=None)
@given(document=_documents, keys=st.lists(_keys, max_size=3), index=st.integers(-3, 3))
def test_an_indexed_pointer_split_at_its_index_is_the_walk(document, keys, index):
    """``split_at_index``: the literal prefix read once, then the index step, is the walk."""
    pointer = compile_pointer("/" + "".join(f"{key}/" for key in keys) + "{item@index}")
    placeholder, prefix, step = pointer.split_at_index()
    assert placeholder == "item@index"
    found = prefix(document)
    assert (step(found[0], index) if found else []) == pointer._walk(document, lambda _: index)


def test_only_a_literal_pointer_ending_in_one_placeholder_splits():
    assert compile_pointer("/a/{item@index}/b").split_at_index() is None
    assert compile_pointer("/{group@index}/{item@index}").split_at_index() is None
    assert compile_pointer("/a/b").split_at_index() is None
    assert compile_pointer("/a/x{item@index}").split_at_index() is None


TWICE = SPEC + """
  - id: toy.item.ns
    description: Every event's n is an integer (all of them, per item).
    for_each: item
    given: "stream:$.events[*].n"
    assert: {type: integer}
  - id: toy.item.ns-positive
    description: The same selection, another rule (its values read once for both).
    for_each: item
    given: "stream:$.events[*].n"
    assert: {range: {min: 0}}
"""


def test_two_rules_equal_references_share_one_read(tmp_path, monkeypatch):
    """Two rules of one pass whose references are equal (source, pins, metadata) read
    through one accessor, once per binding; the report is the reporting path's."""
    spec = compile_text(tmp_path / "spec", TWICE)
    events = [{"n": 1}, {"n": -1}, {"n": "x"}]
    entry = packet(tmp_path / "p", events, {})
    evaluation = Evaluation(spec, entry)
    numbers = [n for n, rule in enumerate(spec.rules) if rule.for_each == "item"]
    group, = set(evaluation._passes.groups(tuple(numbers)).values())
    assert group.numbers == tuple(numbers)
    read = [accessor for accessor in evaluation.references._accessors.values()
            if accessor.ref.source == "stream:$.events[*].n"]
    assert len(read) == 1
    with_passes = _described(Evaluation(spec, entry).run())
    alone = _described(Evaluation(spec, entry, pass_checks=False).run())
    assert with_passes == alone and {v[0] for v in with_passes} == {
        "toy.item.ns", "toy.item.ns-positive", "toy.event.positive", "toy.event.listed"}


# ------------------------------------------------------------- pointers filled by bindings

FILLED = """
flarespec: 1
id: toy/filled
title: each event's entry in its item's table, found by the event's key
documents:
  index: {loader: json, entry: true}
  stream: {loader: json, each: item, path: "streams/{item.name}.json"}
  table: {loader: json, each: item, path: "tables/{item.name}.json"}
iterations:
  item: {over: "index:$.items[*]", label: "{item.name}"}
  event: {over: "stream:$.events[*]", parent: item, label: "{item.name}#{event@index}"}
rules:
  - id: toy.event.entry
    description: The table's entry for the event's key is at least 1 (element form).
    for_each: event
    given: "table:/rows/{event.key}"
    assert: {range: {min: 1}}
  - id: toy.event.entry-part
    description: The entry's first part by the event's nested key, if there (element form).
    for_each: event
    optional: true
    given: "table:/rows/{event.at.0}/0"
    assert: {type: integer}
  - id: toy.event.entry-when
    description: The same entry, for an event that says so (a when, so the scope form).
    for_each: event
    when: {given: "event:$.check", equals: true}
    given: "table:/rows/{event.key}"
    assert: {range: {min: 1}}
  - id: toy.item.row-of-index
    description: The item's own row, by its index and a member (the scope form, filled twice).
    for_each: item
    optional: true
    given: "table:/by_item/{item@index}/{item.name}"
    assert: {type: integer}
"""

_KEYS = st.sampled_from(["a", "b", "0", "1", "-1", "007", "x"]) | st.integers(-3, 3) | \
    st.booleans() | st.none() | st.floats(-1, 1) | st.lists(st.integers(0, 1), max_size=1)
_ROW = st.integers(-1, 3) | st.lists(st.integers(0, 2) | st.text(max_size=1), max_size=2) | st.none()
_ROWS = st.dictionaries(st.sampled_from(["a", "b", "0", "1", "007", "True", "None", "[0]"]), _ROW,
                        max_size=5) | st.lists(_ROW, max_size=4) | st.just(7)
_FILLED_EVENT = st.fixed_dictionaries({}, optional={
    "key": _KEYS, "at": st.lists(_KEYS, max_size=2) | _KEYS, "check": st.booleans()}) | _KEYS


def _filled_spec(factory, _made=[]):  # noqa: B006 - compiled once for all generated examples
    if not _made:
        _made.append(compile_text(factory.mktemp("spec") / "spec", FILLED))
    return _made[0]


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(events=st.lists(_FILLED_EVENT, max_size=4), rows=_ROWS, by_item=st.just({}) | st.lists(
    st.dictionaries(st.sampled_from(["a", "b"]), _ROW, max_size=2), max_size=2))
def test_a_pointer_filled_by_bindings_is_read_inline_as_the_walk_reads_it(
        tmp_path_factory, monkeypatch, events, rows, by_item):
    """A pointer of literal keys and placeholders of bound elements (an index, a member of
    any type, a member path with a digit) is read by generated steps, the filled value's
    step as PointerTemplate._walk takes it: the reports with the element form, with the
    scope form alone and of the reporting path alone are one."""
    spec = _filled_spec(tmp_path_factory)
    root = tmp_path_factory.mktemp("p")
    docs = {"index.json": {"items": [{"name": "a"}, {"name": "b"}]}}
    for name in ("a", "b"):
        docs[f"streams/{name}.json"] = {"events": events}
        docs[f"tables/{name}.json"] = {"rows": rows, "by_item": by_item}
    write_files(root, docs)
    with_elements, scopes_only, alone = three_reports(spec, root / "index.json", monkeypatch)
    assert with_elements == scopes_only == alone


def test_a_pointer_filled_by_bindings_reads_through_no_accessor(tmp_path):
    """The element and scope forms read ``/rows/{event.key}`` and ``/by_item/{item@index}
    /{item.name}`` inline: no accessor is made for them."""
    spec = compile_text(tmp_path / "spec", FILLED)
    docs = {"index.json": {"items": [{"name": "a"}]}, "streams/a.json": {"events": [
        {"key": "a", "at": ["b"], "check": True}]}, "tables/a.json": {
        "rows": {"a": 1, "b": [2]}, "by_item": [{"a": 5}]}}
    write_files(tmp_path / "p", docs)
    evaluation = Evaluation(spec, tmp_path / "p" / "index.json")
    assert _described(evaluation.run()) == []
    read = {accessor.ref.source for accessor in evaluation.references._accessors.values()}
    assert not read & {"table:/rows/{event.key}", "table:/rows/{event.at.0}/0",
                       "table:/by_item/{item@index}/{item.name}"}


ROWS = [["x"], ["y"], ["z"]]  # every entry fails both element rules: found or not, a report
TABLE = {text: [text] for text in ("1", "True", "None", "[0]", "1.0", "007")}


@pytest.mark.parametrize("rows, key", [
    (ROWS, "-1"), (ROWS, -1), (ROWS, "007"), (ROWS, 2), (ROWS, -4),
    (ROWS, "x"), (ROWS, True), (ROWS, 1.0),
    (TABLE, 1),
    (TABLE, True),
    (TABLE, None),
    (TABLE, [0]),
    (TABLE, 1.0),
    (TABLE, "007"),
    ({"a": ["a"]}, "missing"), (7, "a"),
], ids=lambda value: repr(value)[:12])
def test_each_filled_key_is_read_as_the_walk_reads_it(tmp_path, monkeypatch, rows, key):
    """Every branch of a filled step (an int, a text of a sign and digits, other text, any
    other value by its str; an object's member, a list's element from either end; the
    member not there): the reports of the three ways are one, and not empty (each case
    finds a value that fails, or none)."""
    spec = compile_text(tmp_path / "spec", FILLED)
    event = {"check": True} if key == "missing" else {"key": key, "at": [key], "check": True}
    docs = {"index.json": {"items": [{"name": "a"}]}, "streams/a.json": {"events": [event]},
            "tables/a.json": {"rows": rows, "by_item": [{"a": key}]}}
    write_files(tmp_path / "p", docs)
    with_elements, scopes_only, alone = three_reports(spec, tmp_path / "p" / "index.json",
                                                      monkeypatch)
    assert with_elements == scopes_only == alone
    assert {row[0] for row in with_elements} >= {"toy.event.entry", "toy.event.entry-when"}
