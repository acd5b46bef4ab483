"""The Flare fixture catalog (fixtures/flare/catalog.yaml) against `measure`.

Every case is built from a fresh valid packet plus its mutations and measured, then judged
by ``flarespec.fixtures.check.judge`` (the same strict checks as ``flarespec spec test``):
a rejected case must exit 2 with status "rejected", carry no metric anywhere, and fire
exactly the expected error rule ids (``pair.peer-invalid`` aside: it is checked as an
invariant, present exactly when the peer is a packet of its own and is invalid). An
accepted case must exit 0 and export the delivery TTFT recomputed here (the oracle below),
independently of the validator, from the sidecars.

Every case is measured a second time with the pass tests off (the reporting path alone,
engine/passes.py): the receipts must be equal, so a pass test never hides a violation.

Cases with ``known_issue`` state the correct expectation for a validator bug that is not
fixed yet: they run as strict expected failures.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from flarespec.adapter import commands
from flarespec.adapter.commands import measure
from flarespec.adapter.select import bundled_specs, selectable_specs
from flarespec.engine.evaluate import Evaluation
from flarespec.fixtures.catalog import TemplateCache, build, build_case, load_catalog
from flarespec.fixtures.check import INTERNAL_ERROR, describe, judge, metric_key

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "fixtures/flare/catalog.yaml"
SPEC_ID, CASES = load_catalog(CATALOG)

PEER_INVALID = "pair.peer-invalid"
MEASURED_KIND = "ttft-512"  # contract section 9: the one measured kind


def _spec():
    return next((spec for spec in bundled_specs() if spec.id == SPEC_ID), None)


@pytest.fixture(scope="module")
def spec():
    found = _spec()
    assert found is not None, f"catalog names spec {SPEC_ID!r}, which is not bundled"
    return found


@pytest.fixture(scope="module", autouse=True)
def parsed_specs_once():
    """`measure` re-reads and re-parses the bundled spec YAML for every packet (about 0.09 s,
    a third of a validation); the spec files do not change during this module, so hand it
    the list parsed once. Selection by applies_to still runs for every packet."""
    specs = selectable_specs()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(commands, "selectable_specs", lambda: specs)
        yield


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> TemplateCache:
    return TemplateCache(tmp_path_factory.mktemp("templates"))


# ------------------------------------------------------------------ independent reading


def _load(path: Path):
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def measured_ttfts(packet_json: Path) -> list[int]:
    """Delivery TTFT per measured request, read straight from the sidecars: the arrival_ns
    of the first event with non-empty token_ids. Best effort on broken packets (used to
    look for leaked samples); exact on valid ones."""
    root = packet_json.parent
    packet = _load(packet_json)
    if not isinstance(packet, dict) or not isinstance(packet.get("run"), str):
        return []
    run = root / packet["run"]
    corpus = _load(root / packet["corpus"]) if isinstance(packet.get("corpus"), str) else None
    if isinstance(corpus, dict) and isinstance(corpus.get("groups"), list):
        requests = [(g.get("id"), r.get("id")) for g in corpus["groups"]
                    if isinstance(g, dict) and g.get("kind") == MEASURED_KIND
                    for r in g.get("requests") or [] if isinstance(r, dict)]
    else:  # no readable corpus: every request directory of a measured group
        requests = [(d.parent.name, d.name) for d in sorted(run.glob(f"r*.{MEASURED_KIND}/*"))
                    if re.fullmatch(rf"r\d+\.{re.escape(MEASURED_KIND)}", d.parent.name)]
    ttfts = []
    for group_id, request_id in requests:
        observation = _load(run / str(group_id) / str(request_id) / "observation.json")
        events = observation.get("events") if isinstance(observation, dict) else None
        first = next((e for e in events or [] if isinstance(e, dict) and e.get("token_ids")), None)
        if first is not None and isinstance(first.get("arrival_ns"), int):
            ttfts.append(first["arrival_ns"])
    return ttfts


class FlareOracle:
    """The independent reading ``judge`` compares an accepted receipt with and looks for
    in a rejection."""

    def metric(self, packet_json: Path):
        samples = measured_ttfts(packet_json)
        assert samples, f"{packet_json}: no measured sidecar could be read"
        return statistics.median(samples)

    def forbidden(self, packet_json: Path) -> set:
        samples = measured_ttfts(packet_json)
        return set(samples) | ({statistics.median(samples)} if samples else set())


# ------------------------------------------------------------------------- the cases


def _param(case):
    marks = [pytest.mark.xfail(strict=True, reason=case.known_issue)] if case.known_issue else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_case(case, spec, templates, tmp_path, monkeypatch):
    built = build(case, tmp_path / "case", spec, templates)
    packet, peer = built.packet, built.peer
    output = tmp_path / "out" / "receipt.json"
    outcome = measure(packet, peer, output)
    receipt = outcome.receipt
    assert json.loads(output.read_bytes()) == receipt, "the written receipt is not the returned one"
    # the pass plans only ever say "passes": the reporting path alone writes the same receipt
    monkeypatch.setattr(commands, "Evaluation", partial(Evaluation, pass_checks=False))
    reporting_only = measure(packet, peer, tmp_path / "out" / "reporting-only.json")
    assert reporting_only.receipt == receipt, "pass plans changed the receipt"
    # the schedule (engine/schedule.py) changes the order of the work, never the receipt:
    # rules one by one over every binding, all documents held, write the same bytes
    monkeypatch.setattr(commands, "Evaluation", partial(Evaluation, streaming=False))
    one_by_one = measure(packet, peer, tmp_path / "out" / "one-by-one.json")
    assert one_by_one.receipt == receipt, "streaming changed the receipt"
    problems = judge(built.case, receipt, outcome.exit_code, packet, peer,
                     metric_key=metric_key(spec), oracle=FlareOracle())
    assert not problems, f"{case.name}: " + "\n  ".join(problems) + "\n" + describe(receipt)


def test_judge_is_strict_about_each_check(spec, templates, tmp_path):
    """Each check of ``judge`` fires on the receipt that breaks it (the catalog only shows
    that good receipts pass)."""
    by_name = {case.name: case for case in CASES}
    valid, missing = by_name["valid-own-peer"], by_name["missing-response-sse"]
    packet, peer = build_case(valid, tmp_path / "case", spec, templates)
    outcome = measure(packet, peer, tmp_path / "out" / "receipt.json")
    receipt, key = outcome.receipt, metric_key(spec)
    assert judge(valid, receipt, 0, packet, peer, metric_key=key, oracle=FlareOracle()) == []
    wrong_metric = json.loads(json.dumps(receipt))
    wrong_metric["metrics"]["delivery_ttft_ns"] += 1
    assert "differ from the recomputed" in judge(valid, wrong_metric, 0, packet, peer, metric_key=key,
                                                 oracle=FlareOracle())[0]
    warned = dict(receipt, warnings=[{"rule": "x.warn", "packet": "packet", "message": "m"}])
    assert judge(valid, warned, 0, packet, peer, metric_key=key)[0].startswith("warnings ['x.warn']")
    leaked = dict(receipt, status="rejected", violations=[
        {"rule": "response.file.missing", "severity": "error", "packet": "packet", "message": "m"}])
    problems = judge(missing, leaked, 2, packet, peer, metric_key=key, oracle=FlareOracle())
    assert problems[0] == "a rejection carries metrics"
    assert problems[1].startswith("metric or sample in a rejection receipt: ['$.metrics', ")
    crashed = dict(leaked, violations=leaked["violations"] + [
        {"rule": INTERNAL_ERROR, "severity": "error", "packet": "packet", "message": "boom"}])
    crashed.pop("metrics")
    assert judge(missing, crashed, 2, packet, peer, metric_key=key)[:1] == ["internal error: boom"]


# ------------------------------------------------------------------------- coverage


def test_catalog_spec_is_bundled():
    assert _spec() is not None, f"catalog names spec {SPEC_ID!r}, which is not bundled"


def test_case_names_are_ids():
    for case in CASES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", case.name), case.name
        assert case.clause, f"{case.name}: no clause"


def test_every_error_rule_is_proved_by_a_case(spec):
    """Every error rule and every pair rule of the spec is the expected rejection of some
    case (pair rules by the pair cases with a `peer:`); pair.peer-invalid is checked in
    every rejected case by the invariant above."""
    expected = {rule for case in CASES for rule in case.expect.get("rejected_by", [])}
    rules = {rule.id for rule in spec.rules if rule.severity == "error"}
    pair_rules = {rule["id"] for rule in spec.pair}
    pair_expected = {rule for case in CASES if case.peer is not None
                     for rule in case.expect.get("rejected_by", [])}
    uncovered = sorted(rules - expected) + sorted(pair_rules - pair_expected)
    assert not uncovered, f"spec rules no case proves: {uncovered}"


def test_every_document_has_a_missing_file_case(spec):
    """Each document the spec loads has a case in which its file is missing."""
    expected = {rule for case in CASES for rule in case.expect.get("rejected_by", [])}
    missing = sorted(f"{doc.rule_prefix}.missing" for doc in spec.documents.values()
                     if f"{doc.rule_prefix}.missing" not in expected)
    assert not missing, f"no missing-file case for: {missing}"


def test_expectations_name_known_rules(spec):
    """Expected ids are spec rules, pair rules or loader codes of spec documents."""
    from flarespec.adapter.commands import PEER_INVALID as peer_invalid, SAME_SPEC
    from flarespec.adapter.select import UNSUPPORTED

    known = {rule.id for rule in spec.rules} | {rule["id"] for rule in spec.pair}
    known |= {peer_invalid, SAME_SPEC, UNSUPPORTED}
    prefixes = tuple(f"{doc.rule_prefix}." for doc in spec.documents.values())
    for case in CASES:
        for rule in case.expect.get("rejected_by", []) + case.expect.get("warnings", []):
            assert rule != INTERNAL_ERROR, f"{case.name}: expects an internal error"
            assert rule in known or rule.startswith(prefixes), f"{case.name}: unknown rule id {rule}"


# ------------------------------------------------------------------ docs/contract.md


def _doc_tables() -> tuple[list[list[str]], list[list[str]]]:
    """(clause rows, positive-variant rows) of docs/contract.md, as lists of cells."""
    text = (ROOT / "docs/contract.md").read_text(encoding="utf-8")
    clause_part = text.split("## Clause -> rule -> case", 1)[1].split("\n## ", 1)[0]
    positive_part = text.split("## Positive variants", 1)[1].split("\n## ", 1)[0]

    def rows(part: str) -> list[list[str]]:
        found = []
        for line in part.splitlines():
            if line.startswith("| ") and not line.startswith("| §") and not line.startswith("| Case"):
                found.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
        return found
    return rows(clause_part), rows(positive_part)


def test_contract_doc_matches_the_catalog(spec):
    by_name = {case.name: case for case in CASES}
    clause_rows, positive_rows = _doc_tables()
    assert clause_rows and positive_rows
    documented_rules = set()
    for cells in clause_rows:
        assert len(cells) == 4, cells
        rules = set(re.findall(r"`([^`]+)`", cells[2]))
        documented_rules |= rules
        for name, xfail in re.findall(r"`([a-z0-9-]+)`( \(xfail\))?", cells[3]):
            assert name in by_name, f"docs/contract.md names unknown case {name}"
            case = by_name[name]
            assert bool(xfail) == bool(case.known_issue), f"{name}: (xfail) mark out of date"
            if rules and "rejected_by" in case.expect:  # rows without rule ids: invariants
                implied = {PEER_INVALID}  # reported when a distinct peer is invalid, never listed
                assert rules & (set(case.expect["rejected_by"] + case.expect.get("warnings", [])) | implied), (
                    f"docs/contract.md row {cells[1][:50]!r}: case {name} expects none of {sorted(rules)}")
    positive = {re.findall(r"`([a-z0-9-]+)`", cells[0])[0] for cells in positive_rows}
    accepted = {case.name for case in CASES if case.expect.get("accept")}
    assert positive == accepted, (f"positive variants table vs catalog: only in doc "
                                  f"{sorted(positive - accepted)}, only in catalog {sorted(accepted - positive)}")
    expected = {rule for case in CASES for rule in case.expect.get("rejected_by", [])}
    spec_rules = {rule.id for rule in spec.rules if rule.severity == "error"} | {r["id"] for r in spec.pair}
    assert not (spec_rules | expected) - documented_rules - {PEER_INVALID}, (
        f"rule ids missing from docs/contract.md: {sorted((spec_rules | expected) - documented_rules)}")


# ------------------------------------------------------------------ spelled in constants


def _raw_steps(case) -> str:
    return json.dumps([case.writer, case.mutate, case.peer])


# cases about the spelling of a path: they write variants of the measurements file's path
SPELL_A_PATH = "measurements-path-"


def _string_constants(constants: dict, prefix: str = "") -> dict[str, list[str]]:
    """Every string constant and string member of a mapping constant, by its dotted key
    (``stream_terminator``, ``metric_contract.clock_domain``), except the id formats
    (their ``{...}`` fields are no value a packet holds)."""
    found = {}
    for key, value in constants.items():
        if isinstance(value, str) and "{" not in value:
            found[f"{prefix}{key}"] = [value]
        elif isinstance(value, dict) and not prefix:
            found.update(_string_constants(value, f"{key}."))
    return found


def test_cases_spell_no_value_the_catalog_names(spec, tmp_path):
    """Group and request ids, counter and gauge names, kinds and the files of documents come
    from the spec under test (a file from its written packet), and the spec's string
    constants (the stream terminator, the last finish reason, the clocks, schema names) are
    written ${NAME}: no case spells the bundled spec's value of a name the catalog defines
    or of a constant (the names themselves may select by it). Before, seven stream cases
    wrote ``[DONE]`` or ``length``, and a child with another terminator failed them."""
    from flarespec.fixtures.catalog import resolve_names
    from flarespec.fixtures.targets import Locator, Target
    from flarespec.fixtures.writers import write_packet
    from flarespec.compiler.tokens import find_tokens

    locate = Locator(spec, write_packet(tmp_path / "packet", spec))
    names = {key: locate(value) if isinstance(value, Target) else value
             for key, value in resolve_names(CASES[0].names, spec.constants, spec).items()}
    spelled_values = {key: [value] if isinstance(value, str) else value
                      for key, value in names.items()
                      if isinstance(value, str) or isinstance(value, list) and key.endswith("_files")}
    spelled_values.update(_string_constants(spec.constants))
    for case in CASES:
        steps = _raw_steps(case)
        for token in find_tokens(steps):
            steps = steps.replace(token.text, " ")
        spelled = sorted(key for key, values in spelled_values.items() for value in values
                         if re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-]|\.q\d)", steps)
                         and not (case.name.startswith(SPELL_A_PATH) and "/" in value))
        assert not spelled, f"{case.name}: spells the value of {spelled}; write ${{NAME}}"


def test_names_and_placeholders_are_filled_from_the_constants(tmp_path):
    from flarespec.fixtures.catalog import CatalogError, expand_case

    path = tmp_path / "catalog.yaml"
    path.write_text(
        "spec: x/y\nnames:\n"
        "  group: {format: \"${fmt}\", n: 1, kind: \"${kinds.1}\"}\n"
        "  item: {format: \"{g}/i{m}\", g: \"${group}\", m: \"${size}\"}\n"
        "cases:\n  - name: c\n    description: d\n    writer: {repetitions: \"${size}\"}\n"
        "    mutate:\n      - {op: remove_file, file: \"${item}/x-${size}.json\"}\n"
        "      - {op: set_json, file: a.json, path: \"$.v\", value: \"${kinds}\"}\n"
        "    expect: {accept: true}\n")
    _, (case,) = load_catalog(path)
    constants = {"fmt": "r{n}.{kind}", "kinds": ["a", "b"], "size": 3}
    expanded = expand_case(case, constants)
    assert expanded.writer == {"repetitions": 3}  # a whole placeholder keeps the value's type
    assert expanded.mutate == [{"op": "remove_file", "file": "r1.b/i3/x-3.json"},
                               {"op": "set_json", "file": "a.json", "path": "$.v", "value": ["a", "b"]}]
    with pytest.raises(CatalogError, match=r"case c: \$\{kinds.2\}: neither a catalog name nor a constant"):
        expand_case(replace(case, writer={"repetitions": "${kinds.2}"}), constants)
    with pytest.raises(CatalogError, match=r"names.group: cannot fill"):
        expand_case(case, {"fmt": "r{n}.{missing}", "kinds": ["a", "b"], "size": 3})
