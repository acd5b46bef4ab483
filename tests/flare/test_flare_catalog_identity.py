"""Issue 25: the inherited Flare catalog names what each case breaks by identity, so a correct
child spec passes every inherited case or reports it not applicable, with the reason.

Before, a child that inserts ``ttft-1024`` after ``ttft-512`` and shortens the prefix failed
6 of 229 cases (a crash on a request that group does not have, two passes against another
group than the one named, unexpected rules from positional list edits, a violation expected
at ``groups[2]`` that the child has at ``groups[3]``), and ``derived_field.kinds: [ttft-1024,
...]`` failed ``valid-derived-within-tolerance`` (a value spelled for a 4096-token prompt).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from cli_run import run
from flarespec.fixtures.catalog import CaseNotApplicable, build, load_catalog
from flarespec.fixtures.targets import Locator, TargetError, TargetGone, parse_target, \
    resolve_place
from flarespec.fixtures.writers import write_packet
from flarespec.compiler.open import open_compiled

ROOT = Path(__file__).resolve().parents[2]
_, CASES = load_catalog(ROOT / "fixtures/flare/catalog.yaml")
BY_NAME = {case.name: case for case in CASES}
# the cases the positional catalog got wrong under the child below
WERE_WRONG = ["missing-request-json", "request-symlink-escapes-root", "corpus-group-concurrency-wrong",
              "corpus-missing-group", "measurements-groups-reordered",
              "derived-field-with-negative-ttft", "valid-derived-within-tolerance"]
REQUEST_BODY_RULES = ["request.sha256.corpus", "request.sha256.observation", "request.max-tokens",
                      "request.stream"]


def row(kind, requests, concurrency, prompt, max_tokens, measured=False, reused=0) -> dict:
    return {"kind": kind, "requests": requests, "concurrency": concurrency,
            "prompt_token_count": prompt, "max_tokens": max_tokens, "measured": measured,
            "reused_tokens": reused}


def write_child(directory: Path, parent: dict, constants: dict | None = None, **changes) -> Path:
    """A child of the bundled spec (``parent``: its constants) for a revision of its own,
    with ``constants`` and the other ``changes``."""
    child = {"flarespec": 1, "id": "flare/identity-child", "title": "a child for issue 25",
             "extends": "flare/bce032c0",
             "applies_to": {"given": "packet:$.source.revision", "equals": "${source.revision}"},
             "constants": {"source": dict(parent["source"], revision="25" * 20),
                           **(constants or {})}, **changes}
    path = directory / "child.yaml"
    path.write_text(yaml.safe_dump(child, sort_keys=False))
    return path


def inserted_kind(constants: dict) -> dict:
    """ttft-1024 after ttft-512, a 2048-token prefix (its two rows written out), and the new
    kind first among the derived kinds."""
    matrix = []
    for old in constants["group_matrix"]:
        if old["kind"] in (constants["prefix"]["seed_kind"], constants["prefix"]["hit_kind"]):
            hit = old["kind"] == constants["prefix"]["hit_kind"]
            old = dict(old, prompt_token_count=2560, reused_tokens=2048 if hit else 0)
        matrix.append(old)
        if old["kind"] == "ttft-512":
            matrix.append(row("ttft-1024", 3, 1, 1024, 16))
    return {"group_matrix": matrix, "prefix": dict(constants["prefix"], tokens=2048),
            "derived_field": dict(constants["derived_field"],
                                  kinds=["ttft-1024", "ttft-4096", "prefill-65536"])}


def without_request_bodies(flare_spec) -> dict:
    documents = [name for name in flare_spec.documents if name not in ("packet", "run_dir", "request_body")]
    rules = [{"id": rule_id, "replaces": True, "clause": "2", "description": "files without request bodies.",
              "given": "packet:$.files", "assert": {kind: documents}}
             for rule_id, kind in (("packet.files.missing-entry", "manifest_lists_all"),
                                   ("packet.files.extra-entry", "manifest_lists_only"),
                                   ("packet.files.digest", "manifest_digests"))]
    return {"drop_documents": ["request_body"], "drop_rules": REQUEST_BODY_RULES, "rules": rules,
            "shapes": {"corpus_request": {"drop_members": ["request_sha256"]},
                       "observation": {"drop_members": ["request_sha256"]}}}


def spec_test(path, *args) -> tuple[int, list[dict]]:
    result = run("spec", "test", path, "-q", "--format", "json", *args)
    return result.exit_code, json.loads(result.output)["specs"][0]["cases"]


@pytest.fixture(scope="module")
def child(tmp_path_factory, flare_constants) -> Path:
    return write_child(tmp_path_factory.mktemp("inserted"), flare_constants,
                       constants=inserted_kind(flare_constants))


def test_a_child_inserting_a_kind_passes_every_inherited_case_or_says_why_not(child):
    code, cases = spec_test(child)
    failed = [(case["name"], case["got"], case["problems"]) for case in cases
              if case["status"] not in ("passed", "not applicable")]
    assert failed == [] and code == 0
    assert all(case["reason"] for case in cases if case["status"] == "not applicable")
    status = {case["name"]: case["status"] for case in cases}
    assert [status[name] for name in WERE_WRONG] == ["passed"] * len(WERE_WRONG)


# the cases that spelled a constant or a writer number and failed under the child below
SPELLED = ["valid-sse-crlf-bom-and-trailing-comment", "stream-missing-done",
           "stream-done-not-dispatched", "stream-truncated-mid-event", "stream-data-after-done",
           "stream-field-after-done", "stream-empty-chunk-carries-finish",
           "stream-chunk-without-choices", "stream-last-finish-reason-other",
           "observation-completion-tokens-17", "observation-coalesced-summary-wrong",
           "observation-token-ids-exceed-usage", "observation-native-ingress-float",
           "observation-native-negative-ingress", "observation-native-enqueue-before-ingress",
           "observation-native-first-token-before-enqueue",
           "observation-native-timestamps-decreasing",
           # a next revision's names: the cases' "other" value was the child's own
           "packet-schema-wrong", "corpus-name-wrong", "measurements-schema-wrong"]


def test_a_child_changing_the_stream_s_constants_and_ids_passes_every_inherited_case(
        tmp_path, flare_constants):
    """Another terminator, last finish reason, chunk object and request id format, and a
    warmup of 8 tokens: the stream cases wrote ``[DONE]``, ``length`` and
    ``text_completion`` where the spec has a constant, and W0's chunking (seeded by the
    request id) and its 16 native timestamps were spelled (token ids, seq numbers, a
    coalesced count, the terminal chunk's index, whole timestamp lists); before, 11 of 229
    failed for the first four changes and 5 for the warmup's length. And the "-v2" names a
    next revision would choose, other clocks, capacity labels and group ids: three cases
    "broke" the packet with the very value the child declares (a pass where a rejection
    was expected)."""
    matrix = [dict(old, max_tokens=8) if old["kind"] == "warmup" else old
              for old in flare_constants["group_matrix"]]
    path = write_child(tmp_path, flare_constants, constants={
        "stream_terminator": "[END]", "last_finish_reason": "stop",
        "response_object": "completion", "request_id_format": "{group}.r{index}",
        "group_matrix": matrix, "packet_schema": "inferrsi-flare-delivery-packet-v2",
        "corpus_name": "flare-http-performance-v2-corpus",
        "measurements_schema": "flare-http-performance-v2",
        "memory_report_schema": "flare-preparation-memory-report-v2",
        "client_clock": "client.monotonic_ns.elapsed", "native_clock": "flare.native.boot_clock_ns",
        "capacity_labels": ["sm130", "sm131"], "group_id_format": "rep{repetition}-{kind}"})
    code, cases = spec_test(path)
    failed = [(case["name"], case["got"], case["problems"]) for case in cases
              if case["status"] not in ("passed", "not applicable")]
    assert failed == [] and code == 0
    status = {case["name"]: case["status"] for case in cases}
    assert [status[name] for name in SPELLED] == ["passed"] * len(SPELLED)


def test_the_expected_place_is_the_element_s_place_in_each_child(flare_spec, flare_constants,
                                                                  tmp_path):
    """``groups[?@.id=='${derived}']``: the group of the derived kind, at its own position
    in each spec's packet: the third group in the bundled one, the fourth once ttft-1024 is
    inserted before it (the derived kinds kept as they are)."""
    inserted = inserted_kind(flare_constants)
    inserted.pop("derived_field")
    child = open_compiled(write_child(tmp_path, flare_constants, constants=inserted))
    case = BY_NAME["derived-field-with-negative-ttft"]
    places = {}
    for name, spec in (("bundled", flare_spec), ("child", child)):
        built = build(case, tmp_path / name, spec)
        (places[name],) = built.case.expect["at"]["measurements.observation.derived-input"]
    place = "run/measurements.json:$.groups[{}].observations[0].analysis.delivery_ttft_ns"
    assert places == {"bundled": place.format(2), "child": place.format(3)}


def test_a_case_whose_group_the_child_lacks_is_not_applicable_with_the_reason(tmp_path, flare_constants):
    """No group of four requests (decode-c4 removed): the cases that name one do not apply;
    the mutation never lands on another group."""
    matrix = [row for row in flare_constants["group_matrix"] if row["requests"] < 4]
    path = write_child(tmp_path, flare_constants, constants={"group_matrix": matrix})
    code, cases = spec_test(path, "-k", "request-symlink-escapes-root")
    assert code == 0
    assert [(case["status"], case["reason"]) for case in cases] == [
        ("not applicable", "names.many_kind: group_matrix has no record with requests {'min': 4}")]


def test_a_child_without_request_bodies_reports_their_cases_not_applicable(tmp_path, flare_constants,
                                                                           flare_spec):
    path = write_child(tmp_path, flare_constants, **without_request_bodies(flare_spec))
    code, cases = spec_test(path, "-k", "request")
    assert code == 0 and cases
    assert not [case for case in cases if case["status"] not in ("passed", "not applicable")]
    reasons = {case["name"]: case["reason"] for case in cases if case["status"] == "not applicable"}
    assert reasons["missing-request-json"] == "document request_body is dropped"
    assert reasons["request-symlink-escapes-root"] == "document request_body is dropped"
    assert reasons["request-max-tokens-wrong"] == "rule request.max-tokens is dropped"
    # cases that remove a request everywhere name its files by identity: they still apply
    assert "corpus-missing-request" not in reasons and "corpus-duplicate-request" not in reasons


def test_a_case_naming_a_dropped_document_s_file_is_not_applicable(tmp_path, flare_constants,
                                                                   flare_spec):
    """Found from the names alone, before anything is written: the file the case edits is
    a document the child dropped."""
    path = write_child(tmp_path, flare_constants, **without_request_bodies(flare_spec))
    catalog = tmp_path / "cases.yaml"
    catalog.write_text(
        "spec: flare/bce032c0\nnames:\n"
        "  body: {document: request_body, request: 0}\n"
        "cases:\n  - name: edits-a-body\n    description: d\n    mutate:\n"
        "      - {op: set_json, file: \"${body}\", path: $.stream, value: false}\n"
        "    expect: {rejected_by: [packet.files.digest]}\n")
    code, cases = spec_test(path, "--catalog", catalog)
    assert code == 0
    assert [(case["status"], case["reason"]) for case in cases] == [
        ("not applicable", "names.body: document request_body is dropped by flare/identity-child")]


# ------------------------------------------------------------------ targets in a packet


@pytest.fixture(scope="module")
def located(tmp_path_factory, flare_spec):
    packet = write_packet(tmp_path_factory.mktemp("packet"), flare_spec)
    return packet, Locator(flare_spec, packet)


def target(flare_spec, **raw):
    return parse_target(raw, flare_spec)


def test_a_target_is_the_file_its_document_places_for_those_bindings(located, flare_spec):
    packet, locate = located
    assert locate(target(flare_spec, document="observation", request={"id": "r0.decode-c2.q1"})) == \
        "run/r0.decode-c2/r0.decode-c2.q1/observation.json"
    assert locate(target(flare_spec, document="observation", group={"kind": "decode-c2"}, request=1)) == \
        "run/r0.decode-c2/r0.decode-c2.q1/observation.json"
    assert locate(target(flare_spec, document="snapshot", group={"id": "r0.warmup"}, phase=1)) == \
        json.loads(packet.read_text())["snapshots"]["r0.warmup"][1]
    assert locate(target(flare_spec, document="corpus")) == json.loads(packet.read_text())["corpus"]
    assert locate(target(flare_spec, document="packet")) == "packet.json"


def test_every_file_of_a_group_is_what_its_manifest_lists_for_it(located, flare_spec):
    packet, locate = located
    files = locate(target(flare_spec, documents="all", group={"id": "r0.decode-c2"}))
    listed = [key for key in json.loads(packet.read_text())["files"] if "r0.decode-c2" in key]
    assert sorted(files) == sorted(listed) and len(files) == 2 * 3 + 2


@pytest.mark.parametrize("raw, error, message", [
    ({"document": "observation", "request": {"id": "r0.decode-c2.q7"}}, TargetGone,
     "the written packet holds no such file"),
    ({"document": "observation", "group": {"kind": "decode-c2"}}, TargetError,
     "2 files of the written packet fit"),
])
def test_a_target_finds_exactly_one_file_or_says_why(located, flare_spec, raw, error, message):
    _, locate = located
    with pytest.raises(error, match=message):
        locate(parse_target(raw, flare_spec))


@pytest.mark.parametrize("raw, message", [
    ({"document": "observation", "shelf": 0}, "'shelf' is neither 'document', 'documents' nor "
                                              "an iteration of flare/bce032c0"),
    ({"document": "corpus", "request": 0}, "document corpus is not written per request"),
    ({"document": "run_dir"}, "document 'run_dir' has no file of its own"),
    ({"document": "observation", "request": -1}, "by its number under its parent"),
    ({"document": "observation", "documents": "all"}, "exactly one of 'document'"),
])
def test_a_wrong_target_is_a_catalog_error(flare_spec, raw, message):
    with pytest.raises(TargetError, match=message):
        parse_target(raw, flare_spec)


def test_a_filtered_place_is_resolved_in_the_packet(located):
    packet, locate = located
    place = "run/measurements.json:$.groups[?@.id=='r0.prefill-65536'].observations[0].native"
    assert resolve_place(place, packet.parent, locate.loaders) == \
        "run/measurements.json:$.groups[6].observations[0].native"
    assert resolve_place("corpus.json:$.groups[0]", packet.parent, {}) == "corpus.json:$.groups[0]"
    # counted from the end: resolved too, to the position in this packet
    groups = len(json.loads((packet.parent / "corpus.json").read_text())["groups"])
    assert resolve_place("corpus.json:$.groups[-1].id", packet.parent, {}) == \
        f"corpus.json:$.groups[{groups - 1}].id"
    with pytest.raises(TargetError, match="selects 0 places in the case's packet"):
        resolve_place("corpus.json:$.groups[?@.id=='r0.nope']", packet.parent, {})


def test_an_element_the_packet_lacks_makes_the_case_not_applicable(tmp_path, flare_spec):
    case = copy.deepcopy(BY_NAME["missing-request-json"])
    case.names = dict(case.names, concurrent_q1={"format": "${request_id_format}",
                                                 "group": "${concurrent}", "index": 9})
    with pytest.raises(CaseNotApplicable, match=r"^\$\{concurrent_q1_body\}: document request_body "
                                                r"at request \{'id': 'r0.decode-c2.q9'\}: the written "
                                                r"packet holds no such file$"):
        build(case, tmp_path, flare_spec)
