"""The schedule (engine/schedule.py) and the sink (engine/sink.py): rules run element by
element of the streamed iteration, each element's documents released once its rules are
done, and the report exactly the one a rule-by-rule run gives (``streaming=False``).

Every toy spec here is over the toy inventory (shelves, each with a shelf file of items):
the streamed iteration is ``shelf``."""

from __future__ import annotations

import json
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_evaluate import DOCS, TOY_HEADER, case_spec, write_docs
from test_hooks_registry import toy_hooks  # noqa: F401 (a fixture)

from flarespec.engine.documents import DocumentStore
from flarespec.engine.evaluate import Evaluation
from flarespec.engine.outcome import MAX_KEPT_PER_RULE
from flarespec.engine.schedule import placements, schedule

RULES = """
rules:
  - id: toy.index.schema
    description: The index names its schema.
    given: "index:$.schema"
    assert: {equals: toy-inventory-v1}
  - id: toy.item.colour
    description: Every item has a known colour.
    for_each: item
    given: "item:$.colour"
    assert: {one_of: [red, green, blue]}
  - id: toy.item.count
    description: Stock counts agree with the shelf.
    for_each: item
    given: "stock:/counts/{item.sku}"
    assert: {equals: {ref: "shelf_file:/items/{item@index}/count"}}
  - id: toy.shelf.total
    description: The shelf total adds up.
    for_each: shelf
    given: "shelf_file:$"
    assert: {formula: "sum(items.*.count) == total"}
  - id: toy.shelf.previous
    description: A shelf's total equals the previous shelf's (read after the stream).
    for_each: shelf
    severity: warning
    given: "shelf_file:$.total"
    assert: {equals: {ref: "shelf_file:$.total", at: {shelf: previous}}}
  - id: toy.stock.known
    description: The stock lists a count for a (runs before the stream).
    given: "stock:$.counts.a"
    assert: {type: integer}
"""


def both(tmp_path, spec, change=None):
    """The report of the schedule and of the rules one by one, as comparable data."""
    entry = write_docs(tmp_path / "docs", change)
    found = []
    for streaming in (True, False):
        report = Evaluation(spec, entry, streaming=streaming).run()
        found.append(([v.as_dict() for v in report.violations],
                      [v.as_dict() for v in report.warnings], list(report.files.items()),
                      list(report.suppressed.items()), report.ok))
    return found


def test_the_schedule_streams_the_iteration_most_documents_are_per_element_of(tmp_path):
    plan = schedule(case_spec(tmp_path, RULES))
    assert plan.stream == "shelf" and plan.subtree == {"shelf", "item"}
    assert plan.documents == {"shelf_file"}
    # before: reads nothing per shelf; streamed: reads only its shelf; after: another
    # shelf's file (pinned at the previous shelf)
    assert plan.before == (0, 5) and plan.streamed == (1, 2, 3) and plan.after == (4,)


