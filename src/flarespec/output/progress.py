"""Progress of long work on stderr, never on stdout (stdout carries the machine output:
JSON, SARIF, JUnit). Generic: a count, a label and a unit, nothing about what is counted.

* stderr a terminal: click's own progress bar (``click.progressbar``), with the position,
  the percentage, an estimate of the time left and the item just done; when the work ends
  the bar stays with the elapsed time in place of the estimate.
* stderr not a terminal (a CI log, a file, a pipe) or ``TERM=dumb`` (a terminal that cannot
  redraw a line): plain lines, one when the work crosses another tenth of the total or
  when ``EVERY_SECONDS`` passed since the last line, whichever comes first (checked at each
  step), and a final line when the work ends, finished or not (not when an error ends it
  before the first item)::

      spec test some/spec: 120/229 cases (52%), 31 s

* ``quiet``: nothing (``NullProgress``).

The bar has no colour, so ``NO_COLOR`` changes nothing. Usage, the command line around a
library call that takes a per-item callback::

    with progress(len(cases), f"spec test {spec_id}", quiet=quiet) as step:
        results = check_cases(cases, ..., on_case=lambda result: step(result.name))

``unit`` names what is counted in the plain lines (``unit="cases"`` gives the line above;
the default is ``items``). This room imports nothing of flarespec's other rooms.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import Callable, TextIO

import click

EVERY_SECONDS = 10.0     # a plain line at least this often (at a step) ...
EVERY_FRACTION = 10      # ... and one each time another 1/10 of the total is done
BAR_WIDTH = 30          # the bar's width, narrowed (to MIN_BAR_WIDTH) on a narrow terminal
MIN_BAR_WIDTH = 10
Step = Callable[..., None]  # step(item_label: str | None = None)


class NullProgress:
    """Nothing shown: ``quiet``, or no stderr at all."""

    def __enter__(self) -> Step:
        return self.step

    def __exit__(self, *exc) -> None:
        return None

    def step(self, item_label: str | None = None) -> None:
        return None


def percent(done: int, total: int) -> int:
    """Whole percent done, rounded down (never 100 before the end), at most 100."""
    return 100 if total <= 0 else min(100, done * 100 // total)


def status_line(label: str, done: int, total: int, unit: str, seconds: float) -> str:
    """``label: done/total unit (pct%), N s``: a plain progress line."""
    return f"{label}: {done}/{total} {unit} ({percent(done, total)}%), {seconds:.0f} s"


class LineProgress:
    """Plain lines for a log: every tenth of the total or every ``EVERY_SECONDS`` (whichever
    comes first, checked at each step), and a final line at the end. ``clock`` is
    injectable (a test's clock, never a sleep)."""

    def __init__(self, total: int, label: str, stream: TextIO, *, unit: str = "items",
                 clock: Callable[[], float] = time.monotonic):
        self.total, self.label, self.stream, self.unit, self.clock = total, label, stream, unit, clock
        self.done = 0
        self.start = self.last = clock()
        self.shown = 0  # tenths of the total reported so far
        self.written: str | None = None

    def __enter__(self) -> Step:
        self.start = self.last = self.clock()
        return self.step

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None or self.done:  # an error before any item: the error says it all
            self._write(self.clock(), final=True)

    def _tenths(self) -> int:
        return EVERY_FRACTION if self.total <= 0 else self.done * EVERY_FRACTION // self.total

    def step(self, item_label: str | None = None) -> None:
        self.done += 1
        now = self.clock()
        if self.done < self.total and (self._tenths() > self.shown
                                       or now - self.last >= EVERY_SECONDS):
            self._write(now)

    def _write(self, now: float, final: bool = False) -> None:
        """A line; the final one only if it says more than the last (not the same twice)."""
        text = status_line(self.label, self.done, self.total, self.unit, now - self.start)
        self.shown, self.last = self._tenths(), now
        if not (final and text == self.written):
            click.echo(text, file=self.stream)
        self.written = text


def _one_line(text: str, room: int) -> str:
    """``text`` on one line of at most ``room`` characters (a long name would wrap and
    break the bar's redraw), its control characters made visible (output/visible.py)."""
    from flarespec.output.visible import visible

    text = visible(" ".join(text.split()), limit=None)
    return text if len(text) <= room else text[:max(0, room - 1)] + "…"


def columns(stream: TextIO) -> int:
    """The width of the terminal ``stream`` writes to (``COLUMNS`` first; stdout may be a
    file while stderr is the terminal)."""
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return shutil.get_terminal_size().columns


class BarProgress:
    """click's progress bar on a terminal, fitted to its width (a narrower bar and a
    shortened item name rather than a wrapped line); at the end the elapsed time replaces
    the estimate and the bar stays, finished or where the work stopped."""

    def __init__(self, total: int, label: str, stream: TextIO, *,
                 clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.start = clock()
        self.elapsed: str | None = None
        # label  [bar]  pos/total  pct  eta  item, and a column spare: 26 besides the label,
        # the bar and the position's digits; the bar narrows to leave an item name 24
        free = columns(stream) - len(label) - 2 * len(str(total)) - 26
        width = max(MIN_BAR_WIDTH, min(BAR_WIDTH, free - 24))
        self.room = free - width
        self.bar = click.progressbar(length=total, label=label, file=stream, width=width,
                                     show_pos=True, show_percent=True, show_eta=True,
                                     item_show_func=self._item)

    def _item(self, item: str | None) -> str | None:
        if self.elapsed is not None:
            return self.elapsed
        return None if item is None or self.room < 4 else _one_line(item, self.room)

    def __enter__(self) -> Step:
        self.start = self.clock()
        self.bar.__enter__()
        return self.step

    def __exit__(self, *exc) -> None:
        self.bar.show_eta = False
        self.elapsed = f"{self.clock() - self.start:.0f} s"
        self.bar.render_progress()
        self.bar.__exit__(*exc)

    def step(self, item_label: str | None = None) -> None:
        self.bar.update(1, item_label)


def is_terminal(stream: TextIO) -> bool:
    """A terminal that can redraw a line: a tty, and ``TERM`` not ``dumb``."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
    return bool(tty) and os.environ.get("TERM") != "dumb"


def progress(total: int, label: str, *, quiet: bool = False, stream: TextIO | None = None,
             unit: str = "items", clock: Callable[[], float] = time.monotonic):
    """A context manager yielding ``step(item_label=None)``, to call once per item done:
    a bar when ``stream`` (default: stderr at the time of the call) is a terminal, plain
    lines otherwise, nothing when ``quiet``. ``total`` is the number of items."""
    stream = sys.stderr if stream is None else stream
    if quiet or stream is None:
        return NullProgress()
    if is_terminal(stream):
        return BarProgress(total, label, stream, clock=clock)
    return LineProgress(total, label, stream, unit=unit, clock=clock)
