"""Issue 25, "Messages a user can act on": each found by breaking a packet by hand.

A cause's consequences are shown under it (one missing SSE event, one missing Prometheus
line, a value and its copy), the receipt still listing every violation; no "the snapshot
snapshot"; a section shows its warnings; a cross-copy mismatch names both files without
--verbose; a value the receipt shortened keeps its whole length; JUnit names hold no
absolute path; ``spec test`` says a rejection case passed in words."""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli_run import run
from flarespec.adapter.causes import causes, keys_of
from flarespec.adapter.commands import measure
from flarespec.adapter.receipt_report import ReceiptView, receipt_report
from flarespec.fixtures.mutations import parse_sse_blocks, refresh_digests, set_json
from flarespec.fixtures.writers import write_pair
from flarespec.output import json as json_format, junit, markdown, text
from flarespec.output.model import Finding, Report, Section
from flarespec.output.text import short, short_pair

SPEC = "flare/bce032c0"
REQUEST = "run/r0.ttft-512/r0.ttft-512.q1"
AFTER = "run/metrics/r0.ttft-512.after.prom"


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[Path, Path]:
    return write_pair(tmp_path_factory.mktemp("pair"), SPEC)


def broken(tmp_path: Path, pair, edit) -> tuple[dict, str]:
    """The receipt of measuring a copy of the baseline edited by ``edit`` (digests
    refreshed), and the text summary of it."""
    root = tmp_path / "baseline"
    shutil.copytree(pair[0].parent, root)
    edit(root)
    refresh_digests(root)
    outcome = measure(root / "packet.json", pair[1], tmp_path / "r.json")
    assert outcome.exit_code == 2
    return outcome.receipt, text.render(receipt_report(ReceiptView(outcome.receipt), rules={}))


def drop_sse_event(root: Path, event: int) -> None:
    """Delete the ``event``-th data event (0-based) of the request's raw stream."""
    path = root / REQUEST / "response.sse"
    blocks = [block for block, _ in parse_sse_blocks(path.read_text())]
    data = [i for i, block in enumerate(blocks) if block.startswith("data:")]
    del blocks[data[event]]
    path.write_text("\n\n".join(blocks) + "\n\n")


def drop_prom_line(root: Path, sample: str) -> None:
    path = root / AFTER
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if not line.startswith(sample + " ")))


def headings(report) -> list[str]:
    return [section.heading for section in report.sections if section.heading]


# --------------------------------------------------------------------------- item 1

def test_one_missing_sse_event_is_one_cause_and_the_receipt_keeps_every_violation(
        tmp_path, pair):
    receipt, shown = broken(tmp_path, pair, lambda root: drop_sse_event(root, 2))
    rules = {v["rule"] for v in receipt["violations"]}
    assert rules == {"observation.events.match-sse", "observation.events.no-extra"}
    count = len(receipt["violations"])
    assert count > 10  # every later event meets its neighbour's counterpart
    cause = (f"[packet] cause: {REQUEST}/response.sse $.events[2] is missing, or "
             f"{REQUEST}/observation.json $.events[2] is one too many (the elements after "
             f"it are compared one place apart): {count} violations of 2 rules follow from it")
    assert shown.splitlines()[0] == \
        f"flarespec measure: REJECTED  {count} violations of 2 rules; no metric exported"
    assert f"  {cause}" in shown.splitlines()
    assert "[packet] observation.events.match-sse (" not in shown  # no per-rule section left
    assert f"… and {count - 5} more (see the receipt)" in shown
    report = receipt_report(ReceiptView(receipt), rules={})
    assert len(report.findings) == count  # grouped, none dropped
    assert f"#### {cause}" in markdown.render(report)
    listed = json.loads(json_format.render(report))["findings"]
    assert {finding["cause"] for finding in listed} == {cause.split("cause: ", 1)[1]}


def test_one_missing_prometheus_line_is_one_cause_with_its_warning(tmp_path, pair):
    receipt, shown = broken(tmp_path, pair, lambda root: drop_prom_line(
        root, "flare_requests_completed_total"))
    errors = sorted(v["rule"] for v in receipt["violations"])
    assert errors == ["snapshot.counters.monotonic", "snapshot.delta.completed",
                      "snapshot.sample.exactly-one"]
    assert [w["rule"] for w in receipt["warnings"]] == ["snapshot.counters.continuity"]
    assert (f"  [packet] cause: {AFTER} $.unlabelled.flare_requests_completed_total is "
            f"missing: 3 violations and 1 warning of 4 rules follow from it") in shown.splitlines()
    assert "warnings:" not in shown  # the one warning is under its cause
    assert "previous group's after snapshot" in shown


