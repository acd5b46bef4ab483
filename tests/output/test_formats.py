"""Every format of every command that reports findings, on a real case (issue 16): a
rejection with a line (measure and report), a lint error, a loosening diff, a failing spec
test case and an impact flip. SARIF validates against the official schema and meets GitHub
code scanning's rules; JSON parses and carries the findings; JUnit parses and fails where
the command fails; GitHub annotations are well formed and escaped; stdout carries only
the chosen format."""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from flarespec.cli import main
from flarespec.output.formats import FORMATS

HERE = Path(__file__).resolve().parent
SCHEMA = json.loads((HERE.parent / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text())
DIFF_DATA = HERE.parent / "spec_diff" / "data"
TOY = HERE.parent / "engine" / "toy"
BUNDLED = "flare/bce032c0"


def run(*args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [str(a) for a in args],
                                                  catch_exceptions=False)
    finally:
        os.chdir(old)


def _edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


@pytest.fixture(scope="module")
def work(tmp_path_factory, flare_spec) -> Path:
    """A scratch repository: a rejected packet pair (a memory report that disagrees with
    every snapshot: violations with lines), its receipt, a spec with a lint error, a
    failing catalog case, and the toy impact corpus with one flip."""
    from flarespec.fixtures.writers import write_pair

    root = tmp_path_factory.mktemp("formats")
    baseline, candidate = write_pair(root / "packets", flare_spec)
    _edit_json(Path(baseline).parent / "preparation" / "memory-report.json",
               lambda d: d.update(kv_pages_total=9999))
    (root / "specs").mkdir()
    (root / "specs" / "bad.yaml").write_text("flarespec: 1\nid: toy/bad\ntitle: t\nbogus: 1\n")
    (root / "cases.yaml").write_text(
        f"spec: {BUNDLED}\nnames:\n  measured: {{format: \"${{group_id_format}}\", "
        f"repetition: 0, kind: \"${{measured_kind}}\"}}\ncases:\n"
        "  - name: wrongly-expected\n    description: expects another rule.\n    mutate:\n"
        "      - {op: remove_file, file: \"run/${measured}/${measured}.q0/response.sse\"}\n"
        "    expect: {rejected_by: [packet.schema]}\n")
    shutil.copy(TOY / "base.yaml", root / "base.yaml")
    (root / "child.yaml").write_text(
        "flarespec: 1\nid: toy/child\nextends: toy/base\ntitle: a sku rule\nrules:\n"
        "  - id: toy.item.sku\n    description: A sku is one lower-case letter.\n"
        "    for_each: item\n    given: \"item:$.sku\"\n    assert: {regex: \"^[a-z]$\"}\n")
    shutil.copytree(TOY / "inventory", root / "inputs" / "upper")
    _edit_json(root / "inputs" / "upper" / "shelves" / "s0.json",
               lambda d: d["items"][0].update(sku="A"))
    _edit_json(root / "inputs" / "upper" / "stock.json",
               lambda d: d.update(counts={"A": 1, "b": 2, "c": 3}))
    shutil.copytree(TOY / "inventory", root / "inputs" / "same")
    run("measure", "--packet", baseline, "--peer", candidate, "--output",
        root / "receipt.json", "-q", cwd=root)
    return root


# command -> (arguments, the exit code of its failing case, a file its findings name)
COMMANDS = {
    "measure": (["measure", "--packet", "packets/baseline/packet.json", "--peer",
                 "packets/candidate/packet.json", "--output", "again.json"], 2,
                "packets/baseline/run/metrics/"),
    "report": (["report", "receipt.json"], 1, "packets/baseline/run/metrics/"),
    "spec lint": (["spec", "lint", "specs/bad.yaml"], 2, "specs/bad.yaml"),
    "spec diff": (["spec", "diff", DIFF_DATA / "base.yaml", DIFF_DATA / "bounds.yaml",
                   "--fail-on", "loosening"], 1, None),
    "spec test": (["spec", "test", BUNDLED, "--catalog", "cases.yaml", "-q"], 1, "cases.yaml"),
    "spec impact": (["spec", "impact", "base.yaml", "child.yaml", "inputs", "--entry",
                     "index.json", "--fail-on", "flip", "-q"], 1, "inputs/upper/index.json"),
}


@pytest.fixture(scope="module")
def outputs(work) -> dict:
    """(command, format) -> the click result, each run once."""
    return {(command, fmt): run(*args, "--format", fmt, cwd=work)
            for command, (args, _, _) in COMMANDS.items() for fmt in FORMATS}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_format_of_every_command_reports_the_failing_case(outputs, command, fmt):
    result = outputs[(command, fmt)]
    _, code, named = COMMANDS[command]
    assert result.exit_code == code, (result.stdout, result.stderr)
    out = result.stdout
    assert "Traceback" not in out + result.stderr
    if fmt == "json":
        document = json.loads(out)
        assert document["report"] == "flarespec-report-v1" and document["ok"] is False
        assert any(f["level"] == "error" and f["kind"] == "fail" for f in document["findings"])
        if named:
            assert any((f["file"] or "").startswith(named) for f in document["findings"])
    elif fmt == "junit":
        suites = ElementTree.fromstring(out)
        assert suites.tag == "testsuites" and suites.findall(".//testcase/failure")
    elif fmt == "sarif":
        assert json.loads(out)["runs"][0]["results"]
    elif fmt == "github":
        lines = out.splitlines()
        assert lines and all(line.startswith("::") for line in lines)
        assert any(line.startswith("::error ") for line in lines)
        if named:
            assert any(f"file={named}" in line for line in lines), out
    elif fmt == "markdown":
        assert out.startswith("### ") and ("| level | rule | where | message |" in out
                                           or "| class | where | message |" in out)
    else:
        assert out.splitlines()[0].startswith(("flarespec ", "spec "))
    assert not result.stderr.startswith("::") and "<?xml" not in result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_sarif_validates_and_meets_github_code_scanning_rules(outputs, command):
    log = json.loads(outputs[(command, "sarif")].stdout)
    jsonschema.validators.validator_for(SCHEMA)(SCHEMA).validate(log)
    assert log["version"] == "2.1.0"
    (one,) = log["runs"]
    driver = one["tool"]["driver"]
    assert driver["name"] == "flarespec" and driver["version"]
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert len(rules) == len(driver["rules"])
    for rule in rules.values():
        assert rule["shortDescription"]["text"].strip() and rule["help"]["text"].strip()
    for result in one["results"]:
        assert result["ruleId"] in rules
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note", "none")
        assert result["message"]["text"].strip()
        assert result["partialFingerprints"]["flarespec/v1"]
        (location,) = result["locations"]  # every result is placed (documented anchors)
        uri = location["physicalLocation"]["artifactLocation"]["uri"]
        assert uri and not uri.startswith("/") and ":" not in uri.split("/")[0], uri
        region = location["physicalLocation"].get("region")
        if region is not None:
            assert region["startLine"] >= 1
    assert any(r["level"] == "error" for r in one["results"])


@pytest.mark.parametrize("command", ["spec lint", "spec diff", "report", "spec test"])
def test_sarif_fingerprints_are_stable_across_identical_runs(work, outputs, command):
    args, _, _ = COMMANDS[command]
    again = json.loads(run(*args, "--format", "sarif", cwd=work).stdout)
    first = json.loads(outputs[(command, "sarif")].stdout)

    def prints(log):
        return [r["partialFingerprints"] for r in log["runs"][0]["results"]]
    assert prints(again) == prints(first)
    assert len({json.dumps(p) for p in prints(first)}) == len(prints(first))  # all distinct


def test_a_finding_with_a_line_has_a_region_and_one_without_is_placed_at_its_file(outputs):
    log = json.loads(outputs[("report", "sarif")].stdout)
    results = log["runs"][0]["results"]
    conservation = [r for r in results if r["ruleId"] == "snapshot.conservation"]
    assert conservation and all(
        r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1 for r in conservation)
    pair = [r for r in results if r["ruleId"].startswith("pair.")]
    assert pair and all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                        == "packets/baseline/packet.json" for r in pair)  # the anchor


