"""The Flare fixture catalog (fixtures/flare/catalog.yaml) against `measure`.

Every case is built from a fresh valid packet plus its mutations and measured. A rejected
case must exit 2 with status "rejected", carry no metric anywhere, and fire exactly the
expected error rule ids (``pair.peer-invalid`` aside: it is checked as an invariant, present
exactly when the peer is a packet of its own and is invalid). An accepted case must exit 0
and export the delivery TTFT recomputed here, independently of the validator, from the
sidecars.

Cases with ``known_issue`` state the correct expectation for a validator bug that is not
fixed yet: they run as strict expected failures.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from flarespec.adapter import commands
from flarespec.adapter.commands import measure
from flarespec.adapter.select import bundled_specs
from flarespec.fixtures.catalog import TemplateCache, build_case, load_catalog

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "fixtures/flare/catalog.yaml"
SPEC_ID, CASES = load_catalog(CATALOG)

PEER_INVALID = "pair.peer-invalid"
INTERNAL_ERROR = "engine.internal-error"
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
    specs = bundled_specs()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(commands, "bundled_specs", lambda: specs)
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


def leaks(value, forbidden: set, where: str = "$") -> list[str]:
    """Places in a receipt that carry a metric key or one of the forbidden numbers."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("metric", "metrics"):
                found.append(f"{where}.{key}")
            found.extend(leaks(item, forbidden, f"{where}.{key}"))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            found.extend(leaks(item, forbidden, f"{where}[{number}]"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value in forbidden:
        found.append(f"{where} = {value!r}")
    elif isinstance(value, str) and any(re.search(rf"(?<!\d){int(f)}(?!\d)", value)
                                        for f in forbidden if float(f).is_integer()):
        found.append(f"{where} (text)")
    return found


def describe(receipt: dict) -> str:
    lines = [f"status {receipt.get('status')!r}"]
    for v in receipt.get("violations", []):
        lines.append(f"  {v['packet']:6} {v['severity']:7} {v['rule']:45} {v.get('file')} "
                     f"@ {v.get('location')}: {v['message'][:160]}")
    for w in receipt.get("warnings", []):
        lines.append(f"  {w['packet']:6} warning {w['rule']:45} {w['message'][:120]}")
    return "\n".join(lines)


# ------------------------------------------------------------------------- the cases


def _param(case):
    marks = [pytest.mark.xfail(strict=True, reason=case.known_issue)] if case.known_issue else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_case(case, spec, templates, tmp_path):
    packet, peer = build_case(case, tmp_path / "case", spec.constants, templates)
    output = tmp_path / "out" / "receipt.json"
    outcome = measure(packet, peer, output)
    receipt = outcome.receipt
    assert json.loads(output.read_bytes()) == receipt, "the written receipt is not the returned one"

    errors = {v["rule"] for v in receipt["violations"] if v["severity"] == "error"}
    warnings = {w["rule"] for w in receipt["warnings"]}
    report = describe(receipt)
    assert INTERNAL_ERROR not in errors, f"{case.name}: internal error\n{report}"
    if "warnings" in case.expect:
        assert warnings == set(case.expect["warnings"]), f"{case.name}: warnings differ\n{report}"

    if case.expect.get("accept"):
        assert outcome.exit_code == 0, f"{case.name}: expected a pass\n{report}"
        assert receipt["status"] == "pass"
        assert receipt["violations"] == []
        samples = measured_ttfts(packet)
        assert samples, f"{case.name}: no measured sidecar could be read"
        assert receipt["metrics"] == {"delivery_ttft_ns": statistics.median(samples)}, report
        return

    expected = set(case.expect["rejected_by"])
    assert outcome.exit_code == 2, f"{case.name}: expected exit 2\n{report}"
    assert receipt["status"] == "rejected"
    assert "metrics" not in receipt
    forbidden = set(measured_ttfts(packet)) | (set(measured_ttfts(peer)) if peer != packet else set())
    for samples in (measured_ttfts(packet), measured_ttfts(peer)):
        if samples:
            forbidden.add(statistics.median(samples))
    # Decision (docs/receipt.md): a violation may quote the raw evidence values it is about
    # (its expected/actual/message); the metric, its samples and any per-packet value never
    # appear anywhere else in a rejection.
    outside_violations = {k: v for k, v in receipt.items() if k not in ("violations", "warnings")}
    leaked = leaks(outside_violations, forbidden) + leaks(
        [{k: v for k, v in entry.items() if k not in ("expected", "actual", "message")}
         for entry in receipt["violations"] + receipt["warnings"]], forbidden)
    assert not leaked, f"{case.name}: metric or TTFT sample in a rejection receipt: {leaked}\n{report}"

    peer_is_invalid = not receipt["peer"]["same_as_packet"] and any(
        v["packet"] == "peer" for v in receipt["violations"])
    assert (PEER_INVALID in errors) == peer_is_invalid, (
        f"{case.name}: {PEER_INVALID} must be reported exactly when a distinct peer is "
        f"invalid\n{report}")
    assert errors - {PEER_INVALID} == expected, (
        f"{case.name}: rule ids differ\n  missing:    {sorted(expected - errors)}\n"
        f"  unexpected: {sorted(errors - expected - {PEER_INVALID})}\n{report}")


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
