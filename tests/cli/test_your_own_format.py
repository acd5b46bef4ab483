"""docs/your-own-format.md is executed: its ``file=PATH`` blocks are written into a temporary
directory, its ``sh run`` blocks run there in order (``exit=N``: the exit code they must
end with, default 0), and a ``json output`` block is what the command before it printed."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "your-own-format.md"
FENCE = re.compile(r"^```(\S+)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


def blocks():
    for match in FENCE.finditer(DOC.read_text()):
        language, info, body = match.group(1), match.group(2).split(), match.group(3)
        yield language, dict(item.split("=", 1) if "=" in item else (item, True)
                             for item in info), body


def _run(line: str, cwd: Path) -> subprocess.CompletedProcess:
    words = shlex.split(line)
    if words[0] == "flarespec":
        words = [sys.executable, "-m", "flarespec", *words[1:]]
        return subprocess.run(words, cwd=cwd, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "FLARESPEC_CACHE": "0"})
    return subprocess.run(line, shell=True, cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_the_walk_through_runs_as_written(tmp_path):
    ran, last = 0, None
    for language, info, body in blocks():
        if "file" in info:
            target = tmp_path / info["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body)
        elif language == "sh" and info.get("run"):
            commands = [line for line in body.splitlines() if line.strip()]
            for number, line in enumerate(commands):
                last = _run(line, tmp_path)
                wanted = int(info.get("exit", 0)) if number == len(commands) - 1 else 0
                assert last.returncode == wanted, (line, last.stdout, last.stderr)
                assert "Traceback" not in last.stderr
                ran += 1
        elif language == "json" and info.get("output"):
            assert json.loads(last.stdout) == json.loads(body)
        if language == "sh" and body.startswith("flarespec check") and "broken/" in body:
            # the broken copy is rejected by the rule the page names, at the summary
            shown = last.stdout + last.stderr
            assert "ttfb.summary.ttft" in shown and "summary.json" in shown
    assert ran >= 7
    assert last.args[3:5] == ["spec", "test"] and last.returncode == 0  # the cases ran last
