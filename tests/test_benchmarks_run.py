"""``benchmarks/run.py``, issues 9 and 15's benchmark command, works end to end (a smoke run on tiny
sizes; the figures themselves are never asserted: timing is for benchmarks, not tests)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
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
        for command in ("floor", "floor_2p", "measure", "measure_j1", "validate_pair"):
            assert set(row[command]) == {"wall", "cpu", "rss_mib"}
        assert set(row["ratios"]) == {"measure", "measure_j1", "validate_pair"}
        assert set(row["ratios"]["measure"]) == {"wall", "wall_2p", "cpu", "rss"}
    assert rows["R=2"]["growth"]["from_repetitions"] == 1
    assert set(rows["R=2"]["growth"]["ratio_drift"]) == {"measure", "measure_j1", "validate_pair"}
    assert set(rows["R=2"]["growth"]["cpu"]) >= {"floor", "measure_j1"}
    assert rows["R=1+1MiB pkg"]["mib"] > rows["R=1"]["mib"] + 1.9  # 1 MiB in each packet
    assert set(rows["R=1+1MiB pkg"]["rss_added_mib"]) == {"floor", "floor_2p", "measure",
                                                          "measure_j1", "validate_pair"}
    assert {t["target"] for t in saved["targets"]} >= {"R=1 measure wall x floor (start-up)",
                                                       "package-heavy validate-pair wall x floor"}
    assert "R=2/R=1 wall growth" in completed.stdout and "issue 9 targets:" in completed.stdout
    assert "issue 15 targets (the issue's floor):" in completed.stdout
    assert saved["issue15_targets"] == []  # neither R=5/R=20 nor a baseline was run
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


def test_issue15_targets_from_rows(monkeypatch):
    """Each issue-15 target reads its figure from the right column: JOBS=1 CPU and RSS to
    the one-process floor, default wall to the two-process floor, CPU growth R=20/R=5, and
    R=1 against the baseline code of the same run."""
    run_module = load_run_module(monkeypatch)

    def row(repetitions, scale, baseline=False):
        medians = {name: {"wall": scale, "cpu": scale, "rss_mib": 10.0 * scale}
                   for name in run_module.COMMANDS}
        medians["floor_2p"] = {"wall": scale / 2, "cpu": scale, "rss_mib": 10.0 * scale}
        medians["measure_j1"] = {"wall": 3 * scale, "cpu": 3 * scale, "rss_mib": 14.0 * scale}
        if baseline:
            medians["measure_base"] = {"wall": 1.1 * scale, "cpu": scale, "rss_mib": 1.0}
            medians["measure_j1_base"] = {"wall": 1.0, "cpu": 2 * scale, "rss_mib": 1.0}
        floor, floor_2p = medians["floor"], medians["floor_2p"]
        ratios = {name: {"wall": m["wall"] / floor["wall"], "wall_2p": m["wall"] / floor_2p["wall"],
                         "cpu": m["cpu"] / floor["cpu"], "rss": m["rss_mib"] / floor["rss_mib"]}
                  for name, m in medians.items() if name not in run_module.FLOORS}
        return {"size": f"R={repetitions}", "repetitions": repetitions, "package_mib": 0,
                "files": 1, "mib": 1.0, **medians, "ratios": ratios}

    rows = [row(1, 1.0, baseline=True), row(5, 2.0), row(20, 8.0), row(100, 40.0)]
    run_module.add_growth(rows)
    found = {t["target"]: (round(t["figure"], 3), t["met"]) for t in run_module.issue15_targets(rows)}
    assert found == {
        "R=20 measure JOBS=1 CPU x floor": (3.0, False),
        "R=20 measure (default) wall x two-process floor": (2.0, True),
        "R=20 measure JOBS=1 peak RSS x floor": (1.4, True),
        "R=100 measure JOBS=1 peak RSS x floor": (1.4, True),
        "R=20/R=5 measure JOBS=1 CPU growth": (4.0, True),
        "R=1 measure wall / baseline's (not slower)": (0.909, True),
        "R=1 measure JOBS=1 CPU / baseline's (not slower)": (1.5, False),
    }
    assert "issue 15 targets" in run_module.table(rows, [], run_module.issue15_targets(rows))


def test_the_floor_splits_prometheus_text_by_hand(monkeypatch):
    """The issue's floor: (name, labels, float value) per sample, no library."""
    load_run_module(monkeypatch)
    from bench_validate import prometheus_samples

    text = ('# HELP a_total A.\n# TYPE a_total counter\na_total{route="/v1",code="200"} 48\n'
            'b 0.5 1700000000000\n\nc{x="1"} +Inf\n')
    assert prometheus_samples(text) == [("a_total", {"route": "/v1", "code": "200"}, 48.0),
                                        ("b", {}, 0.5), ("c", {"x": "1"}, float("inf"))]