def test_no_schedule_without_documents_per_element(tmp_path):
    header = """\
flarespec: 1
id: toy/case
title: Toy case
documents:
  index: {loader: json, entry: true, rule: toy.index}
iterations:
  shelf: {over: "index:$.shelves[*]"}
"""
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.shelf.name
            description: Every shelf has a name.
            for_each: shelf
            given: "shelf:$.name"
            assert: {type: string}
        """, header=header)
    assert schedule(spec) is None
    assert placements(spec) == {"toy.shelf.name": "in order"}


def test_each_elements_documents_are_released_before_the_next_element(tmp_path, monkeypatch):
    spec = case_spec(tmp_path, RULES)
    held_at_release = []
    release = DocumentStore.release_element

    def counting(self, names):
        held_at_release.append(sorted(key for key, loaded in self._documents.items()
                                      if key[0] == "shelf_file" and not loaded.released))
        release(self, names)
    monkeypatch.setattr(DocumentStore, "release_element", counting)
    evaluation = Evaluation(spec, write_docs(tmp_path / "docs"))
    report = evaluation.run()
    # one shelf file held at a time; the previous-shelf rule read them again afterwards
    assert held_at_release == [[("shelf_file", 0)], [("shelf_file", 1)]]
    assert report.ok and [w.rule for w in report.warnings] == ["toy.shelf.previous"]


BROKEN = {
    "valid": None,
    "stock missing": lambda d: d.__setitem__("stock.json", None),
    "stock not json": lambda d: d.__setitem__("stock.json", b"{nope"),
    "first shelf missing": lambda d: d.__setitem__("shelves/s0.json", None),
    "second shelf not json": lambda d: d.__setitem__("shelves/s1.json", b"[1,"),
    "both shelves broken": lambda d: (d.__setitem__("shelves/s0.json", b"{"),
                                      d.__setitem__("shelves/s1.json", {"items": 3})),
    "an item of the wrong shape": lambda d: d["shelves/s1.json"]["items"].append({"sku": 1}),
    "colours wrong": lambda d: [item.__setitem__("colour", "mauve")
                                for item in d["shelves/s0.json"]["items"]],
    "index shelves unreadable": lambda d: d["index.json"].__setitem__("shelves", 7),
}


@pytest.mark.parametrize("change", list(BROKEN.values()), ids=list(BROKEN))
def test_the_report_is_the_rule_by_rule_one(tmp_path, change):
    streamed, one_by_one = both(tmp_path, case_spec(tmp_path, RULES), change)
    assert streamed == one_by_one


def test_load_problems_stay_with_the_first_rule_in_rule_order_that_needed_them(tmp_path):
    """The stock file is first needed by a streamed rule (toy.item.count) in rule order,
    although a rule before the stream (toy.stock.known, later in rule order) reads it first
    in time: its load violation is reported where the streamed rule needed it."""
    def change(docs):
        docs["stock.json"] = b"{nope"
        docs["shelves/s0.json"]["total"] = 4  # toy.shelf.total fails: rule 3, after 2
    spec = case_spec(tmp_path, RULES)
    streamed, one_by_one = both(tmp_path, spec, change)
    assert streamed == one_by_one
    assert [v["rule"] for v in streamed[0]] == ["toy.stock.invalid-json", "toy.shelf.total"]


def test_the_cap_per_rule_keeps_the_same_violations(tmp_path):
    """More failures than the report keeps, spread over both shelves and interleaved with a
    load problem: the same first hundred are kept and the rest counted in the same order."""
    def many(docs):
        for name in ("shelves/s0.json", "shelves/s1.json"):
            docs[name]["items"] = [{"sku": "a", "colour": "mauve", "count": 1}] * 70
            docs[name]["total"] = 70
        docs["stock.json"] = b"{"
    streamed, one_by_one = both(tmp_path, case_spec(tmp_path, RULES), many)
    assert streamed == one_by_one
    colour = [v for v in streamed[0] if v["rule"] == "toy.item.colour"]
    assert len(colour) == MAX_KEPT_PER_RULE
    assert dict(streamed[3])["toy.item.colour"] == 140 - MAX_KEPT_PER_RULE


def test_a_released_document_read_again_must_be_the_same_bytes(tmp_path, monkeypatch):
    """A rule after the stream reads a released shelf file again; if its bytes changed
    meanwhile that is a violation, never a verdict on other bytes than the digest's."""
    spec = case_spec(tmp_path, RULES)
    entry = write_docs(tmp_path / "docs")
    release = DocumentStore.release_element

    def release_then_edit(self, names):
        release(self, names)
        shelf = entry.parent / "shelves" / "s0.json"
        if shelf.exists():
            changed = dict(DOCS["shelves/s0.json"], total=4)
            shelf.write_text(json.dumps(changed))
    monkeypatch.setattr(DocumentStore, "release_element", release_then_edit)
    report = Evaluation(spec, entry).run()
    assert [v.rule for v in report.violations] == ["toy.shelf.changed"]
    assert report.violations[0].file == "shelves/s0.json"
    assert "changed while it was validated" in report.violations[0].message


