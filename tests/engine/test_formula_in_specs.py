"""Issue 24 through specs: a formula's unknown function or wrong arity is a spec error at
load (file:line:column, spec.formula-syntax); an empty list, a length mismatch or a failed
condition is a violation of the rule (its id, never a crash); and the statistics recompute
the aggregates of a real AIPerf run from its per-request records."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from document_files import write_files

from flarespec.engine.evaluate import evaluate
from flarespec.engine.formula import compile_formula
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

HEAD = """\
flarespec: 1
id: toy/stats
title: Toy statistics
documents:
  doc: {loader: json, entry: true, rule: toy.doc}
rules:
"""

RULE = """\
  - id: toy.stats.{name}
    description: A statistic.
    given: "doc:$"
    assert: {{formula: {formula}}}
"""


def spec_text(**formulas) -> str:
    return HEAD + "".join(RULE.format(name=name, formula=json.dumps(formula))
                          for name, formula in formulas.items())


def compiled(tmp_path, text: str):
    (tmp_path / "spec").mkdir(exist_ok=True)
    (tmp_path / "spec" / "stats.yaml").write_text(text)
    library = SpecLibrary([tmp_path / "spec"])
    return compile_spec(resolve(library.get("toy/stats"), library))


def test_unknown_functions_and_wrong_arity_are_spec_errors_at_load(tmp_path):
    with pytest.raises(SpecInvalid) as caught:
        compiled(tmp_path, spec_text(a="maen(xs) > 0", b="quantile(xs) > 0", c="mean(xs, 1) == 2",
                                     d="quantile(xs, 2) > 0", e="mean(1) > 0"))
    path = tmp_path / "spec" / "stats.yaml"
    found = [(str(issue).split(": ")[0], issue.code, issue.message.splitlines()[0])
             for issue in caught.value.issues]
    assert found == [
        (f"{path}:10:14", "spec.formula-syntax", "formula: unknown function 'maen' (did you mean 'mean'?); "
         "allowed: abs, count, len, max, mean, median, min, pstdev, quantile, sqrt, stdev, sum at column 1"),
        (f"{path}:14:14", "spec.formula-syntax",
         "formula: quantile() takes 2 arguments: quantile(xs, p) at column 12"),
        (f"{path}:18:14", "spec.formula-syntax", "formula: mean() takes 1 argument: mean(xs) at column 8"),
        (f"{path}:22:14", "spec.formula-syntax",
         "formula: quantile() needs p in [0, 1], but p is 2 at column 14"),
        (f"{path}:26:14", "spec.formula-syntax",
         "formula: mean() takes a list: its argument must read a field or @name at column 6"),
    ]


def test_a_condition_needs_no_comparison_operator_at_the_top(tmp_path):
    spec = compiled(tmp_path, spec_text(a="len(xs) > 0 and not max(xs) > 10"))
    assert [rule.id for rule in spec.rules] == ["toy.stats.a"]


def violations(tmp_path, doc: dict, **formulas) -> list[tuple[str, str]]:
    spec = compiled(tmp_path, spec_text(**formulas))
    write_files(tmp_path / "docs", {"doc.json": doc})
    report = evaluate(spec, tmp_path / "docs" / "doc.json")
    return [(v.rule, v.message) for v in report.violations]


def test_empty_lists_mismatched_lengths_and_failed_conditions_are_violations(tmp_path):
    doc = {"xs": [], "end": [5, 7, 9], "start": [1, 2], "a": 1, "b": 1}
    found = violations(tmp_path, doc, empty="mean(xs) > 0", mismatch="mean(end - start) > 0",
                       condition="a < 5 and b > 2", guarded="len(xs) == 0 or mean(xs) > 0")
    assert found == [
        ("toy.stats.empty", "cannot evaluate 'mean(xs) > 0': mean() of an empty list (field 'xs') "
                            "[formula: mean(xs) > 0]"),
        ("toy.stats.mismatch", "cannot evaluate 'mean(end - start) > 0': element-wise '-' needs lists of one "
                               "length, but field 'end' has 3 items and field 'start' has 2 "
                               "[formula: mean(end - start) > 0]"),
        ("toy.stats.condition", "'a < 5 and b > 2' does not hold: 1 < 5 and 1 > 2"),
    ]


# ---------------------------------------------------------------- a real AIPerf run

RUN = Path(__file__).resolve().parents[2] / "fixtures" / "aiperf" / "run1"
STATISTICS = {"avg": "mean({})", "std": "pstdev({})", "min": "min({})", "max": "max({})",
              "p1": "quantile({}, 0.01)", "p5": "quantile({}, 0.05)", "p25": "quantile({}, 0.25)",
              "p50": "median({})", "p75": "quantile({}, 0.75)", "p90": "quantile({}, 0.9)",
              "p95": "quantile({}, 0.95)", "p99": "quantile({}, 0.99)"}


@pytest.mark.parametrize("metric", ["time_to_first_token", "request_latency", "inter_chunk_latency"])
def test_the_statistics_recompute_a_real_aiperf_aggregate(metric):
    """AIPerf's aggregate (numpy: linear quantiles, population std) from its records: each
    statistic within 1e-15 relative of numpy's float arithmetic (measured: at most 3.4e-16;
    the formula's are exact, rounded once). inter_chunk_latency is over every chunk of every
    successful record: a fan-out flattening the records' lists."""
    key = {"time_to_first_token": "ttft"}.get(metric, metric)
    records = [json.loads(line) for line in (RUN / "profile_export.jsonl").read_text().splitlines()]
    successful = {"records": [record for record in records if not record.get("error")]}
    aggregate = json.loads((RUN / "profile_export_aiperf.json").read_text())["records"][key]
    values = f"records.*.metrics.{key}.value" + (".*" if key == "inter_chunk_latency" else "")
    assert compile_formula(f"count({values}) == @count").evaluate(
        successful, {"count": aggregate["count"]}).ok
    for statistic, written in STATISTICS.items():
        formula = compile_formula(f"{written.format(values)} == @expected")
        result = formula.evaluate(successful, {"expected": aggregate[statistic]}, rel_tol=1e-15)
        assert result.ok, (statistic, result)
