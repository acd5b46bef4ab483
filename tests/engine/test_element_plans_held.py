"""Element passes (engine/passes.py) read what the parent fixes once per parent and
fill pointers from the element's members (``{event.key}``): every report is still the one
the reporting path alone gives, and documents load where they always did."""

from __future__ import annotations

import pytest
from document_files import compile_text, write_files
from test_pass_plans import reporting_calls, reports  # noqa: F401 (a fixture)

from flarespec.engine.documents import DocumentStore
from flarespec.engine.evaluate import Evaluation

SPEC = """
flarespec: 1
id: toy/held
title: events name their entry in a per-item table
documents:
  index: {loader: json, entry: true}
  table: {loader: json, each: item, path: "tables/{item.name}.json"}
iterations:
  item: {over: "index:$.items[*]", label: "{item.name}"}
  event: {over: "index:$.events[*]", parent: item, label: "{item.name}#{event@index}"}
rules:
  - id: toy.event.listed
    description: The item's table has the event's key, with at least the event's size.
    for_each: event
    given: "table:/entries/{event.key}/size"
    assert: {range: {min: {ref: "event:$.size"}}}
  - id: toy.event.limit
    description: No event is larger than the item's limit.
    for_each: event
    given: "event:$.size"
    assert: {range: {max: {ref: "table:$.limit"}}}
"""


def packet(root, edit=None):
    docs = {"index.json": {"items": [{"name": "a"}, {"name": "b"}],
                           "events": [{"key": "x", "size": 1}, {"key": "y", "size": 2}]}}
    for name in ("a", "b"):
        docs[f"tables/{name}.json"] = {"limit": 5, "entries": {"x": {"size": 1},
                                                               "y": {"size": 3}}}
    if edit is not None:
        edit(docs)
    write_files(root, docs)
    return root / "index.json"


@pytest.mark.parametrize("edit", [
    None,
    lambda docs: docs["tables/b.json"]["entries"].pop("y"),
    lambda docs: docs["tables/a.json"].update(limit=1),
    lambda docs: docs["tables/a.json"].update(limit="5"),
    lambda docs: docs["index.json"]["events"].append({"key": 3, "size": 1}),
    lambda docs: docs.pop("tables/a.json"),
], ids=["clean", "missing-entry", "limit", "limit-text", "key-not-text", "no-table"])
def test_member_placeholders_and_held_reads_agree_with_the_reporting_path(tmp_path, edit):
    spec = compile_text(tmp_path / "spec", SPEC)
    with_plans, alone = reports(spec, packet(tmp_path / "p", edit))
    assert with_plans == alone
    assert bool(with_plans) is (edit is not None)


def test_both_rules_are_tested_in_the_element_form_and_a_clean_packet_never_reports(
        tmp_path, reporting_calls):  # noqa: F811
    spec = compile_text(tmp_path / "spec", SPEC)
    evaluation = Evaluation(spec, packet(tmp_path / "p"))
    assert all(evaluation._passes.element_form(rule) for rule in spec.rules)
    evaluation.run()
    assert reporting_calls == []


def test_what_the_parent_fixes_is_read_once_per_parent(tmp_path, monkeypatch):
    spec = compile_text(tmp_path / "spec", SPEC)
    events = 40
    entry = packet(tmp_path / "p", lambda docs: docs["index.json"].update(
        events=[{"key": "x", "size": 1}] * events))
    asked = []
    original = DocumentStore.document

    def document(self, name, scope):
        asked.append(name)
        return original(self, name, scope)

    monkeypatch.setattr(DocumentStore, "document", document)
    assert Evaluation(spec, entry).run().ok
    # per item: once for both rules (one read of its root: both read it inline, the filled
    # pointer /entries/{event.key}/size too), once to be hashed; not per event
    assert asked.count("table") == 2 * 1 + 2