def test_the_metric_read_element_by_element_is_the_same(tmp_path, toy_hooks):
    spec = case_spec(tmp_path, RULES + textwrap.dedent("""
        metric:
          key: toy.total
          unit: items
          contract: {unit: items}
          for_each: shelf
          given: "shelf_file:$.total"
          label: "{shelf.name}"
          hook: toy.total
        """))
    assert schedule(spec).metric
    entry = write_docs(tmp_path / "docs")
    streamed = Evaluation(spec, entry).run()
    one_by_one = Evaluation(spec, entry, streaming=False).run()
    assert streamed.metric == one_by_one.metric and streamed.metric["value"] == 6


def test_evaluate_streams_by_default():
    assert Evaluation.__init__.__kwdefaults__["streaming"] is True


def test_documents_read_again_are_released_again_beyond_a_few(tmp_path):
    """A rule after the stream that reads every shelf file and the previous one's reads
    each again; only the last few stay loaded, and the report is the rule-by-rule one."""
    shelves = 40

    def many_shelves(docs):
        docs["index.json"]["shelves"] = [{"name": f"s{n}"} for n in range(shelves)]
        for n in range(shelves):
            docs[f"shelves/s{n}.json"] = {"items": [{"sku": "a", "colour": "red", "count": 1}],
                                          "total": 1}
        docs["stock.json"] = {"counts": {"a": 1}}
    spec = case_spec(tmp_path, RULES)
    entry = write_docs(tmp_path / "docs", many_shelves)
    evaluation = Evaluation(spec, entry)
    report = evaluation.run()
    held = [key for key, loaded in evaluation.documents._documents.items()
            if key[0] == "shelf_file" and not loaded.released]
    assert 0 < len(held) <= 16
    one_by_one = Evaluation(spec, entry, streaming=False).run()
    assert [v.as_dict() for v in report.violations + report.warnings] == \
        [v.as_dict() for v in one_by_one.violations + one_by_one.warnings]
    assert report.ok


# ------------------------------------------------------------------ a property: any order

POOL = {
    "index": """
  - id: toy.index.schema
    description: The index names its schema.
    given: "index:$.schema"
    assert: {equals: toy-inventory-v1}""",
    "colour": """
  - id: toy.item.colour
    description: Every item has a known colour.
    for_each: item
    given: "item:$.colour"
    assert: {one_of: [red, green, blue]}""",
    "count": """
  - id: toy.item.count
    description: Stock counts agree with the shelf.
    for_each: item
    given: "stock:/counts/{item.sku}"
    assert: {equals: {ref: "shelf_file:/items/{item@index}/count"}}""",
    "when-stock": """
  - id: toy.shelf.when-stock
    description: Where the stock lists b, the shelf total is at most 9 (reads stock only sometimes).
    for_each: shelf
    when: {given: "shelf:$.name", equals: s1}
    given: "stock:$.counts.b"
    assert: {range: {max: 9}}""",
    "total": """
  - id: toy.shelf.total
    description: The shelf total adds up.
    for_each: shelf
    given: "shelf_file:$"
    assert: {formula: "sum(items.*.count) == total"}""",
    "previous": """
  - id: toy.shelf.previous
    description: A shelf's total equals the previous shelf's.
    for_each: shelf
    severity: warning
    given: "shelf_file:$.total"
    assert: {equals: {ref: "shelf_file:$.total", at: {shelf: previous}}}""",
    "stock": """
  - id: toy.stock.known
    description: The stock lists a count for a.
    given: "stock:$.counts.a"
    assert: {type: integer}""",
    "first-shelf": """
  - id: toy.shelf.first
    description: The first shelf's first item counts as many as the stock says (a rule of no shelf).
    given: "stock:$.counts.a"
    assert: {equals: {ref: "shelf_file:$.items[0].count", at: {shelf: 0}}}""",
}
BREAKS = {
    "stock missing": lambda d: d.__setitem__("stock.json", None),
    "stock not json": lambda d: d.__setitem__("stock.json", b"{"),
    "stock counts a list": lambda d: d["stock.json"].__setitem__("counts", [1]),
    "s0 missing": lambda d: d.__setitem__("shelves/s0.json", None),
    "s1 not json": lambda d: d.__setitem__("shelves/s1.json", b"[1,"),
    "s1 item shape": lambda d: d["shelves/s1.json"]["items"].append({"sku": 2}),
    "s0 total": lambda d: d["shelves/s0.json"].__setitem__("total", 5),
    "s1 colour": lambda d: d["shelves/s1.json"]["items"][0].__setitem__("colour", "mauve"),
    "shelves unreadable": lambda d: d["index.json"].__setitem__("shelves", {"a": 1}),
    "stock b large": lambda d: d["stock.json"]["counts"].__setitem__("b", 12),
}


