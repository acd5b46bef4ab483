"""``flarespec spec test`` (and its alias ``fixture check``) through the CLI, on the bundled
spec, on child specs written into tmp_path and on small catalogs."""

from __future__ import annotations

import re

import copy
import json
import xml.etree.ElementTree as ET

import pytest
import yaml

from cli_run import run

BUNDLED = "flare/bce032c0"
SUBSET = "missing-response"        # a quick -k subset of the bundled catalog




def child_spec(tmp_path, **changes) -> str:
    """A child of the bundled spec with ``changes``, written into tmp_path."""
    child = {"flarespec": 1, "id": "flare/child", "title": "a child for spec test",
             "extends": BUNDLED, **changes}
    path = tmp_path / "child.yaml"
    path.write_text(yaml.safe_dump(child, sort_keys=False))
    return str(path)


def catalog(tmp_path, cases: str, spec: str = BUNDLED) -> str:
    path = tmp_path / "cases.yaml"
    path.write_text(f"spec: {spec}\nnames:\n  measured: {{format: \"${{group_id_format}}\", "
                    f"repetition: 0, kind: \"${{measured_kind}}\"}}\ncases:\n{cases}")
    return str(path)


def test_bundled_subset_passes(flare_spec):
    result = run("spec", "test", BUNDLED, "-k", SUBSET)
    assert result.exit_code == 0, result.output
    last = result.output.splitlines()[-1]
    assert last.startswith(f"{BUNDLED}: ") and " 0 failed, 0 not applicable" in last
    assert int(last.split(": ")[1].split(" passed")[0]) >= 1


def test_fixture_check_is_the_same_command():
    ours = run("fixture", "check", BUNDLED, "-k", "missing-response-sse")
    theirs = run("spec", "test", BUNDLED, "-k", "missing-response-sse")
    assert ours.exit_code == theirs.exit_code == 0
    def strip(text: str) -> str:  # the wall times differ (the summary's, progress lines')
        return re.sub(r"\d+(\.\d+)? s\b", "N s", text)
    assert strip(ours.output) == strip(theirs.output)
    assert "Alias of `flarespec spec test`" in run("fixture", "--help").output


def test_k_without_a_match_is_a_usage_error():
    result = run("spec", "test", BUNDLED, "-k", "no-such-case")
    assert result.exit_code == 2
    assert "-k 'no-such-case' matches no case" in result.output


def test_an_unknown_spec_is_a_usage_error():
    result = run("spec", "test", "flare/nope")
    assert result.exit_code == 2
    assert "[spec.unknown]" in result.output


def test_a_child_that_drops_a_rule_reports_its_case_not_applicable(tmp_path):
    spec = child_spec(tmp_path, drop_rules=["packet.schema"])
    result = run("spec", "test", spec, "-k", "packet-schema")
    assert result.exit_code == 0, result.output
    assert "rule packet.schema is dropped" in result.output
    assert "0 failed, 1 not applicable" in result.output.splitlines()[-1]


def test_a_child_that_renames_a_counter_still_passes(tmp_path, flare_constants):
    """The cases name counters through ${counters.*}: a renamed counter keeps them meaningful
    (with the old spelled-out name they would plant a sample the snapshot rules ignore)."""
    old, new = flare_constants["counters"]["completed"], "flare_requests_done_total"
    idle = copy.deepcopy(flare_constants["idle_metrics"])
    for metric in idle:
        metric["name"] = new if metric["name"] == old else metric["name"]
    counters = dict(flare_constants["counters"], completed=new)
    spec = child_spec(tmp_path, constants={"counters": counters, "idle_metrics": idle})
    result = run("spec", "test", spec, "-k", "snapshot-completed")
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed" in result.output.splitlines()[-1]


WRONG = """\
  - name: wrongly-expected
    description: The SSE file is removed but the case expects another rule.
    mutate:
      - {op: remove_file, file: "run/${measured}/${request_id_format}/response.sse"}
    expect: {rejected_by: [packet.schema]}
"""


