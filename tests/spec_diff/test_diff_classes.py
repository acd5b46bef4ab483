"""Every classification rule of docs/spec-review.md, each with a pair of real spec files.

``data/base.yaml`` is the base of every case; each other file of ``data/`` extends it and
changes one theme. A case is (file, change label, class, what): the diff of base -> file
must contain exactly these changes (the child's own header aside), so a rule that starts
reporting an extra change, or another class, fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flarespec.review.diff import diff_specs
from flarespec.review.git import linted
from flarespec.review.render import label

DATA = Path(__file__).parent / "data"
HEADER = ("title", "description", "limits")  # a child's header is its own, never inherited

CASES = [
    # bounds.yaml: range, length, count
    ("bounds", "rule toy.shelf.max-count assert.range.max", "tightening", "max added"),
    ("bounds", "rule toy.shelf.max-count assert.range.min", "tightening", "min raised"),
    ("bounds", "rule toy.shelf.items assert.length.min", "loosening", "min lowered"),
    ("bounds", "rule toy.item.max assert.range.max", "review", "changed"),
    ("bounds", "rule toy.stock.count assert.count.equals", "review", "equals changed"),
    ("bounds", "rule toy.stock.positive assert.count.where", "review", "where changed"),
    # sets.yaml: sets, types, patterns, prefixes, values, kinds
    ("sets", "rule toy.index.kind assert.type", "tightening", "types narrowed"),
    ("sets", "rule toy.index.version assert.one_of", "tightening", "allowed set narrowed"),
    ("sets", "rule toy.shelf.entry assert.includes.position", "tightening", "member required"),
    ("sets", "rule toy.shelf.title-prefix assert.starts_with", "tightening", "prefix lengthened"),
    ("sets", "rule toy.index.shelf-names-unique assert.unique", "loosening", "switched off"),
    ("sets", "rule toy.index.state assert.regex", "loosening", "pattern widened"),
    ("sets", "rule toy.item.not-reserved assert.not.one_of", "loosening",
     "negated: allowed set narrowed"),
    ("sets", "rule toy.stock.updated assert.monotonic", "loosening", "made non-strict"),
    ("sets", "rule toy.item.not-x assert.not.equals", "review", "negated: changed"),
    ("sets", "rule toy.item.sku assert.regex", "review", "pattern changed"),
    ("sets", "rule toy.shelf.no-legacy assert", "review", "kind absent → type"),
    ("sets", "rule toy.stock.keys assert.keys", "review", "changed"),
    # rule-keys.yaml: severity, optional, when, given, requires, wording
    ("rule-keys", "rule toy.index.files.digest-format optional", "tightening", "made required"),
    ("rule-keys", "rule toy.shelf.max-count when", "tightening", "condition removed"),
    ("rule-keys", "rule toy.shelf.small severity", "tightening", "made an error"),
    ("rule-keys", "rule toy.item.colour severity", "loosening", "made a warning"),
    ("rule-keys", "rule toy.item.count when", "loosening", "condition added"),
    ("rule-keys", "rule toy.shelf.max-count optional", "loosening", "made optional"),
    ("rule-keys", "rule toy.index.counts-copy assert.same_as.allow_extra", "review",
     "allow_extra.when changed"),
    ("rule-keys", "rule toy.index.stock-sha256 given", "review", "changed"),
    ("rule-keys", "rule toy.shelf.total clause", "neutral", "clause reworded"),
    ("rule-keys", "rule toy.shelf.total description", "neutral", "description reworded"),
    ("rule-keys", "rule toy.shelf.total message", "neutral", "message reworded"),
    ("rule-keys", "rule toy.shelf.total requires", "neutral", "requires added"),
    # tolerances.yaml: tolerances, allow_extra, a changed condition, a warning rule
    ("tolerances", "rule toy.index.counts-copy assert.same_as.allow_extra", "loosening",
     "allowed extra keys widened"),
    ("tolerances", "rule toy.shelf.mean assert.formula.abs_tol", "loosening", "abs_tol raised"),
    ("tolerances", "rule toy.shelf.mean assert.formula.rel_tol", "loosening", "rel_tol raised"),
    ("tolerances", "rule toy.item.share assert.formula.expr", "review", "expr changed"),
    ("tolerances", "rule toy.shelf.max-count when", "review", "condition changed"),
    ("tolerances", "rule toy.shelf.small assert.length.max", "neutral", "max lowered"),
    # rules-and-documents.yaml: added, dropped and renamed rules, documents, manifests, pair
    ("rules-and-documents", "document ledger", "tightening", "added"),
    ("rules-and-documents", "pair pair.schema", "tightening", "added"),
    ("rules-and-documents", "rule toy.index.files.extra-entry assert.manifest_lists_only",
     "tightening", "allowed entries narrowed"),
    ("rules-and-documents", "rule toy.ledger.balanced", "tightening", "added"),
    ("rules-and-documents", "document notes", "loosening", "removed"),
    ("rules-and-documents", "pair pair.stock", "loosening", "removed"),
    ("rules-and-documents", "rule toy.index.files.digest-checked assert.manifest_digests",
     "loosening", "checked digests narrowed"),
    ("rules-and-documents", "rule toy.index.files.missing-entry assert.manifest_lists_all",
     "loosening", "required entries narrowed"),
    ("rules-and-documents", "rule toy.notes.title", "loosening", "removed"),
    ("rules-and-documents", "rule toy.stock.finite", "loosening", "removed"),
    ("rules-and-documents", "identity schema ref", "review", "changed"),
    ("rules-and-documents", "rule toy.index.files.digest-checked id", "neutral",
     "renamed from toy.index.files.digest"),
    ("rules-and-documents", "rule toy.ledger.note", "neutral", "added"),
    # constants.yaml: mixed readers, a substituted regex, an unread constant
    ("constants", "constant colours[name=yellow]", "review", "added"),
    ("constants", "constant digest_pattern", "review", "changed"),
    ("constants", "rule toy.index.files.digest-format assert.regex", "review", "pattern changed"),
    ("constants", "constant unused", "neutral", "added"),
    # constants-classed.yaml: a substituted narrowing, a run-time widening
    ("constants-classed", "constant versions[0]", "tightening", "changed"),
    ("constants-classed", "constant versions[1]", "tightening", "removed"),
    ("constants-classed", "rule toy.index.version assert.one_of", "tightening",
     "allowed set narrowed"),
    ("constants-classed", "constant states[2]", "loosening", "added"),
    # more.yaml: an exact count freed, a set changed both ways, an expected member changed
    ("more", "rule toy.stock.count assert.count.min", "tightening", "min added"),
    ("more", "rule toy.stock.count assert.count.equals", "loosening", "equals removed"),
    ("more", "constant versions[1]", "review", "changed"),
    ("more", "rule toy.index.version assert.one_of", "review", "allowed set changed"),
    ("more", "rule toy.shelf.entry assert.includes.name", "review", "member value changed"),
    # document-limits.yaml: a document's size limit raised and lowered
    ("document-limits", "document stock options.max_mib", "loosening", "max_mib raised"),
    ("document-limits", "document shelf_file options.max_mib", "tightening", "max_mib lowered"),
    # header.yaml: header wording; what selects the spec, iterations, documents, pair
    ("header", "applies_to equals", "review", "changed"),
    ("header", "document notes path", "review", "changed"),
    ("header", "iteration shelf over", "review", "changed"),
    ("header", "pair pair.stock identity", "review", "changed"),
    ("header", "description", "neutral", "changed"),
    ("header", "limits", "neutral", "changed"),
    ("header", "title", "neutral", "changed"),
]
CHILDREN = sorted({case[0] for case in CASES})
_diffs: dict = {}


def changes_of(child: str) -> dict[str, list]:
    """label -> [(class, what), ...] of base -> child (both linted, as the command does)."""
    if child not in _diffs:
        result = diff_specs(linted(DATA / "base.yaml"), linted(DATA / f"{child}.yaml"))
        found: dict[str, list] = {}
        for change in result.changes:
            if child == "header" or change.subject not in HEADER:
                found.setdefault(label(change), []).append((change.cls, change.what))
        _diffs[child] = found
    return _diffs[child]


@pytest.mark.parametrize("child, where, cls, what", CASES,
                         ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_each_classification_rule(child, where, cls, what):
    assert (cls, what) in changes_of(child).get(where, []), changes_of(child).get(where)


@pytest.mark.parametrize("child", CHILDREN)
def test_no_change_beyond_the_cases(child):
    expected = sorted((where, cls, what) for c, where, cls, what in CASES if c == child)
    found = sorted((where, cls, what) for where, pairs in changes_of(child).items()
                   for cls, what in pairs)
    assert found == expected


def test_a_constant_change_lists_every_rule_that_reads_it():
    result = diff_specs(linted(DATA / "base.yaml"), linted(DATA / "constants.yaml"))
    colours = next(c for c in result.changes if c.path == "colours[name=yellow]")
    # toy.item.colour reads the names at run time (one_of of a wider list: loosening),
    # toy.item.code through a pointer with a placeholder and toy.colour.code over the
    # colour iteration (neither decidable): review, with the reason per class
    assert colours.rules == ["iteration colour", "rule toy.colour.code", "rule toy.item.code",
                             "rule toy.item.colour"]
    assert colours.reason == ("loosening through rule toy.item.colour; review through "
                              "iteration colour, rule toy.colour.code, rule toy.item.code")
    pattern = next(c for c in result.changes if c.subject == "constant digest_pattern")
    assert pattern.rules == ["rule toy.index.files.digest-format"]


def test_a_constant_spelled_in_a_document_is_read_by_it(tmp_path):
    """A constant used only in a document's options is classed through that document."""
    child = tmp_path / "child.yaml"
    (tmp_path / "base.yaml").write_text((DATA / "base.yaml").read_text().replace(
        "notes: {loader: text, path: notes.txt}",
        "notes: {loader: text, path: \"${notes_file}\"}").replace(
        "constants:\n", "constants:\n  notes_file: notes.txt\n", 1))
    child.write_text("flarespec: 1\nid: review/child\nextends: review/base\ntitle: c\n"
                     "constants:\n  notes_file: NOTES.txt\n")
    result = diff_specs(linted(tmp_path / "base.yaml"), linted(child))
    constant = next(c for c in result.changes if c.subject == "constant notes_file")
    assert (constant.cls, constant.rules) == ("review", ["document notes"])


