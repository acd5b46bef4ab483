"""``flarespec.output.progress``: a bar on a terminal, plain lines in a log (every tenth or
every ``EVERY_SECONDS``, whichever first, and a final line), nothing when quiet, and never a
byte on stdout. Time is an injected clock: no test sleeps."""

from __future__ import annotations

import io
import json
import re

import click
import pytest
from click.testing import CliRunner

from flarespec.output import progress as module
from flarespec.output.progress import (EVERY_SECONDS, BarProgress, LineProgress, NullProgress,
                                       progress, status_line)

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    """A clock that moves only when told (``tick`` seconds per reading, or ``at``)."""

    def __init__(self, tick: float = 0.0):
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    for name in ("TERM", "NO_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


def lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


# ----------------------------------------------------------------------- a log (no tty)


def test_the_status_line_reads_label_count_unit_percent_and_seconds():
    assert status_line("spec test some/spec", 120, 229, "cases", 31.4) == \
        "spec test some/spec: 120/229 cases (52%), 31 s"
    assert status_line("x", 0, 0, "items", 0) == "x: 0/0 items (100%), 0 s"


def test_a_log_gets_a_line_each_tenth_and_one_final_line_not_a_duplicate_at_the_end():
    stream = io.StringIO()
    with progress(20, "work", stream=stream, unit="cases", clock=Clock()) as step:
        for number in range(20):
            step(f"case-{number}")
    assert lines(stream) == [f"work: {done}/20 cases ({done * 5}%), 0 s"
                             for done in range(2, 21, 2)]


def test_a_log_gets_a_line_every_ten_seconds_when_tenths_come_slower():
    clock = Clock()
    stream = io.StringIO()
    with progress(1000, "slow", stream=stream, clock=clock) as step:
        for _ in range(9):
            clock.now += 4.0  # 4 s per item: a line at 12 s, 24 s, 36 s (from the last line)
            step()
    assert lines(stream) == ["slow: 3/1000 items (0%), 12 s", "slow: 6/1000 items (0%), 24 s",
                             "slow: 9/1000 items (0%), 36 s"]  # the final line: no repeat
    assert EVERY_SECONDS == 10.0


def test_whichever_comes_first_a_tenth_restarts_the_ten_seconds():
    clock = Clock()
    stream = io.StringIO()
    with progress(100, "mixed", stream=stream, clock=clock) as step:
        for at in [1, 2, 3, 4, 5, 6, 7, 8, 9, 9.5, 19, 19.6, 25]:
            clock.now = at
            step()  # the 10th at 9.5 s: a tenth; the 12th at 19.6 s: 10.1 s since that line
        clock.now = 26
    assert lines(stream) == ["mixed: 10/100 items (10%), 10 s", "mixed: 12/100 items (12%), 20 s",
                             "mixed: 13/100 items (13%), 26 s"]


def test_the_final_line_says_where_the_work_stopped_and_the_error_goes_on():
    clock = Clock()
    stream = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        with progress(229, "spec test some/spec", stream=stream, unit="cases",
                      clock=clock) as step:
            for _ in range(120):
                step()
            clock.now = 31.0
            raise KeyboardInterrupt
    assert lines(stream)[-1] == "spec test some/spec: 120/229 cases (52%), 31 s"


def test_an_error_before_the_first_item_leaves_no_line():
    stream = io.StringIO()
    with pytest.raises(ValueError):
        with progress(4, "early", stream=stream, clock=Clock()):
            raise ValueError("the spec does not compile")
    assert stream.getvalue() == ""


def test_nothing_to_do_is_one_final_line():
    stream = io.StringIO()
    with progress(0, "empty", stream=stream, clock=Clock()):
        pass
    assert lines(stream) == ["empty: 0/0 items (100%), 0 s"]


def test_term_dumb_gets_plain_lines_even_on_a_tty(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    stream = FakeTerminal()
    with progress(2, "dumb", stream=stream, clock=Clock()) as step:
        assert isinstance(step.__self__, LineProgress)
        step()
        step()
    assert lines(stream) == ["dumb: 1/2 items (50%), 0 s", "dumb: 2/2 items (100%), 0 s"]
    assert "\r" not in stream.getvalue() and not ANSI.search(stream.getvalue())


def test_a_stream_without_isatty_or_closed_is_a_log():
    assert not module.is_terminal(object())
    closed = io.StringIO()
    closed.close()
    assert not module.is_terminal(closed)


# ----------------------------------------------------------------------- a terminal


def frames(stream: io.StringIO) -> list[str]:
    """What the terminal shows after each redraw (ANSI sequences removed)."""
    return [ANSI.sub("", frame).rstrip("\n") for frame in stream.getvalue().split("\r")
            if ANSI.sub("", frame).strip()]


def test_a_terminal_gets_clicks_bar_redrawn_in_place_ending_with_the_elapsed_time(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    stream = FakeTerminal()
    clock = Clock(tick=7.0)  # enter at 14 s (the bar reads once when built), exit at 21 s
    with progress(5, "bar", stream=stream, clock=clock) as step:
        assert isinstance(step.__self__, BarProgress)
        for number in range(5):
            step(f"case-{number}")
    shown = frames(stream)
    assert shown[0].startswith("bar  [") and "0/5" in shown[0]
    assert "3/5" in shown[3] and "60%" in shown[3] and shown[3].endswith("case-2")
    assert re.fullmatch(r"bar  \[#+\]  5/5  100%  7 s\s*", shown[-1])
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\n") == 1


def test_a_long_item_name_is_shortened_to_keep_the_bar_on_one_line(monkeypatch):
    monkeypatch.setenv("COLUMNS", "70")
    stream = FakeTerminal()
    with progress(229, "spec test some/spec", stream=stream) as step:
        for number in range(229):
            step(f"a/rather/long/case/name/that/would/wrap/the/line-{number}\nwith a newline")
    shown = frames(stream)
    assert all(len(frame.rstrip()) < 70 for frame in shown)
    assert any(frame.rstrip().endswith("…") for frame in shown)
    assert "\n" not in "".join(stream.getvalue().split("\r")[:-1])


def test_the_bar_stays_where_the_work_stopped(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    stream = FakeTerminal()
    with pytest.raises(RuntimeError):
        with progress(4, "stops", stream=stream, clock=Clock()) as step:
            step("one")
            raise RuntimeError("broken")
    assert re.fullmatch(r"stops  \[#+-+\]  1/4   25%  0 s\s*", frames(stream)[-1])


def test_no_color_changes_nothing_the_bar_has_no_colour(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    stream = FakeTerminal()
    with progress(3, "plain", stream=stream, clock=Clock()) as step:
        assert isinstance(step.__self__, BarProgress)
        for _ in range(3):
            step()
    assert not re.search(r"\x1b\[[0-9;]*m", stream.getvalue())  # no SGR (colour) sequence


# ----------------------------------------------------------------------- quiet, stdout


@pytest.mark.parametrize("stream", [io.StringIO(), FakeTerminal()], ids=["log", "terminal"])
def test_quiet_shows_nothing(stream):
    with progress(3, "quiet", quiet=True, stream=stream) as step:
        assert isinstance(step.__self__, NullProgress)
        for _ in range(3):
            step("x")
    assert stream.getvalue() == ""


def test_the_default_stream_is_stderr_never_stdout(capsys):
    with progress(2, "default", clock=Clock()) as step:
        step()
        step()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["default: 1/2 items (50%), 0 s",
                                         "default: 2/2 items (100%), 0 s"]


@click.command()
@click.option("--quiet", is_flag=True)
def machine(quiet: bool) -> None:
    """A command whose stdout is machine output, with progress around its work."""
    with progress(3, "machine", quiet=quiet, unit="cases") as step:
        done = []
        for name in ("a", "b", "c"):
            done.append(name)
            step(name)
    click.echo(json.dumps({"done": done}))


def test_under_a_command_stdout_keeps_only_the_machine_output():
    result = CliRunner().invoke(machine, [], catch_exceptions=False)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"done": ["a", "b", "c"]}
    assert result.stderr.splitlines()[-1].startswith("machine: 3/3 cases (100%), ")
    assert "machine" not in result.stdout


def test_under_a_command_quiet_leaves_stderr_empty():
    result = CliRunner().invoke(machine, ["--quiet"], catch_exceptions=False)
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout) == {"done": ["a", "b", "c"]}


def test_the_module_docstring_shows_the_three_line_usage():
    assert ('with progress(len(cases), f"spec test {spec_id}", quiet=quiet) as step:\n'
            '        results = check_cases(cases, ..., on_case=lambda result: step(result.name))'
            ) in module.__doc__