def test_root_makes_files_relative_to_it(work):
    args, _, _ = COMMANDS["report"]
    log = json.loads(run(*args, "--format", "sarif", "--root", "packets", cwd=work).stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}
    assert uris and all(uri.startswith("baseline/") for uri in uris), uris
    outside = json.loads(run(*args, "--format", "json", "--root", "specs", cwd=work).stdout)
    assert all(f["file"].startswith("../packets/") for f in outside["findings"] if f["file"])


def test_a_pass_receipt_renders_in_every_format_and_exits_0(work, flare_spec):
    from flarespec.fixtures.writers import write_pair

    baseline, candidate = write_pair(work / "good", flare_spec)
    run("measure", "--packet", baseline, "--peer", candidate, "--output", work / "ok.json",
        "-q", cwd=work)
    for fmt in FORMATS:
        result = run("report", "ok.json", "--format", fmt, cwd=work)
        assert result.exit_code == 0, (fmt, result.stdout)
    assert "PASS  metrics.delivery_ttft_ns = " in run("report", "ok.json", cwd=work).stdout
    junit = ElementTree.fromstring(run("report", "ok.json", "--format", "junit", cwd=work).stdout)
    assert junit.findall(".//testcase") and not junit.findall(".//failure")
    sarif = json.loads(run("report", "ok.json", "--format", "sarif", cwd=work).stdout)
    jsonschema.validators.validator_for(SCHEMA)(SCHEMA).validate(sarif)
    assert sarif["runs"][0]["results"] == []


