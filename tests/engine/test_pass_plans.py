"""Pass tests (engine/passes.py): rules known to pass skip the reporting path, and every
report is the one the reporting path alone gives (``Evaluation(..., pass_checks=False)``).

A toy spec with a leaf iteration (``event``, the events of each item's stream) exercises
the element form (own binding, ``{event@index}`` pointers into a per-item document,
``event:@index`` metadata, ``requires`` of an enclosing rule) and the scope form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from document_files import compile_text, write_files

from flarespec.engine import evaluate as evaluate_module
from flarespec.engine.evaluate import Evaluation
from flarespec.engine.scopes import scope_label

SPEC = """
flarespec: 1
id: toy/plans
title: each item's stream and its copy agree, event by event
documents:
  index: {loader: json, entry: true}
  stream: {loader: json, each: item, path: "streams/{item.name}.json"}
  copy: {loader: json, each: item, path: "copies/{item.name}.json"}
iterations:
  item: {over: "index:$.items[*]", label: "{item.name}"}
  event: {over: "stream:$.events[*]", parent: item, label: "{item.name}#{event@index}"}
rules:
  - id: toy.item.stream-open
    description: The stream says it is open.
    for_each: item
    given: "stream:$.open"
    assert: {equals: true}
  - id: toy.event.positive
    description: Every event's n is at least 1.
    for_each: event
    given: "event:$.n"
    assert: {range: {min: 1}}
  - id: toy.event.copied
    description: The copy has the event at the same position, with its n and position.
    for_each: event
    requires: [toy.item.stream-open]
    given: "copy:/events/{event@index}"
    assert:
      includes:
        n: {ref: "event:$.n"}
        seq: {ref: "event:@index"}
  - id: toy.event.named
    description: The copy's tag is built from the item name (a template argument).
    for_each: event
    given: "copy:/events/{event@index}/tag"
    assert: {equals: {template: "{item.name}"}}
"""


def compiled(tmp_path: Path):
    return compile_text(tmp_path / "spec", SPEC)


def packet(root: Path, *, events: int = 6, edit=None) -> Path:
    names = ["a", "b"]
    docs = {"index.json": {"items": [{"name": name} for name in names]}}
    for name in names:
        stream = {"open": True, "events": [{"n": i + 1} for i in range(events)]}
        copy = {"events": [{"n": i + 1, "seq": i, "tag": name} for i in range(events)]}
        if edit is not None:
            edit(name, stream, copy)
        docs[f"streams/{name}.json"], docs[f"copies/{name}.json"] = stream, copy
    write_files(root, docs)
    return root / "index.json"


def reports(spec, entry: Path):
    """(with pass tests, reporting path alone), as comparable tuples."""
    def described(report):
        return [(v.rule, v.file, v.location, v.binding, v.message, json.dumps(v.expected),
                 json.dumps(v.actual), v.line) for v in report.violations]
    return (described(Evaluation(spec, entry).run()),
            described(Evaluation(spec, entry, pass_checks=False).run()))


@pytest.fixture
def reporting_calls(monkeypatch):
    """(rule id, label) of every binding that reached the reporting path."""
    calls = []
    original = evaluate_module.Evaluation._apply_once

    def counting(self, rule, scope):
        calls.append((rule.id, scope_label(scope)))
        return original(self, rule, scope)

    monkeypatch.setattr(evaluate_module.Evaluation, "_apply_once", counting)
    return calls


def test_a_passing_packet_never_reaches_the_reporting_path(
        tmp_path, reporting_calls):
    spec = compiled(tmp_path)
    with_plans, alone = reports(spec, packet(tmp_path / "p"))
    assert with_plans == alone == []
    reporting_calls.clear()
    Evaluation(spec, packet(tmp_path / "q")).run()
    assert reporting_calls == []


def test_one_bad_element_is_reported_by_the_reporting_path_alone(tmp_path, reporting_calls):
    def edit(name, stream, copy):
        if name == "b":
            stream["events"][3]["n"] = 0  # positive fails; the copy now differs too
    spec = compiled(tmp_path)
    entry = packet(tmp_path / "p", edit=edit)
    reporting_calls.clear()
    report = Evaluation(spec, entry).run()
    assert reporting_calls == [("toy.event.positive", "b / b#3"),
                               ("toy.event.copied", "b / b#3")]
    assert [(v.rule, v.file, v.location, v.binding) for v in report.violations] == [
        ("toy.event.positive", "streams/b.json", "$.events[3].n", "b / b#3"),
        ("toy.event.copied", "copies/b.json", "$.events[3].n", "b / b#3")]
    with_plans, alone = reports(spec, entry)
    assert with_plans == alone


@pytest.mark.parametrize("edit", [
    lambda name, stream, copy: copy["events"].pop(),  # a copy event missing: nothing there
    lambda name, stream, copy: copy["events"][2].update(seq=7),  # the position differs
    lambda name, stream, copy: copy["events"][2].update(tag="zz"),  # the template differs
    lambda name, stream, copy: stream.update(open=False),  # required rule fails: skipped
    lambda name, stream, copy: stream["events"].append("not an object"),
    lambda name, stream, copy: stream.update(events={"x": {"n": 5}}),  # an object: its members
], ids=["copy-short", "seq", "tag", "requires", "not-object", "events-object"])
def test_pass_tests_and_the_reporting_path_agree(tmp_path, edit):
    spec = compiled(tmp_path)
    with_plans, alone = reports(spec, packet(tmp_path / "p", edit=edit))
    assert with_plans and with_plans == alone


def test_a_missing_document_is_reported_where_the_reporting_path_reports_it(tmp_path):
    """An element pass looks a document up once per parent, lazily, so a document that
    fails to load is reported at the same point of the run (and only once)."""
    spec = compiled(tmp_path)
    entry = packet(tmp_path / "p")
    (tmp_path / "p" / "copies" / "a.json").unlink()
    with_plans, alone = reports(spec, entry)
    assert with_plans == alone
    assert [row[0] for row in with_plans] == ["document.copy.missing"]


def test_a_rule_with_a_template_argument_is_tested_in_the_scope_form_only(tmp_path):
    spec = compiled(tmp_path)
    rules = {rule.id: rule for rule in spec.rules}
    passes = Evaluation(spec, packet(tmp_path / "p"))._passes
    assert not passes.element_form(rules["toy.event.named"])
    assert passes.alone(rules["toy.event.named"]) is not None
    assert passes.element_form(rules["toy.event.copied"])


REQUIRING = SPEC + """
  - id: toy.item.copy-length
    description: The copy has the stream's six events (checked on an open stream).
    for_each: item
    requires: [toy.item.stream-open]
    given: "copy:$.events"
    assert: {length: {equals: 6}}
