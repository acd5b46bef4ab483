"""``benchmarks/run.py``, issue 9's benchmark command, works end to end (a smoke run on tiny
sizes; the figures themselves are never asserted: timing is for benchmarks, not tests)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


def run(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, str(RUN), *arguments], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TMPDIR": str(scratch)})


def test_quick_run_measures_floor_measure_and_validate_pair_and_saves_the_table(tmp_path):
    out = tmp_path / "results.json"
    completed = run(tmp_path, "--quick", "--repetitions", "1", "2", "--package-mib", "1",
                    "--out", str(out))
    assert completed.returncode == 0, completed.stderr
    saved = json.loads(out.read_text())
    assert saved["runs"] == 1 and saved["full_prompts"] is True
    rows = {row["size"]: row for row in saved["results"]}
    assert list(rows) == ["R=1", "R=2", "R=1+1MiB pkg"]
    for row in rows.values():
        assert row["files"] > 0 and row["mib"] > 0
        for command in ("floor", "measure", "validate_pair"):
            assert set(row[command]) == {"wall", "cpu", "rss_mib"}
        assert set(row["ratios"]) == {"measure", "validate_pair"}
    assert rows["R=2"]["growth"]["from_repetitions"] == 1
    assert set(rows["R=2"]["growth"]["ratio_drift"]) == {"measure", "validate_pair"}
    assert rows["R=1+1MiB pkg"]["mib"] > rows["R=1"]["mib"] + 1.9  # 1 MiB in each packet
    assert set(rows["R=1+1MiB pkg"]["rss_added_mib"]) == {"floor", "measure", "validate_pair"}
    assert {t["target"] for t in saved["targets"]} >= {"R=1 measure wall x floor (start-up)",
                                                       "package-heavy validate-pair wall x floor"}
    assert "R=2/R=1 wall growth" in completed.stdout and "issue 9 targets:" in completed.stdout
    assert list((tmp_path / "scratch").iterdir()) == []  # the packets are removed


def test_short_prompts_write_smaller_packets(tmp_path):
    sizes = {}
    for flag in ([], ["--short-prompts"]):
        out = tmp_path / f"results{len(flag)}.json"
        completed = run(tmp_path, "--quick", "--repetitions", "1", *flag, "--out", str(out))
        assert completed.returncode == 0, completed.stderr
        saved = json.loads(out.read_text())
        sizes[saved["full_prompts"]] = saved["results"][0]["mib"]
    assert sizes[True] > sizes[False]


def test_a_package_larger_than_the_free_disk_is_refused_before_writing(tmp_path):
    out = tmp_path / "results.json"
    completed = run(tmp_path, "--quick", "--package-mib", str(2**40), "--out", str(out))
    assert completed.returncode == 2
    assert "free" in completed.stderr and "Traceback" not in completed.stderr
    assert not out.exists()


def load_run_module(monkeypatch):
    monkeypatch.syspath_prepend(str(RUN.parent))  # run.py and bench_validate.py
    spec = importlib.util.spec_from_file_location("benchmarks_run", RUN)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_failing_command_stops_the_run_with_its_receipts_violations(tmp_path, monkeypatch,
                                                                      capsys):
    run_module = load_run_module(monkeypatch)
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps({"violations": [{"rule": "some.rule", "message": "it broke"}]}))
    argv = [sys.executable, "-c", "import sys; sys.exit(2)", "--output", str(receipt)]
    with pytest.raises(SystemExit) as stopped:
        run_module.run_child(argv)
    assert stopped.value.code == 2
    assert "exited 2" in (err := capsys.readouterr().err) and "some.rule: it broke" in err
