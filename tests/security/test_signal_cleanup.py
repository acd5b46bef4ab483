"""Issue 13: a terminating signal during the receipt's atomic write left a complete
temporary receipt ``.NAME.HEX.tmp`` beside the output (about 1 in 50 kills of ``measure``).

The writer now holds every blockable terminating signal from the temporary file's creation
to its rename; a signal that arrives meanwhile is delivered right after, with its usual
effect. The test kills writers in a loop: forked children of this process (cheap, so 200
kills fit in seconds) that write receipts over and over, each killed after a random delay
with a random signal; afterwards there must be no temporary file, the output must be a
complete receipt, and each child must have died of its signal.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flarespec.adapter import receipt as receipts

SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1,
           signal.SIGALRM, signal.SIGPIPE]
KILLS = 200
RECEIPT = {"receipt_schema": receipts.RECEIPT_SCHEMA, "status": "rejected",
           "violations": [{"rule": f"r.{i}", "message": "x" * 200} for i in range(300)]}


def _writer(target: Path, ready_fd: int) -> None:
    """The child: default signal actions (as a fresh ``flarespec`` process has, SIGINT
    aside, whose KeyboardInterrupt ends it too), no core files, then receipts forever."""
    try:
        for number in SIGNALS:
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.write(ready_fd, b"x")
        os.close(ready_fd)
        while True:
            receipts.write_atomically(target, RECEIPT)
    except BaseException:  # noqa: BLE001 - KeyboardInterrupt from SIGINT: leave as killed
        os._exit(128 + signal.SIGINT)
    os._exit(0)


def _kill_one(target: Path, rng: random.Random) -> tuple[int, int]:
    ready, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready)
        _writer(target, ready_w)
    os.close(ready_w)
    os.read(ready, 1)  # the child's handlers are set: a kill now is a kill of a writer
    os.close(ready)
    time.sleep(rng.uniform(0, 0.004))
    number = rng.choice(SIGNALS)
    os.kill(child, number)
    _, status = os.waitpid(child, 0)
    return number, status


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_no_temporary_receipt_survives_a_kill(tmp_path):
    rng = random.Random(13)
    target = tmp_path / "out" / "receipt.json"
    target.parent.mkdir()
    # a complete receipt is there from the start: each kill may land before a child's first
    # rename (a loaded machine), and the output must still be a complete receipt after
    # every kill, the old one or a new one, never a part of one
    receipts.write_atomically(target, RECEIPT)
    started = time.monotonic()
    for attempt in range(KILLS):
        number, status = _kill_one(target, rng)
        left = [p.name for p in target.parent.iterdir() if p.name != target.name]
        assert left == [], f"kill {attempt} by {signal.Signals(number).name} left {left}"
        died_of = os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status) - 128
        assert died_of == number, (attempt, signal.Signals(number).name, status)
    assert time.monotonic() - started < 60
    assert json.loads(target.read_text()) == RECEIPT  # whatever was renamed last is complete


def test_the_signal_mask_is_restored_and_a_held_signal_is_delivered(tmp_path):
    """In a fresh process: SIGTERM raised during the write ends the process after the rename,
    with the usual status, and the mask outside the write is what it was."""
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from flarespec.adapter import receipt as r\n"
        "real = r.os.replace\n"
        "def replace(a, b):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"  # arrives while held
        "    assert not list(Path(b).parent.glob('*.json'))\n"
        "    real(a, b)\n"
        "r.os.replace = replace\n"
        "before = signal.pthread_sigmask(signal.SIG_BLOCK, [])\n"
        "try:\n"
        "    r.write_atomically(Path(sys.argv[1]), {'a': 1})\n"
        "finally:\n"
        "    print('not reached', flush=True)\n"
    )
    target = tmp_path / "r.json"
    done = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == -signal.SIGTERM, done
    assert json.loads(target.read_text()) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_failed_write_under_held_signals_restores_the_mask(tmp_path, monkeypatch):
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])

    def full(*_args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(receipts.os, "replace", full)
    with pytest.raises(receipts.ReceiptUnwritable, match="No space left"):
        receipts.write_atomically(tmp_path / "r.json", {"a": 1})
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
    assert list(tmp_path.iterdir()) == []
