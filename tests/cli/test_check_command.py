"""Issue 24: ``flarespec check [--spec ID|FILE] [--specs DIR]... ENTRY...`` validates real
captures of any benchmark tool: each entry file against the spec named or the one whose
``applies_to`` holds among the bundled specs and the spec directories' (``--specs``,
``FLARESPEC_SPECS``); no peer, no metric, no receipt required; reported in argument order.
Specs and entry files are written into tmp_path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_run import run

from flarespec.adapter import parallel

NAME = "profile.json"
REQUESTS = "bench.profile.requests"


def profile_spec(spec_id: str = "bench/profile", schema: str = "profile-v1",
                 file_name: str = NAME, draft: bool = False) -> str:
    """A spec of another tool's entry file: one JSON document, one rule."""
    return f"""\
flarespec: 1
id: {spec_id}
title: A benchmark profile ({schema})
{"draft: true" if draft else ""}
applies_to: {{given: "profile:$.schema", equals: {schema}}}
shapes:
  profile: {{type: object, members: {{schema: string, requests: integer}}}}
documents:
  profile: {{loader: json, entry: true, file_name: {file_name}, rule: bench.profile, shape: profile}}
rules:
  - id: {REQUESTS}
    description: At least one request was sent.
    given: "profile:$.requests"
    assert: {{range: {{min: 1}}}}
"""


@pytest.fixture(autouse=True)
def no_spec_directories_from_outside(monkeypatch):
    monkeypatch.delenv("FLARESPEC_SPECS", raising=False)


@pytest.fixture
def specs(tmp_path) -> Path:
    """A spec directory with two specs of one tool (two schema versions), in subfolders."""
    directory = tmp_path / "specs"
    for name, schema in (("v1", "profile-v1"), ("v2", "profile-v2")):
        (directory / "bench" / name).mkdir(parents=True)
        (directory / "bench" / name / "profile.yaml").write_text(
            profile_spec(f"bench/profile-{name}", schema))
    return directory


def entry(tmp_path: Path, run_name: str, schema: str = "profile-v1", requests: int = 3,
          name: str = NAME) -> Path:
    path = tmp_path / "runs" / run_name / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": schema, "requests": requests}))
    return path


def as_json(result) -> dict:
    return json.loads(result.stdout)


def rules(report: dict) -> list[str]:
    return [finding["rule"] for finding in report["findings"] if finding["kind"] == "fail"]


# --------------------------------------------------------------------------- verdicts
def test_a_passing_entry_exits_0_naming_its_spec(tmp_path, specs):
    result = run("check", "--specs", specs, entry(tmp_path, "a"))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "flarespec check: PASS  1 entry valid"
    assert "entry 1 " in result.stdout and "valid against bench/profile-v1" in result.stdout


def test_a_rejected_entry_exits_2_with_the_rule_id(tmp_path, specs):
    result = run("check", "--specs", specs, entry(tmp_path, "a", requests=0),
                 "--format", "json")
    assert result.exit_code == 2, result.output
    report = as_json(result)
    assert report["ok"] is False and report["command"] == "check"
    assert rules(report) == [REQUESTS]
    [finding] = [f for f in report["findings"] if f["rule"] == REQUESTS]
    assert finding["location"] == "$.requests" and finding["actual"] == 0


def test_json_is_the_one_result_model_with_ok_and_findings_rules(tmp_path, specs):
    result = run("check", "--specs", specs, entry(tmp_path, "a"), "--format", "json")
    assert result.exit_code == 0, result.output
    report = as_json(result)
    assert report["report"] == "flarespec-report-v1" and report["ok"] is True
    assert [f["rule"] for f in report["findings"]] == ["entry.valid"]
    assert report["receipt"]["status"] == "pass"


