"""The bundled AIPerf contract (specs/aiperf/profile-export.yaml) over a real AIPerf run
(fixtures/aiperf/run1: ai-dynamo/aiperf's example artifacts, Apache-2.0, see NOTICE.md).

The real export passes as captured, chosen by ``applies_to`` with no ``--spec``; the broken
copies are the cases of the bundled catalog (fixtures/aiperf/catalog.yaml, an ``input:``
catalog over the same capture), each built and judged strictly by fixtures.check, as
``flarespec spec test aiperf/profile-export`` does: exactly the rules named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flarespec.engine.evaluate import evaluate
from flarespec.fixtures.catalog import load_catalog
from flarespec.fixtures.check import PASSED, check_case
from flarespec.compiler.open import open_compiled

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aiperf"
DATA, CATALOG = FIXTURES / "run1", FIXTURES / "catalog.yaml"
ENTRY, RECORDS = "profile_export_aiperf.json", "profile_export.jsonl"
SPEC_ID = "aiperf/profile-export"
CATALOG_SPEC, CASES = load_catalog(CATALOG)


def _load():
    aggregate = json.loads((DATA / ENTRY).read_text())
    records = [json.loads(line) for line in (DATA / RECORDS).read_text().splitlines() if line]
    return aggregate, records


@pytest.fixture(scope="module")
def spec():
    return open_compiled(SPEC_ID)


def _write(tmp_path: Path, aggregate, records) -> Path:
    (tmp_path / ENTRY).write_text(json.dumps(aggregate))
    (tmp_path / RECORDS).write_text("".join(json.dumps(r) + "\n" for r in records))
    return tmp_path / ENTRY


def test_the_real_export_passes_as_captured(spec, tmp_path):
    shutil.copy(DATA / ENTRY, tmp_path / ENTRY)
    shutil.copy(DATA / RECORDS, tmp_path / RECORDS)
    report = evaluate(spec, tmp_path / ENTRY)
    assert report.ok, report.violations[:5]
    assert set(report.files) == {ENTRY, RECORDS}


def test_the_bundled_data_is_the_capture_byte_for_byte():
    import hashlib
    digests = {name: hashlib.sha256((DATA / name).read_bytes()).hexdigest()
               for name in (ENTRY, RECORDS)}
    assert digests == {
        ENTRY: "5250bc5b7a8fa16d45b8ff92ad567749bad20201a736c1b402519f3d6c0404af",
        RECORDS: "ce0e2a194a22813a92f0964f6809fd59388bf9858632b454480bcdb39ef4715f"}


def test_the_catalog_is_the_aiperf_contracts_over_this_capture():
    assert CATALOG_SPEC == SPEC_ID
    assert {(case.source, case.entry) for case in CASES} == {(DATA, ENTRY)}
    assert len(CASES) >= 29 and sum(bool(case.expect.get("accept")) for case in CASES) == 1


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_catalog_case_is_judged_as_expected(spec, tmp_path, case):
    result = check_case(case, tmp_path, spec)
    assert result.status == PASSED, (result.problems, result.report[:3000])


def test_a_broken_line_of_the_records_is_located_at_its_line(spec, tmp_path):
    aggregate, records = _load()
    entry = _write(tmp_path, aggregate, records)
    lines = (tmp_path / RECORDS).read_text().splitlines(keepends=True)
    lines[41] = lines[41][:-5] + "\n"
    (tmp_path / RECORDS).write_text("".join(lines))
    report = evaluate(spec, entry)
    [violation] = [v for v in report.violations if v.rule == "aiperf.records.invalid-json"]
    assert violation.file == RECORDS and violation.line == 42


def test_check_chooses_the_aiperf_contract_with_no_spec(tmp_path):
    from cli_run import run

    shutil.copy(DATA / ENTRY, tmp_path / ENTRY)
    shutil.copy(DATA / RECORDS, tmp_path / RECORDS)
    result = run("check", tmp_path / ENTRY, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] is True
