"""``benchmarks/run.py``'s progress: a line on stderr before each run (size, run k of n, the
command, runs done of all) and a final line, none with ``--quiet``; stdout's table is the
same either way. The children are faked (no benchmark runs here) and the clock injected."""

from __future__ import annotations

import io

from test_benchmarks_run import load_run_module


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.5
        return self.now


def fake_children(run_module, monkeypatch, ran: list):
    def run_child(argv, env=None):
        ran.append(argv)
        return {"wall": 1.0, "cpu": 1.0, "rss_mib": 10.0}

    monkeypatch.setattr(run_module, "run_child", run_child)
    monkeypatch.setattr(run_module, "write_sizes", lambda *arguments: None)
    monkeypatch.setattr(run_module, "packet_size", lambda scratch, size: (3, 1.0))
    monkeypatch.setattr(run_module, "check_disk", lambda *arguments: None)


def test_a_line_before_each_run_says_size_run_command_and_count(monkeypatch, tmp_path):
    run_module = load_run_module(monkeypatch)
    fake_children(run_module, monkeypatch, ran := [])
    stream = io.StringIO()
    progress = run_module.Progress(10, stream=stream, clock=Clock())
    run_module.measure_size(tmp_path, run_module.Size(20), 2, progress=progress)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "run.py: R=20: measure, untimed (warms the compiled-spec cache) " \
        "[0/10 runs, 2 s]"
    assert lines[1:] == [f"run.py: R=20: run {k}/2, {run_module.LABELS[name]} "
                         f"[{done}/10 runs, {1.5 * (done + 2):.0f} s]"
                         for done, (k, name) in enumerate(
                             (k, name) for k in (1, 2) for name in run_module.COMMANDS)]
    assert len(ran) == 1 + 2 * len(run_module.COMMANDS)  # a line per run, the warm-up's too


def test_the_count_of_all_runs_includes_the_baseline_commands(monkeypatch, tmp_path):
    run_module = load_run_module(monkeypatch)
    sizes = [run_module.Size(1), run_module.Size(5), run_module.Size(1, 8)]
    assert run_module.runs_in_all(sizes, 5, None) == 3 * 5 * len(run_module.COMMANDS) == 75
    assert run_module.runs_in_all(sizes, 5, tmp_path) == 3 * 5 * 7


def test_quiet_progress_writes_nothing(monkeypatch):
    run_module = load_run_module(monkeypatch)
    stream = io.StringIO()
    progress = run_module.Progress(1, quiet=True, stream=stream, clock=Clock())
    progress.note("writing")
    progress.warm_up(run_module.Size(1), "measure")
    progress.run(run_module.Size(1), 1, 1, "floor")
    progress.finish()
    assert stream.getvalue() == "" and progress.done == 1


def test_main_puts_progress_on_stderr_and_quiet_removes_it_stdout_the_same(monkeypatch,
                                                                           tmp_path, capsys):
    run_module = load_run_module(monkeypatch)
    fake_children(run_module, monkeypatch, [])
    outputs = {}
    for flags in ([], ["--quiet"]):
        run_module.main(["--quick", "--repetitions", "1", "2", "--out",
                         str(tmp_path / "results.json"), *flags])
        outputs[bool(flags)] = capsys.readouterr()
    loud, quiet = outputs[False], outputs[True]
    assert loud.out == quiet.out and "R=1 measured\nR=2 measured\n" in loud.out
    assert "run.py" not in loud.out and "run 1/1" not in loud.out
    assert quiet.err == ""
    lines = loud.err.splitlines()
    total = 2 * len(run_module.COMMANDS)
    assert lines[0].startswith(f"run.py: writing 2 pairs (R=1, R=2) [0/{total} runs, ")
    assert f"run.py: R=2: run 1/1, validate-pair [{total - 1}/{total} runs, " in loud.err
    assert lines[-1].startswith(f"run.py: all runs done [{total}/{total} runs, ")