@settings(max_examples=300, deadline=None)
@given(rules=st.lists(st.sampled_from(sorted(POOL)), min_size=1, max_size=len(POOL),
                      unique=True),
       breaks=st.lists(st.sampled_from(sorted(BREAKS)), max_size=3, unique=True))
def test_any_rule_order_and_breakage_gives_the_rule_by_rule_report(tmp_path_factory, rules,
                                                                   breaks):
    """Whatever rules, in whatever order, over whatever broken documents: the scheduled
    run's report is the rule-by-rule run's, violation for violation."""
    tmp_path = tmp_path_factory.mktemp("any-order")
    text = "rules:" + "".join(POOL[name] for name in rules) + "\n"

    def change(docs):
        for name in breaks:
            try:
                BREAKS[name](docs)
            except (TypeError, KeyError, AttributeError, IndexError):
                pass  # an earlier break took what this one changes
    spec = case_spec(tmp_path, text)
    streamed, one_by_one = both(tmp_path, spec, change)
    assert streamed == one_by_one


def test_a_cached_iteration_replays_what_making_it_touched(tmp_path):
    """An iteration's bindings are made once. When a rule earlier in rule order but run
    after the stream asks for them again, the load problem met while making them moves to
    that rule, as if it had loaded the document: here toy.sku.after (rule 0, run last, it
    reads shelf 0's file) iterates the stock's skus that toy.sku.known (rule 2, run first)
    made, and the stock's load violation comes before toy.shelf.total's (rule 1)."""
    header = TOY_HEADER.replace('''  item: {over: "shelf_file:$.items[*]", parent: shelf}''', '''  item: {over: "shelf_file:$.items[*]", parent: shelf}
  sku: {over: "stock:$.counts.*"}
  sku_value: {over: "sku:$", parent: sku}''')  # a child: sku's bindings are kept
    spec = case_spec(tmp_path, """
        rules:
          - id: toy.sku.after
            description: Each stock count is at least shelf 0's first count.
            for_each: sku
            given: "sku:$"
            assert: {range: {min: {ref: "shelf_file:$.items[0].count", at: {shelf: 0}}}}
          - id: toy.shelf.total
            description: The shelf total adds up.
            for_each: shelf
            given: "shelf_file:$"
            assert: {formula: "sum(items.*.count) == total"}
          - id: toy.sku.known
            description: Each stock count is an integer.
            for_each: sku
            given: "sku:$"
            assert: {type: integer}
        """, header=header)
    plan = schedule(spec)
    assert (plan.before, plan.streamed, plan.after) == ((2,), (1,), (0,))

    def change(docs):
        docs["stock.json"] = b"{"
        docs["shelves/s0.json"]["total"] = 5
    streamed, one_by_one = both(tmp_path, spec, change)
    assert streamed == one_by_one
    assert [v["rule"] for v in streamed[0]] == ["toy.stock.invalid-json", "toy.shelf.total"]


def test_nested_recordings_pass_what_they_found_outwards():
    """Recordings nest (an iteration's bindings made while its parent's are made): each
    stops its own, by identity, and hands its groups to the one around it."""
    from flarespec.engine.outcome import Outcome
    from flarespec.engine.sink import Group, Sink

    sink = Sink(Outcome("toy"))
    sink.buffered = True
    outer = sink.recording()
    inner = sink.recording()
    assert sink.recorded(inner) == ()  # while equal to outer (both empty): by identity
    group = Group()
    group.anchor = (0, 0)
    sink.touch([group])  # after the inner one stopped: the outer one's
    assert sink.recorded(outer) == (group,)
    with pytest.raises(RuntimeError):
        sink.recorded(outer)