def test_no_spec_applies_exit_2_naming_the_specs_tried_and_their_conditions(tmp_path, specs):
    result = run("check", "--specs", specs, entry(tmp_path, "a", schema="profile-v9"),
                 "--format", "json")
    assert result.exit_code == 2, result.output
    report = as_json(result)
    assert rules(report) == ["spec.unsupported"]
    [violation] = report["receipt"]["violations"]
    message = violation["message"]
    assert message.startswith("no spec applies to profile.json; tried: "
                              "bench/profile-v1 (profile:$.schema equals 'profile-v1'); "
                              "bench/profile-v2 (profile:$.schema equals 'profile-v2')")
    # the bundled specs check an entry of another name: not tried, and said so
    assert "; not tried, as they check an entry file of another name: " in message
    assert "flare/bce032c0 (packet.json)" in message.split("not tried")[1]
    assert f"specs searched: the bundled specs, {specs}" in message
    assert "Traceback" not in result.output


def test_no_spec_directory_the_bundled_specs_are_tried_and_named(tmp_path):
    result = run("check", entry(tmp_path, "a"))
    assert result.exit_code == 2, result.output
    assert "no spec applies to profile.json; tried: none" in result.stdout
    assert "flare/bce032c0 (packet.json)" in result.stdout


def test_a_draft_that_would_apply_is_named_with_the_way_to_use_it(tmp_path, specs):
    (specs / "draft.yaml").write_text(profile_spec("bench/profile-v3", "profile-v3",
                                                   draft=True))
    path = entry(tmp_path, "a", schema="profile-v3")
    result = run("check", "--specs", specs, path)
    assert result.exit_code == 2, result.output
    assert "spec bench/profile-v3 would apply but is a draft: name it with --spec " \
           "bench/profile-v3" in result.stdout
    named = run("check", "--specs", specs, "--spec", "bench/profile-v3", path)
    assert named.exit_code == 0, named.output


def test_two_entries_of_two_user_specs_are_reported_in_argument_order(tmp_path, specs,
                                                                      monkeypatch):
    monkeypatch.setenv(parallel.JOBS_VARIABLE, "2")
    second = entry(tmp_path, "b", schema="profile-v2", requests=0)
    first = entry(tmp_path, "a", schema="profile-v1")
    result = run("check", "--specs", specs, second, first, "--format", "json")
    assert result.exit_code == 2, result.output
    receipt = as_json(result)["receipt"]
    assert [(r["role"], r["entry"], r["spec"], r["valid"]) for r in receipt["entries"]] == [
        ("entry 1", str(second), "bench/profile-v2", False),
        ("entry 2", str(first), "bench/profile-v1", True)]
    assert [(v["packet"], v["rule"]) for v in receipt["violations"]] == \
        [("entry 1", REQUESTS)]
    text = run("check", "--specs", specs, second, first)
    lines = text.stdout.splitlines()
    assert lines[0] == "flarespec check: REJECTED  1 of 2 entries; 1 violation of 1 rule"
    assert lines[1].startswith("  entry 1 ") and "REJECTED (spec bench/profile-v2)" in lines[1]
    assert lines[2] == f"  [entry 1] {REQUESTS} (1)"
    assert lines[4].startswith("  entry 2 ") and "valid against bench/profile-v1" in lines[4]
    assert "flarespec check: 2/2 entries (100%)" in text.stderr  # progress, on stderr


