"""Issue 23, "also noticed": after an internal error the message said "no receipt was
written" while an earlier run's receipt stayed at the output path. It now says whose file
is there, so nobody takes it for this run's receipt."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import run

TOY = Path(__file__).resolve().parents[1] / "engine" / "toy"


@pytest.mark.parametrize("earlier", [True, False], ids=["earlier-file", "nothing-there"])
def test_an_internal_error_says_whose_file_is_at_the_output(tmp_path, monkeypatch, earlier):
    from flarespec.adapter import commands

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(commands, "measure", broken)
    output = tmp_path / "receipt.json"
    if earlier:
        output.write_text('{"status": "pass"}')
    entry = TOY / "inventory" / "index.json"
    result = run("measure", "--packet", entry, "--peer", entry, "--output", output,
                 "--spec", TOY / "base.yaml")
    assert result.exit_code == 2
    assert "internal error: RuntimeError: a bug; no receipt was written" in result.output
    said = f"the file at {output} is an earlier run's, not this run's receipt"
    assert (said in result.output) is earlier
    assert output.exists() is earlier
