"""Issue 14 item 9: `spec test --coverage` counts what the selected cases target, calls a
rule covered only when a case expects it and it fires there, says why a rule is not, and
says so when everything is covered."""

from __future__ import annotations

from types import SimpleNamespace

import yaml

from flarespec.fixtures.check import PASSED, FAILED, CaseResult, coverage
from flarespec.fixtures.catalog import Case
from cli_run import run

BUNDLED = "flare/bce032c0"




def test_with_k_only_the_targeted_rules_are_counted():
    result = run("spec", "test", BUNDLED, "-k", "missing-package-file", "--coverage")
    assert result.exit_code == 0, result.output
    assert "uncovered" not in result.output, result.output
    assert f"{BUNDLED} -k selection targets: package.file.missing" in result.output
    assert (f"{BUNDLED} coverage: all 1 error rule the selected cases target covered by 1 case"
            in result.output)


def child_with_a_rule_that_always_fires(tmp_path) -> str:
    child = {"flarespec": 1, "id": "flare/child", "title": "child.schema never holds",
             "extends": BUNDLED,
             "rules": [{"id": "child.schema", "description": "an impossible schema name.",
                        "given": "packet:$.schema", "assert": {"equals": "no-such-schema"}}]}
    path = tmp_path / "child.yaml"
    path.write_text(yaml.safe_dump(child, sort_keys=False))
    return str(path)


CASES = """spec: flare/bce032c0
cases:
  - name: gone-package
    clause: "1"
    description: the package file is gone.
    mutate:
      - {op: remove_file, file: package/flare-package.bin}
    expect: {rejected_by: [package.file.missing]}
  - name: gone-package-and-a-source-that-holds
    clause: "1"
    description: expects packet.source, which this mutation does not break.
    mutate:
      - {op: remove_file, file: package/flare-package.bin}
    expect: {rejected_by: [package.file.missing, packet.source]}
"""


def test_a_rule_that_fires_unexpected_or_never_where_expected_is_said_so(tmp_path):
    catalog = tmp_path / "cases.yaml"
    catalog.write_text(CASES)
    result = run("spec", "test", child_with_a_rule_that_always_fires(tmp_path),
                 "--catalog", str(catalog), "--coverage")
    assert result.exit_code == 1, result.output  # both cases also get child.schema
    lines = result.output.splitlines()
    # the text listing writes a tagged finding as ``TAG  message``, the section's tags padded
    # to one column (issue 16): "uncovered" is the longest tag here, so two spaces follow it
    schema = next(line for line in lines if line.startswith("uncovered  flare/child child.schema:"))
    assert schema.endswith("no case expects this error rule in rejected_by; it fired, unexpected, "
                           "in 2 case(s) (gone-package, gone-package-and-a-source-that-holds)"), schema
    source = next(line for line in lines if line.startswith("uncovered  flare/child packet.source:"))
    assert source.endswith("expected by 1 case(s) (gone-package-and-a-source-that-holds) but it "
                           "fired in none of them"), source
    assert not any(" package.file.missing:" in line for line in lines if line.startswith("uncovered"))
    assert "no case makes this error rule fail" not in schema + source
    summary = next(line for line in lines if " coverage: " in line)
    assert summary.startswith("flare/child coverage: ") and " not covered (" in summary


def test_a_fully_covered_spec_says_so():
    spec = SimpleNamespace(rules=[SimpleNamespace(id="a", severity="error"),
                                  SimpleNamespace(id="w", severity="warning")],
                           pair=[{"id": "pair.x"}])
    cases = [Case(name="c1", description="", expect={"rejected_by": ["a"]}), Case(name="c2", description="", expect={"rejected_by": ["pair.x"]}),
             Case(name="ok", description="", expect={"accept": True})]
    results = [CaseResult("c1", PASSED, "a", "a", fired=frozenset({"a"})),
               CaseResult("c2", PASSED, "pair.x", "pair.x", fired=frozenset({"pair.x"})),
               CaseResult("ok", PASSED, "pass", "pass")]
    covered = coverage(spec, cases, {}, results, selected=False)
    assert covered.complete and covered.summary() == "coverage: all 2 error rules covered by 2 cases"
    # a case that expects a rule which does not fire there does not cover it
    results[0] = CaseResult("c1", FAILED, "a", "pair.x", fired=frozenset({"pair.x"}))
    covered = coverage(spec, cases, {}, results, selected=False)
    gap, = covered.uncovered
    assert gap.rule == "a" and gap.reason() == "expected by 1 case(s) (c1) but it fired in none of them"
    # a rule only not-applicable cases expect
    covered = coverage(spec, cases, {"c1": "rule a is dropped"}, results, selected=False)
    assert covered.uncovered[0].reason().startswith("only not-applicable cases expect it (c1)")