def load_identity_module(monkeypatch):
    path = RUN.parent / "receipts_identity.py"
    spec = importlib.util.spec_from_file_location("receipts_identity", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_receipts_identity_compares_bytes_after_the_spec_directory_and_hook_digests(
        tmp_path, monkeypatch):
    """Only the spec files' directory and the hook modules' digests are normalised: any
    other byte, or the exit code, is a difference."""
    identity = load_identity_module(monkeypatch)

    def receipt(specs: str, hook: str, message: str = "m", resolved: str = "r") -> dict:
        return {"violations": [{"rule": "x", "message": message}],
                "validator": {"specs": [{"resolved_sha256": resolved,
                                         "files": [{"path": f"{specs}/flare/a.yaml"}]}],
                              "hooks": [{"module": "flarespec.hooks.flare", "sha256": hook}]}}

    cases = {  # name: (baseline receipt, current receipt, baseline exit, current exit)
        "same": (receipt("/b/specs", "1" * 64), receipt("/c/specs", "1" * 64), 0, 0),
        "hook": (receipt("/b/specs", "1" * 64), receipt("/c/specs", "2" * 64), 2, 2),
        "message": (receipt("/b/specs", "1" * 64), receipt("/c/specs", "1" * 64, "n"), 2, 2),
        "spec": (receipt("/b/specs", "1" * 64), receipt("/c/specs", "1" * 64, resolved="s"), 0, 0),
        "exit": (receipt("/b/specs", "1" * 64), receipt("/c/specs", "1" * 64), 0, 2),
    }
    jobs = [{"name": name} for name in cases]
    for side, index, exit_index in (("baseline", 0, 2), ("current", 1, 3)):
        (tmp_path / side).mkdir()
        for number, case in enumerate(cases.values()):
            (tmp_path / side / f"{number}.json").write_text(json.dumps(case[index], indent=2))
        (tmp_path / side / "codes.json").write_text(
            json.dumps({str(n): case[exit_index] for n, case in enumerate(cases.values())}))
    changed: set = set()
    found = identity.compare(jobs, tmp_path / "baseline", tmp_path / "current", "/b/specs",
                             "/c/specs", changed)
    assert [line.split(":")[0] for line in found] == ["message", "spec", "exit"]
    assert "only the validator identity differs" in found[1] and "exit 0" in found[2]
    assert changed == {"flarespec.hooks.flare"}
    strict = identity.compare(jobs, tmp_path / "baseline", tmp_path / "current", "/b/specs",
                              "/c/specs", set(), strict_hooks=True)
    assert [line.split(":")[0] for line in strict] == ["hook", "message", "spec", "exit"]


def test_bench_layers_measures_each_layer_against_the_floor(tmp_path):
    """``benchmarks/bench_layers.py``: the floor, loading alone, with shapes, and the full
    evaluation, each a figure and a ratio, and the start-up of a measure process against
    the pair's floor (never asserted beyond being there)."""
    completed = subprocess.run(
        [sys.executable, str(RUN.parent / "bench_layers.py"), "--repetitions", "1", "--rounds", "1",
         "--json"], capture_output=True, text=True, timeout=120,
        env={**os.environ, "TMPDIR": str(tmp_path)})
    assert completed.returncode == 0, completed.stderr
    layers = json.loads(completed.stdout)
    assert list(layers) == ["floor", "loading", "shapes", "full", "start-up"]
    assert all(layer["cpu_s"] > 0 for layer in layers.values())
    assert layers["floor"]["x_floor"] == 1.0
    assert layers["start-up"]["x_pair_floor"] > 0  # a measure process's, before its packet
    assert list(tmp_path.iterdir()) == []  # the packet is removed



@pytest.mark.parametrize("split", [True, False])
def test_profile_measure_times_the_rules_of_passes_too(tmp_path, split):
    """``benchmarks/profile_measure.py``: the rooms, then the rules' own CPU, rows for the
    rules of passes as well as those run one by one (``--split-passes``: one rule a pass,
    else a pass's row names its first rule and how many more run in it)."""
    argv = [sys.executable, str(RUN.parent / "profile_measure.py"), "--repetitions", "1",
            "--runs", "1", "--top", "200"] + (["--split-passes"] if split else [])
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=300,
                               env={**os.environ, "TMPDIR": str(tmp_path)})
    assert completed.returncode == 0, completed.stderr
    rows = completed.stdout.split("the rules' own CPU", 1)[1].split("cProfile of measure", 1)[0]
    if split:
        assert "  measurements.observation.matches-sidecar (pass over request)\n" in rows
        assert " more (pass over " not in rows
    else:  # the sidecar rule runs in the pass of the request rules
        assert re.search(r" and \d+ more \(pass over request\)\n", rows)
    assert "  response.truncated\n" in rows  # a rule another requires: run one by one
    assert list(tmp_path.iterdir()) == []
