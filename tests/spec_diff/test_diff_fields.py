"""Field-level changes, full values, fingerprints and renames (spec diff, item 1 and 3)."""

from __future__ import annotations

import copy

from flarespec.review.diff import diff_specs
from flarespec.review.tree import leaf_changes
from flarespec.output.formats import render as render_as
from flarespec.review.render import diff_report, label


def render(results, fmt):
    return render_as(diff_report(results), fmt)

LONG = "flare_" + "x" * 300 + "_total"
BASE = {
    "id": "t/old", "title": "t",
    "constants": {"idle_metrics": [{"name": f"m{i}", "type": "gauge"} for i in range(11)],
                  "long": "short"},
    "rules": [
        {"id": "t.a", "description": "A.", "given": "d:$.a", "assert": {"range": {"min": 0}}},
        {"id": "t.b", "description": "B.", "given": "d:$.b", "assert": {"equals": 1}},
        {"id": "t.w", "description": "W.", "severity": "warning", "given": "d:$.w",
         "assert": {"present": True}},
    ],
    "metric": {"key": "t.m", "unit": "ns", "description": "M.", "given": "d:$.m",
               "hook": "t.median"},
}


def edited(change) -> dict:
    new = copy.deepcopy(BASE)
    new["id"] = "t/new"
    change(new)
    return new


def rule(spec: dict, rule_id: str) -> dict:
    return next(r for r in spec["rules"] if r["id"] == rule_id)


def test_a_changed_member_of_a_constant_is_named_by_its_sub_path():
    new = edited(lambda s: s["constants"]["idle_metrics"][6].update(name="renamed_total"))
    new["constants"]["idle_metrics"].append({"name": "m11", "type": "counter"})
    changes = {label(c): c for c in diff_specs(BASE, new).changes}
    # records with a name are matched by it; the renamed entry is shown on itself
    assert changes["constant idle_metrics[name=m6].name"].old == "m6"
    assert changes["constant idle_metrics[name=m6].name"].new == "renamed_total"
    assert changes["constant idle_metrics[name=m11]"].op == "added"
    assert changes["constant idle_metrics[name=m11]"].new == {"name": "m11", "type": "counter"}
    assert len(changes) == 2


def test_leaf_changes_are_type_strict_and_positional():
    assert list(leaf_changes({"a": [1, 2]}, {"a": [1.0, 2, 3]})) == [
        ("a[0]", 1, 1.0), ("a[2]", leaf_changes.__globals__["ABSENT"], 3)]


def test_long_values_are_folded_never_cut():
    new = edited(lambda s: s["constants"].update(long=LONG))
    result = diff_specs(BASE, new)
    text = render([result], "text")
    assert LONG in text and "…" not in text
    # the long value is on a line of its own, under the change's head line
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if "constant long" in line)
    assert LONG not in lines[head] and any(LONG in line for line in lines[head + 1:])
    assert LONG in render([result], "markdown") and LONG in render([result], "github")


def test_fingerprints_survive_rewording():
    def raise_min(spec):
        rule(spec, "t.a")["assert"]["range"]["min"] = 1

    def raise_min_and_reword(spec):
        raise_min(spec)
        rule(spec, "t.a")["description"] = "A, reworded."
    plain = {c.fingerprint for c in diff_specs(BASE, edited(raise_min)).changes}
    reworded = {c.fingerprint for c in diff_specs(BASE, edited(raise_min_and_reword)).changes}
    assert len(plain) == 1 and plain < reworded  # the rewording is one more (neutral) change
    added = {"id": "t.c", "description": "C.", "given": "d:$.c", "assert": {"absent": True}}
    once = diff_specs(BASE, edited(lambda s: s["rules"].append(added))).changes
    again = diff_specs(BASE, edited(lambda s: s["rules"].append(
        {**added, "description": "C, said otherwise."}))).changes
    assert [c.fingerprint for c in once] == [c.fingerprint for c in again]


def test_fingerprints_differ_by_value_and_are_stable_across_runs():
    def min_to(value):
        return lambda s: rule(s, "t.a")["assert"]["range"].update(min=value)
    [one] = diff_specs(BASE, edited(min_to(1))).changes
    [two] = diff_specs(BASE, edited(min_to(2))).changes
    [one_again] = diff_specs(BASE, edited(min_to(1))).changes
    assert one.fingerprint == one_again.fingerprint != two.fingerprint
    assert len(one.fingerprint) == 16


def test_a_renamed_rule_is_a_rename_plus_its_changes_not_a_removal_and_an_addition():
    def rename(spec):
        renamed = rule(spec, "t.b")
        renamed.update(id="t.b-renamed", renamed_from="t.b", assert_={})
        renamed.pop("assert_")
        renamed["assert"] = {"equals": 2}
    changes = [(c.cls, label(c), c.what) for c in diff_specs(BASE, edited(rename)).changes]
    assert changes == [("review", "rule t.b-renamed assert.equals", "changed"),
                       ("neutral", "rule t.b-renamed id", "renamed from t.b")]


def test_a_dropped_or_added_warning_is_neutral():
    dropped = diff_specs(BASE, edited(lambda s: s["rules"].pop())).changes
    assert [(c.cls, c.subject, c.what) for c in dropped] == [("neutral", "rule t.w", "removed")]


def test_metric_identity_is_review_and_its_description_neutral():
    def change(spec):
        spec["metric"].update(given="d:$.other", description="M, reworded.")
    changes = [(c.cls, label(c)) for c in diff_specs(BASE, edited(change)).changes]
    assert changes == [("review", "metric given"), ("neutral", "metric description")]


def test_constant_readers_are_unknown_for_plain_data_and_say_so():
    [change] = diff_specs(BASE, edited(lambda s: s["constants"].update(long="other"))).changes
    assert change.cls == "review" and "unknown" in change.reason


def test_renames_are_followed_across_generations(tmp_path):
    from flarespec.compiler.open import open_spec

    rule_text = ("  - id: {id}\n{renamed}    description: A.\n    given: \"doc:$.a\"\n"
                 "    assert: {{equals: 1}}\n")
    (tmp_path / "base.yaml").write_text(
        "flarespec: 1\nid: t/base\ntitle: t\ndocuments:\n  doc: {loader: json, entry: true}\n"
        "rules:\n" + rule_text.format(id="t.a", renamed=""))
    (tmp_path / "child.yaml").write_text(
        "flarespec: 1\nid: t/child\nextends: t/base\ntitle: t\nrules:\n" +
        rule_text.format(id="t.b", renamed="    renamed_from: t.a\n"))
    (tmp_path / "grandchild.yaml").write_text(
        "flarespec: 1\nid: t/grandchild\nextends: t/child\ntitle: t\nrules:\n" +
        rule_text.format(id="t.c", renamed="    renamed_from: t.b\n"))
    result = diff_specs(open_spec(tmp_path / "base.yaml"), open_spec(tmp_path / "grandchild.yaml"))
    assert [(c.cls, label(c), c.what) for c in result.changes] == [
        ("neutral", "rule t.c id", "renamed from t.a")]
