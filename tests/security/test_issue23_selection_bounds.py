"""Issue 23, item 11: selections that grow far beyond their document.

``flarespec path`` on a 1.9 KB file of 984 nested arrays: ``$..*`` took 2.4 GB (each of
its 983 values printed its indentation once per level: 636M characters), ``$..*..*`` 24 GB
and 112 s (each of its 482k matches copied the keys of its place: O(depth) per match), and
``$..*..*..*..*.length`` was killed by the OOM killer; ``$..*..*..*`` over 300 nested
arrays is cubic (4.5M nodes; 395 s and 24 GB here). RFC 9535 keeps the duplicates nested
descendant segments make, so what protects is a bound on their number:

* a selection, and every step of it (a descendant segment's visit included), holds at most
  ``MAX_SELECTED`` nodes, else ``SelectionTooLarge``: ``flarespec path`` refuses (exit 2),
  a rule or an iteration reports its violation (no metric);
* a descendant segment walks a node once and copies its part where it comes again, and a
  match keeps only its parent match and its key, so reaching the bound is cheap;
* ``flarespec path`` prints at most ``MAX_PRINTED`` characters of JSON, else refuses.

The command line's JSON loader no longer reads 984 nested arrays (its recursion ends
first: invalid-json), so these use 950.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from hostile import run_bounded

from flarespec.cli.path_command import MAX_PRINTED
from flarespec.engine.evaluate import evaluate
from flarespec.engine.jsonpath import MAX_SELECTED, CompiledJsonPath, SelectionTooLarge
from flarespec.loaders.locations import location_keys, location_of
from flarespec.compiler.open import open_compiled

SECONDS_AT_MOST = 5.0
RSS_AT_MOST = 300 << 20
TOO_MANY = f"selects more than {MAX_SELECTED:,} nodes"
TOO_LONG = f"prints more than {MAX_PRINTED >> 20} MiB of JSON"


def nested(depth: int):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def nested_file(directory: Path, depth: int) -> Path:
    path = directory / f"nested{depth}.json"
    path.write_text("[" * depth + "]" * depth)
    return path


@pytest.mark.parametrize("options, query, depth, refusal", [
    ([], "$..*", 950, TOO_LONG),
    (["--locations"], "$..*", 950, TOO_LONG),
    ([], "$..*..*", 950, TOO_LONG),
    (["--locations"], "$..*..*", 950, TOO_LONG),
    ([], "$..*..*..*..*.length", 950, TOO_MANY),
    ([], "$..*..*..*", 300, TOO_MANY),
    (["--locations"], "$..*..*..*", 300, TOO_MANY),
])
def test_flarespec_path_refuses_a_selection_beyond_the_bounds(tmp_path, options, query, depth,
                                                              refusal):
    """The issue's reproducers through the command line, bounded as hostile specs are."""
    run = run_bounded(["path", *options, query, str(nested_file(tmp_path, depth))])
    assert run.exit_code == 2, run
    assert run.wall_s < SECONDS_AT_MOST and run.max_rss_bytes < RSS_AT_MOST, run
    assert run.stdout == "" and "Traceback" not in run.stderr
    [message] = run.stderr.splitlines()
    assert message.startswith(f"flarespec: {tmp_path / f'nested{depth}.json'}: ")
    assert refusal in message and query in message


def test_flarespec_path_prints_what_stays_within_the_bounds(tmp_path):
    run = run_bounded(["path", "--locations", "$..*..*", str(nested_file(tmp_path, 3))])
    assert run.exit_code == 0, run
    assert json.loads(run.stdout) == [{"location": "$[0][0]", "value": []}]


# ------------------------------------------------------------------------ the walk itself


@pytest.mark.parametrize("query, depth", [("$..*..*..*", 300), ("$..*..*..*..*", 950),
                                          ("$..[0,0]..[0,0]..[0,0]", 200)])
def test_nested_descendants_are_refused_beyond_the_bound(query, depth):
    path, value = CompiledJsonPath(query), nested(depth)
    for select in (path.values, path.find, path.find_keys):
        with pytest.raises(SelectionTooLarge, match=TOO_MANY):
            select(value)