def test_a_wrong_expectation_fails_with_expected_vs_got(tmp_path):
    cases = WRONG.replace("${request_id_format}", "${measured}.q0")
    result = run("spec", "test", BUNDLED, "--catalog", catalog(tmp_path, cases))
    assert result.exit_code == 1
    # the text listing writes a tagged finding as ``TAG  message`` (issue 16)
    assert (f"FAIL  {BUNDLED} wrongly-expected: expected packet.schema; got response.file.missing "
            f"(missing ['packet.schema'], unexpected ['response.file.missing'])") \
        in result.output.splitlines()
    assert result.output.splitlines()[-1].startswith(
        f"{BUNDLED}: 0 passed, 1 failed, 0 not applicable")


def test_a_crashing_case_is_a_failure_not_a_traceback(tmp_path):
    cases = WRONG.replace("${request_id_format}", "${no.such.constant}")
    result = run("spec", "test", BUNDLED, "--catalog", catalog(tmp_path, cases))
    assert result.exit_code == 1
    assert "got crash: CatalogError: case wrongly-expected: ${no.such.constant}: neither a catalog" \
        in result.output


def test_github_and_junit_formats(tmp_path):
    """The failed case is an annotation at its catalog (relative to --root) titled by spec
    and case, and the run ends with one summary annotation; in JUnit it is a failing test
    case. Since issue 16 the JUnit suite is a section of the report: a spec's cases form a
    section without heading, so the suite is named ``flarespec spec test`` (no longer by the
    spec id); the spec id is in each test case's name, the spec's summary in the suite's
    system-out."""
    cases = WRONG.replace("${request_id_format}", "${measured}.q0")
    github = run("spec", "test", BUNDLED, "--catalog", catalog(tmp_path, cases), "--format", "github",
                 "--root", tmp_path)
    assert github.exit_code == 1
    lines = github.stdout.splitlines()  # progress goes to stderr
    # at the case's own line in the catalog (the spec, names and cases lines come first)
    assert lines[0].startswith(f"::error file=cases.yaml,line=5,title={BUNDLED} wrongly-expected::"
                               f"{BUNDLED} wrongly-expected: expected packet.schema; "
                               f"got response.file.missing"), lines
    assert lines[-1] == "::error title=flarespec spec test::spec test: 1 spec, 1 cases, 1 failed"
    report = tmp_path / "cases.xml"
    junit = run("spec", "test", BUNDLED, "--catalog", catalog(tmp_path, cases), "--format", "junit",
                "--output", str(report))
    assert junit.exit_code == 1 and junit.stdout == ""
    suite = ET.parse(report).getroot().find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == \
        ("flarespec spec test", "1", "1")
    assert suite.find("testcase").get("name").startswith(f"{BUNDLED} wrongly-expected")
    assert "expected packet.schema" in suite.find("testcase/failure").get("message")
    assert suite.find("system-out").text.startswith(f"{BUNDLED}: 0 passed, 1 failed")


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_coverage_lists_error_rules_no_case_fails(tmp_path, fmt):
    cases = WRONG.replace("${request_id_format}", "${measured}.q0").replace(
        "[packet.schema]", "[response.file.missing]")
    result = run("spec", "test", BUNDLED, "--catalog", catalog(tmp_path, cases), "--coverage",
                 "--format", fmt)
    assert result.exit_code == 0, result.output
    uncovered = [line for line in result.output.splitlines() if "no case makes this error rule fail" in line]
    assert any(line.endswith(f"{BUNDLED} packet.schema: no case makes this error rule fail") for line in uncovered)
    assert not any(" response.file.missing:" in line for line in uncovered)


MANIFEST_RULES = {"packet.files.missing-entry": "manifest_lists_all",
                  "packet.files.extra-entry": "manifest_lists_only",
                  "packet.files.digest": "manifest_digests"}