# --------------------------------------------------------------------------- item 2

def test_a_missing_conservation_part_says_the_snapshot_once(tmp_path, pair):
    receipt, shown = broken(tmp_path, pair, lambda root: drop_prom_line(
        root, "flare_kv_pages_free"))
    messages = [v["message"] for v in receipt["violations"]]
    assert any(m.endswith("no unlabelled sample in the snapshot") for m in messages), messages
    assert "snapshot snapshot" not in json.dumps(receipt) and "snapshot snapshot" not in shown
    assert {v["rule"] for v in receipt["violations"]} == {"snapshot.sample.exactly-one",
                                                         "snapshot.conservation"}


# --------------------------------------------------------------------------- item 4

def test_a_cross_copy_mismatch_names_both_files_without_verbose(tmp_path, pair):
    receipt, shown = broken(tmp_path, pair, lambda root: set_json(
        root, "run/measurements.json", "$.groups[1].observations[1].http_status", 201))
    assert [v["rule"] for v in receipt["violations"]] == ["measurements.observation.matches-sidecar"]
    assert (f"differs from the other copy: run/measurements.json has 201, "
            f"{REQUEST}/observation.json $.http_status has 200") in shown
    assert receipt["violations"][0]["message"].endswith("differs from the other copy")  # receipt kept


def test_an_edited_sidecar_is_the_cause_its_copy_follows_from(tmp_path, pair):
    receipt, shown = broken(tmp_path, pair, lambda root: set_json(
        root, f"{REQUEST}/observation.json", "$.http_status", 201))
    assert {v["rule"] for v in receipt["violations"]} == {
        "observation.http-status", "measurements.observation.matches-sidecar"}
    assert (f"  [packet] cause: {REQUEST}/observation.json $.http_status: 2 violations of 2 "
            f"rules about this one value") in shown.splitlines()
    assert f"run/measurements.json has 200, {REQUEST}/observation.json $.http_status has 201" \
        in shown


# --------------------------------------------------------------------------- causes, generic

def entry(rule, file, location, severity="error", **more) -> dict:
    return {"packet": "packet", "rule": rule, "severity": severity, "file": file,
            "location": location, "message": f"{rule} at {location}", **more}


def shifted(missing_at: int, length: int) -> list[dict]:
    """``record.json``'s items compared with ``source.json``'s, which lacks item
    ``missing_at``: each later item meets the next one's counterpart."""
    source = [f"v{i}" for i in range(length) if i != missing_at]
    return [entry("copy.matches", "record.json", f"$.items[{i}].v", expected=source[i],
                  actual=f"v{i}", expected_from={"file": "source.json",
                                                 "location": f"$.items[{i}].v"})
            for i in range(missing_at, length - 1)] + \
        [entry("copy.count", "source.json", f"doc:/items/{length - 1}", expected="present")]


def test_a_shift_is_found_from_places_and_values_alone():
    [cause] = causes(shifted(2, 8))
    assert cause.members == tuple(range(6))
    assert cause.summary == ("source.json $.items[2] is missing, or record.json $.items[2] is "
                             "one too many (the elements after it are compared one place "
                             "apart): 6 violations of 2 rules follow from it")


def test_an_extra_element_reads_the_other_way_round():
    entries = [entry("copy.matches", "record.json", f"$.items[{i}]", expected=f"v{i - 1}",
                     actual=f"v{i}", expected_from={"file": "source.json",
                                                    "location": f"$.items[{i}]"})
               for i in range(3, 7)]
    [cause] = causes(entries)
    assert cause.summary.startswith("record.json $.items[3] is missing, or source.json "
                                    "$.items[3] is one too many")


def test_two_swapped_elements_are_no_shift_and_unrelated_violations_no_cause():
    swapped = [entry("copy.matches", "record.json", f"$.items[{i}]", expected=f"v{j}",
                     actual=f"v{i}", expected_from={"file": "source.json",
                                                    "location": f"$.items[{i}]"})
               for i, j in ((2, 3), (3, 2))]
    assert causes(swapped) == []
    apart = [entry("a.rule", "one.json", "$.a"), entry("b.rule", "one.json", "$.b"),
             entry("c.rule", "two.json", "$.a")]
    assert causes(apart) == []