@pytest.mark.parametrize("query, size", [("$[*]", MAX_SELECTED), ("$[*,*]", MAX_SELECTED // 2),
                                         ("$..*", MAX_SELECTED)])
def test_the_bound_is_exactly_max_selected(query, size):
    """At the bound a selection is whole (2^20 events, the most an SSE stream has); one
    node more is refused."""
    path = CompiledJsonPath(query)
    assert len(path.values([0] * size)) == MAX_SELECTED
    with pytest.raises(SelectionTooLarge):
        path.values([0] * (size + 1))


def test_repeated_selectors_count_too():
    path = CompiledJsonPath("$[" + ",".join(["0"] * 1025) + "][" + ",".join(["0"] * 1024) + "]")
    with pytest.raises(SelectionTooLarge):
        path.find([[1]])


def test_a_filter_query_is_bounded_too():
    with pytest.raises(SelectionTooLarge, match=r"\$\[\?count"):
        CompiledJsonPath("$[?count(@..*..*..*) > 0]").values([nested(300)])


def test_nested_descendants_within_the_bound_are_the_rfc_nodelist():
    """Copied parts are the nodes a walk of each given node finds, duplicates kept, in
    order; matches and their locations too."""
    value = [[[1], {"a": [2]}], [[3]]]
    path = CompiledJsonPath("$..*..*")
    found = path.find(value)
    expected = []
    for outer in CompiledJsonPath("$..*").find(value):
        expected += CompiledJsonPath("$..*").find(outer.value, outer.location)
    assert [(m.location, m.value) for m in found] == [(m.location, m.value) for m in expected]
    assert path.values(value) == [m.value for m in expected]
    assert path.find_keys(value) == [tuple(location_keys(m.location)) for m in expected]


def test_a_deep_match_keeps_one_key_not_its_whole_place():
    """``$..*..*`` over 300 nested arrays makes 44,551 matches: with every place's keys
    copied into each match they held 6.7M keys (168 MB peak for the command); now each
    keeps its parent and one key."""
    path, value = CompiledJsonPath("$..*..*"), nested(300)
    tracemalloc.start()
    try:
        found = path.find(value)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(found) == 44_551
    assert peak < 16 << 20, peak
    locations = {m.location for m in found[::997]}
    assert all(location == "$" + "[0]" * len(location_keys(location)) for location in locations)


def test_a_location_is_right_whichever_match_is_asked_first():
    value = {"a": [{"b": [1, {"c": 2}]}, {"d": 3}]}
    found = CompiledJsonPath("$..*").find(value)
    expected = ["$.a", "$.a[0]", "$.a[1]", "$.a[0].b", "$.a[0].b[0]", "$.a[0].b[1]",
                "$.a[0].b[1].c", "$.a[1].d"]
    for order in (list(range(len(found))), list(reversed(range(len(found)))), [5, 0, 7, 3]):
        fresh = CompiledJsonPath("$..*").find(value)
        assert [fresh[i].location for i in order] == [expected[i] for i in order]
    assert [m.location for m in found] == expected
    assert [location_of(m._keys, m._base) for m in found] == expected  # as a pair


# ------------------------------------------------------------------------ in a spec

SPEC = """
flarespec: 1
id: toy/deep
title: selections beyond the bound
documents:
  index: {loader: json, entry: true}
iterations:
  node: {over: "index:$.deep..*..*..*"}
rules:
  - id: toy.given
    description: A rule whose selection is beyond the bound.
    given: "index:$.deep..*..*..*"
    assert: {type: array}
  - id: toy.each
    description: A rule over an iteration beyond the bound.
    for_each: node
    given: "node:$"
    assert: {type: array}
  - id: toy.small
    description: A rule that passes.
    given: "index:$.deep"
    assert: {type: array}
"""


def test_a_rule_and_an_iteration_beyond_the_bound_are_violations(tmp_path):
    """Fail closed: the rule that selects, and the iteration, each report the refusal; no
    engine error, no traceback, nothing passes in silence."""
    (tmp_path / "index.json").write_text(json.dumps({"deep": nested(300)}))
    (tmp_path / "spec.yaml").write_text(SPEC)
    report = evaluate(open_compiled(tmp_path / "spec.yaml"), tmp_path / "index.json")
    found = {violation.rule: violation.message for violation in report.violations}
    assert set(found) == {"toy.given", "iteration.node.unresolved"}, found
    assert all(TOO_MANY in message for message in found.values()), found
    assert not report.ok