def test_a_child_that_drops_a_document_reports_its_cases_not_applicable(tmp_path, flare_spec):
    """Cases expecting the dropped document's codes, or changing its file, no longer apply;
    the rest still pass on packets the writer writes without that file."""
    documents = [name for name in flare_spec.documents if name not in ("packet", "run_dir", "request_body")]
    rules = [{"id": rule_id, "replaces": True, "description": "files without request bodies.", "given": "packet:$.files",
              "assert": {kind: documents}} for rule_id, kind in MANIFEST_RULES.items()]
    spec = child_spec(tmp_path, drop_documents=["request_body"], rules=rules, drop_rules=[
        "request.sha256.corpus", "request.sha256.observation", "request.max-tokens", "request.stream"],
        shapes={"corpus_request": {"drop_members": ["request_sha256"]},
                "observation": {"drop_members": ["request_sha256"]}})
    result = run("spec", "test", spec, "-k", "request")
    assert result.exit_code == 0, result.output
    assert "missing-request-json: document request_body is dropped" in result.output
    assert "request-max-tokens-wrong: rule request.max-tokens is dropped" in result.output
    assert " 0 failed, " in result.output.splitlines()[-1]
    # a case that removes a request everywhere names its files by identity ({documents:
    # all, request: ...}): without request bodies it still applies, and passes
    report = json.loads(run("spec", "test", spec, "-k", "corpus-missing-request", "-q", "--format",
                            "json").output)
    assert [(case["name"], case["status"]) for case in report["specs"][0]["cases"]] == [
        ("corpus-missing-request", "passed")]


def test_expectations_follow_a_renamed_rule(tmp_path, flare_spec):
    schema = next(rule for rule in flare_spec.resolved.plain()["rules"] if rule["id"] == "packet.schema")
    renamed = dict(schema, id="packet.schema-name", renamed_from="packet.schema")
    spec = child_spec(tmp_path, rules=[renamed])
    result = run("spec", "test", spec, "-k", "packet-schema")
    assert result.exit_code == 0, result.output
    assert " 0 failed, 0 not applicable" in result.output.splitlines()[-1]
    coverage = run("spec", "test", spec, "-k", "packet-schema", "--coverage").output
    assert "uncovered" not in coverage and "-k selection targets: packet.schema-name" in coverage
    assert " packet.source" not in coverage  # -k counts only what the selection targets


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_output_writes_the_report_in_any_format(tmp_path, fmt):
    """--output used to be for --format junit only (a usage error otherwise); since issue 16
    it writes the report in any format to the file, and stdout stays empty."""
    out = tmp_path / f"report.{fmt}"
    result = run("spec", "test", BUNDLED, "-k", SUBSET, "--format", fmt, "--output", out)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # progress goes to stderr
    written = out.read_text()
    if fmt == "json":
        document = json.loads(written)
        assert document["command"] == "spec test" and document["ok"] is True
        assert [spec["id"] for spec in document["specs"]] == [BUNDLED]
        assert document["specs"][0]["cases"] and all(
            case["status"] == "passed" for case in document["specs"][0]["cases"])
    else:
        assert written.startswith(("### " if fmt == "markdown" else "") + "spec test: 1 spec, ")
        assert f"{BUNDLED}: " in written and " 0 failed, 0 not applicable" in written


def test_a_case_expecting_a_dropped_rule_among_others_still_proves_the_others(tmp_path):
    """A new-user review: dropping snapshot.conservation made the four sample cases (which
    also expect it) not applicable, so snapshot.sample.finite/integral lost their only cases
    silently. They now run, expecting the rules that remain."""
    spec = child_spec(tmp_path, drop_rules=["snapshot.conservation"])
    result = run("spec", "test", spec, "-k", "snapshot-sample-n")
    assert result.exit_code == 0, result.output
    assert "not applicable" not in result.output.splitlines()[-1].replace(
        "0 not applicable", "")
    assert " 0 failed, 0 not applicable" in result.output.splitlines()[-1]
