"""``hostile.run_bounded``: the peak RSS it reports is the command's own, whatever the size of
the test process that starts it (a child's wait4 peak counts the process it was forked from
until its exec, so the command runs as the child of a small launcher)."""

from __future__ import annotations

import sys

from hostile import run_argv_bounded

MIB = 1 << 20


def test_a_small_command_measures_small_even_from_a_large_test_process():
    ballast = bytearray(400 * MIB)  # the test process at 400 MiB more (pages touched below)
    ballast[::4096] = b"x" * len(ballast[::4096])
    run = run_argv_bounded([sys.executable, "-c", "pass"])
    assert run.exit_code == 0
    assert 0 < run.max_rss_bytes < 100 * MIB, run
    del ballast


def test_a_large_command_measures_large():
    run = run_argv_bounded([sys.executable, "-c", "b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096])"])
    assert run.exit_code == 0
    assert run.max_rss_bytes > 200 * MIB, run


def test_the_exit_code_and_output_are_the_commands():
    run = run_argv_bounded([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"])
    assert (run.exit_code, run.stdout, run.stderr) == (3, "out\n", "err\n")