def test_report_refuses_what_is_not_a_receipt(work):
    (work / "not.json").write_text('{"a": 1}')
    (work / "broken.json").write_text("{")
    for name, said in (("not.json", "is not a flarespec receipt"), ("broken.json", "is not JSON"),
                       ("missing.json", "cannot read")):
        result = run("report", name, cwd=work)
        assert result.exit_code == 2 and said in result.stderr and result.stdout == ""
        assert "Traceback" not in result.stderr


def test_measure_with_a_format_writes_the_same_receipt(work):
    args, _, _ = COMMANDS["measure"]
    run(*args, cwd=work)
    plain = (work / "again.json").read_bytes()
    result = run(*args, "--format", "json", cwd=work)
    assert json.loads(result.stdout)["receipt"]["status"] == "rejected"
    assert result.stderr == ""  # the report replaces the summary
    assert json.loads((work / "again.json").read_bytes())["violations"] == \
        json.loads(plain)["violations"]


@pytest.mark.parametrize("command", ["spec test", "spec impact"])
def test_progress_goes_to_stderr_never_into_the_chosen_format(work, command):
    """Without a terminal, progress is plain lines on stderr (docs/progress.md); stdout
    stays the format alone; --quiet shows none."""
    args = [a for a in COMMANDS[command][0] if a != "-q"]
    result = run(*args, "--format", "json", cwd=work)
    json.loads(result.stdout)  # nothing but the format on stdout
    unit = "cases" if command == "spec test" else "inputs"
    lines = [line for line in result.stderr.splitlines() if f" {unit} (" in line]
    assert lines and lines[-1].startswith(command) and "(100%)" in lines[-1], result.stderr
    quiet = run(*args, "--format", "json", "-q", cwd=work)
    assert f" {unit} (" not in quiet.stderr
    assert json.loads(quiet.stdout)["findings"] == json.loads(result.stdout)["findings"]


def test_a_failed_case_is_placed_at_its_line_in_the_catalog(outputs):
    log = json.loads(outputs[("spec test", "sarif")].stdout)
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "spec-test.case"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "cases.yaml"
    assert location["region"]["startLine"] == 5  # "  - name: wrongly-expected"


def _broken(receipt: dict, case: str) -> dict:
    """The receipt hand-broken one way (the ``case``)."""
    if case == "violation-not-an-object":
        receipt["violations"] = [1]
    elif case == "violation-without-rule":
        del receipt["violations"][0]["rule"]
    elif case == "packet-not-an-object":
        receipt["packet"] = "x"
    elif case == "line-zero":
        receipt["violations"][0]["line"] = 0
    elif case == "severity-unknown":
        receipt["violations"][0]["severity"] = "fatal"
    elif case == "warnings-null":
        receipt["warnings"] = None
    elif case == "pass-with-violations":
        receipt["status"] = "pass"
    elif case == "rejection-with-metric":
        receipt["metrics"] = {"delivery_ttft_ns": 1}
    elif case == "rejection-without-violations":
        receipt["violations"] = []
    elif case == "peer-missing":
        del receipt["peer"]
    return receipt


# hand-broken receipt -> the member the refusal names
BROKEN = {"violation-not-an-object": "$.violations[0]",
          "violation-without-rule": "$.violations[0].rule",
          "packet-not-an-object": "$.packet:", "line-zero": "$.violations[0].line",
          "severity-unknown": "$.violations[0].severity", "warnings-null": "$.warnings",
          "pass-with-violations": "$.violations: a pass lists no violation",
          "rejection-with-metric": "a rejection carries no metric",
          "rejection-without-violations": "$.violations: a rejection lists at least one",
          "peer-missing": "$.peer: required for measure"}


@pytest.mark.parametrize("case", BROKEN)
def test_report_refuses_a_hand_broken_receipt_naming_the_member(work, case):
    """Every member the report reads has a declared type, and the verdict must agree with
    itself: a broken receipt is refused (exit 2, stdout empty), never shown, never a pass."""
    receipt = json.loads((work / "receipt.json").read_text())
    (work / f"{case}.json").write_text(json.dumps(_broken(receipt, case)))
    for fmt in ("text", "sarif"):
        result = run("report", f"{case}.json", "--format", fmt, cwd=work)
        assert result.exit_code == 2 and result.stdout == "", (case, result.stdout)
        assert "is not a receipt this version reads" in result.stderr
        assert BROKEN[case] in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
