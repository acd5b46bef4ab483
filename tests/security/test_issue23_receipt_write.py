"""Issue 23: a receipt that cannot be written (a full disk) leaves no receipt of another run
at the output path. Used to be: the previous receipt (perhaps a pass with a metric) stayed
there while the message said "no receipt was written". Now the earlier file is removed and
the message says so, or says that it could not be removed and is not this run's receipt."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest
from cli_run import run

TOY = Path(__file__).resolve().parents[1] / "engine" / "toy"
EARLIER = '{"receipt_schema": "flarespec-receipt-v1", "status": "pass"}\n'


@pytest.fixture
def toy_pair(tmp_path):
    for name in ("a", "b"):
        shutil.copytree(TOY / "inventory", tmp_path / name)
    output = tmp_path / "out" / "pair.json"
    output.parent.mkdir()
    output.write_text(EARLIER)  # an earlier run's receipt
    return tmp_path / "a" / "index.json", tmp_path / "b" / "index.json", output


def _disk_full(_descriptor):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def validate(toy_pair):
    a, b, output = toy_pair
    return run("validate-pair", "--baseline", a, "--candidate", b, "--output", output,
               "--spec", TOY / "base.yaml")


def test_a_full_disk_removes_the_earlier_receipt_and_says_so(toy_pair, monkeypatch):
    output = toy_pair[2]
    monkeypatch.setattr(os, "fsync", _disk_full)
    result = validate(toy_pair)
    assert result.exit_code == 2
    assert result.output == (
        f"flarespec: cannot write the receipt {output}: No space left on device; the earlier "
        f"file at {output} was removed (it was not this run's receipt); no receipt was "
        f"written\n")
    assert list(output.parent.iterdir()) == []  # no receipt, no temporary file


def test_an_earlier_receipt_that_cannot_be_removed_is_named_as_not_this_runs(toy_pair,
                                                                           monkeypatch):
    output = toy_pair[2]
    real_unlink = os.unlink

    def unlink(path, *args, **kwargs):
        if os.fspath(path) == str(output):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(output))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", _disk_full)
    monkeypatch.setattr(os, "unlink", unlink)
    result = validate(toy_pair)
    assert result.exit_code == 2
    assert (f"No space left on device; the earlier file at {output} could not be removed "
            f"(Permission denied) and is not this run's receipt; no receipt was written"
            in result.output)
    assert [p.name for p in output.parent.iterdir()] == ["pair.json"]  # no temporary file
    assert output.read_text() == EARLIER


def test_nothing_there_is_said_too(toy_pair, monkeypatch):
    output = toy_pair[2]
    output.unlink()
    monkeypatch.setattr(os, "fsync", _disk_full)
    result = validate(toy_pair)
    assert result.exit_code == 2
    assert f"No space left on device; no file is at {output}; no receipt was written" \
        in result.output


def test_a_receipt_written_replaces_the_earlier_one(toy_pair):
    """The ordinary path is unchanged: the earlier file is replaced, not removed first."""
    result = validate(toy_pair)
    assert result.exit_code == 0 and '"status": "pass"' in toy_pair[2].read_text()
    assert toy_pair[2].read_text() != EARLIER