def test_one_place_joins_a_pointer_and_a_location_and_needs_an_error():
    entries = [entry("sample.present", "m.prom", "doc:/unlabelled/x_total", expected="present"),
               entry("delta.x", "m.prom", "$.unlabelled.x_total"),
               entry("continuity.x", "m.prom", "$.unlabelled.x_total", "warning")]
    [cause] = causes(entries)
    assert cause.summary == ("m.prom $.unlabelled.x_total is missing: 2 violations and 1 "
                             "warning of 3 rules follow from it")
    assert causes([entries[2], {**entries[2], "rule": "other.warning"}]) == []
    assert keys_of("doc:/a~1b/0") == ("a/b", 0) and keys_of("line 3") is None


def test_warnings_are_shown_and_counted_rightly():
    """``warnings: 3`` then ``… and 3 more`` showed none: five are shown, the rest counted."""
    warnings = [entry(f"w.rule{i}", f"f{i}.json", "$.a", "warning") for i in range(7)]
    receipt = {"receipt_schema": "flarespec-receipt-v1", "command": "measure",
               "status": "pass", "packet": {"entry": "/p/packet.json", "metric": {}},
               "peer": {"entry": "/p/packet.json", "same_as_packet": True},
               "violations": [], "warnings": warnings}
    shown = text.render(receipt_report(ReceiptView(receipt), rules={}))
    assert "  warnings: 7" in shown.splitlines()
    assert "w.rule4 at $.a [w.rule4]" in shown and "w.rule5 at" not in shown
    assert "      … and 2 more (see the receipt)" in shown.splitlines()
    assert "not shown" not in shown


def test_a_truncated_rule_under_a_cause_keeps_its_not_kept_note():
    entries = shifted(0, 4)
    receipt = {"receipt_schema": "flarespec-receipt-v1", "command": "measure",
               "status": "rejected", "packet": {"entry": "/p/packet.json"},
               "peer": {"entry": "/p/packet.json", "same_as_packet": True},
               "violations": entries, "warnings": [],
               "violations_truncated": [{"packet": "packet", "rule": "copy.matches",
                                         "kept": 3, "total": 250}]}
    shown = text.render(receipt_report(ReceiptView(receipt), rules={}))
    assert "… 247 more not kept (rule copy.matches: total 250)" in shown
    assert shown.splitlines()[0].startswith("flarespec measure: REJECTED  251 violations")


# --------------------------------------------------------------------------- values

def test_a_value_the_receipt_shortened_keeps_its_whole_length():
    stored = '"' + "x" * 159 + "… (214 chars)"  # engine/outcome.py's shorten of 214 characters
    assert short(stored) == '"' + "x" * 79 + "… (214 chars)"
    one, two = short_pair(stored, "r0")
    assert one.endswith("… (214 chars)") and two == '"r0"'
    assert short("y" * 100).endswith("… (102 characters)")  # its own cut: the JSON text's


# --------------------------------------------------------------------------- item 6

def test_junit_names_hold_no_absolute_path(tmp_path):
    file = str(tmp_path / "specs" / "cases.yaml")
    report = Report("spec test", "t", False, [Section(None, [Finding(
        "spec-test.case", "m", file=file, line=5, location="case broken",
        title="shop/v1 broken")])])
    case = ET.fromstring(junit.render(report, root=tmp_path)).find("testsuite/testcase")
    assert case.get("name") == "shop/v1 broken at specs/cases.yaml:5"
    assert case.get("file") == "specs/cases.yaml"


CASES = """\
spec: flare/bce032c0
cases:
  - name: harmless
    description: nothing is broken, yet a rejection is expected
    mutate: []
    expect: {rejected_by: [packet.schema]}
"""


def test_spec_test_says_a_rejection_case_passed_and_its_junit_names_are_relative(tmp_path):
    catalog = tmp_path / "cases.yaml"
    catalog.write_text(CASES)
    result = run("spec", "test", SPEC, "--catalog", catalog, "-q")
    assert result.exit_code == 1
    assert ("FAIL  flare/bce032c0 harmless: expected a rejection by packet.schema; got a pass "
            "(no rule rejected it, exit 0)") in result.output.splitlines()
    assert "carries" not in result.output and "metric" not in result.output
    report = tmp_path / "cases.xml"
    run("spec", "test", SPEC, "--catalog", catalog, "-q", "--format", "junit", "--root",
        tmp_path, "--output", report)
    names = [case.get("name") for case in ET.parse(report).getroot().iter("testcase")]
    assert names == ["flare/bce032c0 harmless at cases.yaml:3"]
    bundled = run("spec", "test", SPEC, "-k", "missing-request-json", "-q", "--format", "junit")
    for case in ET.fromstring(bundled.stdout).iter("testcase"):
        assert os.sep + "fixtures" not in case.get("name") and not os.path.isabs(
            case.get("name").split(" at ")[-1]), case.get("name")