def test_an_identical_spec_has_no_change():
    assert diff_specs(linted(DATA / "base.yaml"), linted(DATA / "base.yaml")).changes == []


def test_a_key_added_to_a_kept_document_is_review_not_a_new_document(tmp_path):
    """Only a whole document added is "a new document must exist"; an option added to one
    (other than max_mib) changes how it is read."""
    child = tmp_path / "child.yaml"
    sse = "notes: {loader: sse, path: notes.txt"  # a loader with an option beside max_mib
    (tmp_path / "base.yaml").write_text((DATA / "base.yaml").read_text().replace(
        "notes: {loader: text, path: notes.txt", sse))
    child.write_text("flarespec: 1\nid: review/child\nextends: review/base\ntitle: c\n"
                     'applies_to: {given: "index:$.schema", equals: "${schema}"}\n'
                     f"documents:\n  {sse}, options: {{data_json: true}}}}\n")
    result = diff_specs(linted(tmp_path / "base.yaml"), linted(child))
    [change] = [c for c in result.changes if c.subject == "document notes"]
    assert (change.path, change.cls, change.what) == ("options.data_json", "review", "added")


@pytest.mark.parametrize("old, new, cls", [
    ({"equals": 200}, {"range": {"min": 200, "max": 299}}, "loosening"),
    ({"equals": 200}, {"range": {"min": 201}}, "review"),
    ({"equals": "a"}, {"one_of": ["a", "b"]}, "loosening"),
    ({"equals": "a"}, {"one_of": ["b"]}, "review"),
    ({"type": "integer"}, {"range": {"min": 0}}, "loosening"),
    ({"regex": "^a$"}, {"equals": "a"}, "review"),
])
def test_a_replaced_rule_of_another_kind_is_classed_by_meaning_never_neutral(old, new, cls):
    """Issue 14 item 3: a replacement that accepts more is loosening (the gate sees it)."""
    from flarespec.engine.kinds import argument_changes

    [(path, (found, what, reason), _, _)] = argument_changes(old, new)
    assert found == cls, (what, reason)