def test_flarespec_specs_names_spec_directories_like_specs(tmp_path, specs, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    (other / "v3.yaml").write_text(profile_spec("bench/profile-v3", "profile-v3"))
    monkeypatch.setenv("FLARESPEC_SPECS", f"{specs}{os.pathsep}{os.pathsep}{other}")
    result = run("check", entry(tmp_path, "a"), entry(tmp_path, "c", schema="profile-v3"),
                 "--format", "json")
    assert result.exit_code == 0, result.output
    assert [r["spec"] for r in as_json(result)["receipt"]["entries"]] == \
        ["bench/profile-v1", "bench/profile-v3"]
    monkeypatch.setenv("FLARESPEC_SPECS", str(tmp_path / "nowhere"))
    missing = run("check", entry(tmp_path, "a"))
    assert missing.exit_code == 2 and missing.stdout == ""
    assert f"FLARESPEC_SPECS '{tmp_path / 'nowhere'}' is not a directory" in missing.stderr


# --------------------------------------------------------------------------- receipts
def test_output_writes_the_receipt_model_without_a_metric(tmp_path, specs):
    path = entry(tmp_path, "a")
    output = tmp_path / "out" / "check.json"
    result = run("check", "--specs", specs, path, "--output", output)
    assert result.exit_code == 0, result.output
    receipt = json.loads(output.read_text())
    assert (receipt["receipt_schema"], receipt["command"], receipt["status"]) == \
        ("flarespec-receipt-v1", "check", "pass")
    assert "metrics" not in receipt and "metric" not in receipt["entries"][0]
    [record] = receipt["entries"]
    assert record["entry"] == str(path) and record["valid"] is True
    import hashlib
    assert record["entry_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    [spec] = receipt["validator"]["specs"]
    source = specs / "bench" / "v1" / "profile.yaml"
    assert spec["files"] == [{"path": str(source), "id": "bench/profile-v1",
                              "sha256": hashlib.sha256(source.read_bytes()).hexdigest()}]
    assert f"receipt: {output}" in result.stdout
    shown = run("report", output, "--format", "json")  # a stored check receipt renders
    assert shown.exit_code == 0, shown.output
    assert as_json(shown)["command"] == "check"


def test_a_rejected_check_receipt_renders_and_refuses_a_metric(tmp_path, specs):
    output = tmp_path / "check.json"
    assert run("check", "--specs", specs, entry(tmp_path, "a", requests=0), "--output",
               output).exit_code == 2
    assert run("report", output).exit_code == 1
    receipt = json.loads(output.read_text())
    receipt["entries"][0]["metric"] = {"key": "k", "value": 1}
    output.write_text(json.dumps(receipt))
    refused = run("report", output)
    assert refused.exit_code == 2 and "a rejection carries no metric" in refused.stderr


@pytest.mark.parametrize("version, what", [("v1", "a spec file"),  # the spec used
                                           ("v2", "a spec file of a spec directory")])
def test_the_output_may_not_replace_a_spec_file_of_a_spec_directory(tmp_path, specs, version,
                                                                    what):
    source = specs / "bench" / version / "profile.yaml"
    before = source.read_text()
    result = run("check", "--specs", specs, entry(tmp_path, "a"), "--output", source)
    assert result.exit_code == 2, result.output
    assert f"names {what} that this command reads" in result.stderr
    assert source.read_text() == before


def test_a_flare_packet_passes_with_its_metric_in_its_record(tmp_path):
    written = run("fixture", "write", tmp_path / "packet")
    assert written.exit_code == 0, written.output
    output = tmp_path / "check.json"
    result = run("check", tmp_path / "packet" / "packet.json", "--output", output)
    assert result.exit_code == 0, result.output
    [record] = json.loads(output.read_text())["entries"]
    assert record["spec"] == "flare/bce032c0" and record["valid"] is True
    assert record["metric"]["key"] == "metrics.delivery_ttft_ns"
    assert record["metrics"]["delivery_ttft_ns"] == record["metric"]["value"]
    assert "metrics.delivery_ttft_ns = " in result.stdout


# --------------------------------------------------------------------------- the library
def test_a_spec_id_used_twice_is_refused_naming_both_files(tmp_path, specs):
    copy = tmp_path / "more" / "copy.yaml"
    copy.parent.mkdir()
    copy.write_text(profile_spec("bench/profile-v1"))
    output = tmp_path / "r.json"
    result = run("check", "--specs", specs, "--specs", copy.parent, entry(tmp_path, "a"),
                 "--output", output)
    assert result.exit_code == 2 and result.stdout == ""
    assert "[spec.duplicate-id]" in result.stderr and str(copy) in result.stderr
    assert str(specs / "bench" / "v1" / "profile.yaml") in result.stderr
    assert not output.exists()


def test_a_user_spec_with_a_bundled_id_is_refused_naming_both_files(tmp_path):
    directory = tmp_path / "specs"
    directory.mkdir()
    (directory / "flare.yaml").write_text(profile_spec("flare/bce032c0"))
    result = run("check", "--specs", directory, entry(tmp_path, "a"))
    assert result.exit_code == 2 and "[spec.duplicate-id]" in result.stderr
    assert str(directory / "flare.yaml") in result.stderr
    assert "bce032c0.yaml" in result.stderr and "does not replace a bundled one" in \
        result.stderr


def test_a_broken_spec_file_is_named_and_not_fatal_for_other_entries(tmp_path, specs):
    (specs / "half.yaml").write_text("flarespec: 1\nid: [x\n")
    result = run("check", "--specs", specs, entry(tmp_path, "a"))
    assert result.exit_code == 0, result.output
    assert f"{specs / 'half.yaml'}:" in result.stderr and "[spec.yaml]" in result.stderr
    unsupported = run("check", "--specs", specs, entry(tmp_path, "b", schema="profile-v9"),
                      "--format", "json")
    assert unsupported.exit_code == 2
    [violation] = as_json(unsupported)["receipt"]["violations"]
    assert violation["message"].endswith(
        f"1 spec file(s) do not load and were not considered: {specs / 'half.yaml'} "
        f"(flarespec spec lint names why)")


def test_a_child_in_a_spec_directory_extends_a_spec_of_another_file_name(tmp_path, specs):
    (specs / "child.yaml").write_text(
        "flarespec: 1\nid: bench/child\ntitle: c\nextends: bench/profile-v1\n"
        "applies_to: {given: 'profile:$.schema', equals: profile-v7}\n")
    result = run("check", "--specs", specs, entry(tmp_path, "a", schema="profile-v7",
                                                  requests=0), "--format", "json")
    assert result.exit_code == 2
    receipt = as_json(result)["receipt"]
    assert receipt["entries"][0]["spec"] == "bench/child"
    assert rules(as_json(result)) == [REQUESTS]  # the inherited rule


def test_an_unknown_spec_id_is_refused_listing_the_known_ones(tmp_path, specs):
    result = run("check", "--specs", specs, "--spec", "bench/profile-v4", entry(tmp_path, "a"))
    assert result.exit_code == 2 and result.stdout == ""
    assert "'bench/profile-v4' is neither a spec file nor a spec id (did you mean " \
           "'bench/profile-v" in result.stderr and "[spec.unknown]" in result.stderr
    assert "bench/profile-v2, flare/bce032c0" in result.stderr


def test_a_spec_file_named_is_used_for_an_entry_of_any_name(tmp_path):
    spec = tmp_path / "profile.yaml"
    spec.write_text(profile_spec())
    result = run("check", "--spec", spec, entry(tmp_path, "a", name="other.json"))
    assert result.exit_code == 0, result.output


def test_an_entry_spelled_as_a_directory_is_a_usage_error(tmp_path, specs):
    result = run("check", "--specs", specs, f"{entry(tmp_path, 'a')}/")
    assert result.exit_code == 2 and "names a directory" in result.stderr


# --------------------------------------------------------------------------- workers
def test_run_all_forks_one_worker_per_call_and_keeps_the_order(monkeypatch):
    monkeypatch.setenv(parallel.JOBS_VARIABLE, "2")
    done = []
    results = parallel.run_all(lambda n: (n, os.getpid()), [(n,) for n in range(5)],
                               lambda index, problem: None, workers=2, on_done=done.append)
    assert [n for n, _ in results] == list(range(5))
    assert os.getpid() not in {pid for _, pid in results}  # each in a worker
    assert sorted(done) == list(range(5))


def test_run_all_fails_closed_for_a_worker_that_dies(monkeypatch):
    monkeypatch.setenv(parallel.JOBS_VARIABLE, "2")

    def dies_on_one(n):
        if n == 1:
            os._exit(3)
        return n

    results = parallel.run_all(dies_on_one, [(0,), (1,), (2,)],
                               lambda index, problem: ("failed", index, str(problem)),
                               workers=2)
    assert results == [0, ("failed", 1, "the worker process ended with status 3"), 2]


def test_run_all_with_one_job_runs_here_in_turn(monkeypatch):
    monkeypatch.setenv(parallel.JOBS_VARIABLE, "1")
    results = parallel.run_all(lambda n: os.getpid(), [(0,), (1,)], lambda *a: None,
                               workers=parallel.jobs())
    assert results == [os.getpid(), os.getpid()]