"""


def test_a_rule_that_requires_runs_in_a_pass_and_is_skipped_where_it_would_be_alone(
        tmp_path, reporting_calls):
    """A rule requiring another runs in its iteration's pass: per binding in the scope form,
    per parent in the element form (what it requires encloses it); where the required rule
    failed it is skipped, never reported and never sent to the reporting path, and where
    it held it is checked: the reports are the reporting path's alone."""
    spec = compile_text(tmp_path / "spec", REQUIRING)
    evaluation = Evaluation(spec, packet(tmp_path / "p"))
    numbers = {rule.id: number for number, rule in enumerate(spec.rules)}
    groups = evaluation._passes.groups(range(len(spec.rules)))
    assert numbers["toy.event.copied"] in groups and groups[numbers["toy.event.copied"]].element
    assert numbers["toy.item.copy-length"] in groups
    assert not groups[numbers["toy.item.copy-length"]].element

    def edit(name, stream, copy):
        copy["events"].pop()  # both copies short: copied's last event, copy-length fail
        copy["events"][1]["seq"] = 9
        stream["open"] = name == "b"  # a's stream-open fails: a's copies are not checked
    entry = packet(tmp_path / "q", edit=edit)
    with_plans, alone = reports(spec, entry)
    assert with_plans == alone
    assert [(rule, binding) for rule, _, _, binding, *_ in with_plans] == [
        ("toy.item.stream-open", "a"),
        ("toy.event.copied", "b / b#1"), ("toy.event.copied", "b / b#5"),
        ("toy.event.named", "a / a#5"), ("toy.event.named", "b / b#5"),
        ("toy.item.copy-length", "b")]
    reporting_calls.clear()
    Evaluation(spec, entry).run()
    assert sorted(call for call in reporting_calls if call[0] != "toy.event.named") == [
        ("toy.event.copied", "b / b#1"), ("toy.event.copied", "b / b#5"),
        ("toy.item.copy-length", "b"), ("toy.item.stream-open", "a")]


WHEN = SPEC + """
  - id: toy.item.copy-when-open
    description: An open stream's copy has six events (the when read in the pass).
    for_each: item
    when: {given: "stream:$.open", equals: true}
    given: "copy:$.events"
    assert: {length: {equals: 6}}
"""


@pytest.mark.parametrize("open_a", [True, False, "yes", None], ids=repr)
def test_a_when_is_decided_in_the_pass_as_holds_decides_it(tmp_path, monkeypatch, open_a):
    """A rule's ``when`` is its condition's verdict on values read in the pass (never the
    engine's ``holds`` on the way to a pass): false or not there, the rule holds; true, it
    is tested; the reports are the reporting path's alone."""
    spec = compile_text(tmp_path / "spec", WHEN)

    def edit(name, stream, copy):
        copy["events"].pop()  # both copies short: copy-when-open fails where it is tested
        if name == "a":
            if open_a is None:
                del stream["open"]
            else:
                stream["open"] = open_a
    entry = packet(tmp_path / "p", edit=edit)
    with_plans, alone = reports(spec, entry)
    assert with_plans == alone
    tested = {binding for rule, _, _, binding, *_ in with_plans
              if rule == "toy.item.copy-when-open"}
    assert tested == ({"a", "b"} if open_a is True else {"b"})
    asked = []
    original = evaluate_module.Evaluation.holds
    monkeypatch.setattr(evaluate_module.Evaluation, "holds",
                        lambda self, condition, scope: asked.append(condition) or
                        original(self, condition, scope))
    Evaluation(spec, packet(tmp_path / "q")).run()
    assert asked == []
