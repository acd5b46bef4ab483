"""Issue 23, item 15 and the trailing slash: how the runner commands take a packet path.

An unreadable ``packet.json`` is evidence (docs/security.md): a rejection receipt with
``packet.json.unreadable``, not click's usage error ``Path '…' is not readable`` and no
receipt, which the runner cannot read. A path spelled as a directory (``A/packet.json/``,
``A/packet.json/.``) names no file: ``Path`` dropped the ending, so the file before it was
validated; now it is a usage error, as is such an ``--output``."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest
from cli_run import run

from flarespec.adapter.commands import measure

CLI = (sys.executable, "-m", "flarespec")
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _without_permission_override() -> None:
    """``preexec_fn``: drop root's overrides of file permissions from the bounding set, so
    the command it runs (still uid 0, the owner of the test's files and of the interpreter)
    is refused a mode-000 file as any user is. Nothing to drop for another user."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_unprivileged(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True,
                          preexec_fn=_without_permission_override)


@pytest.fixture
def unreadable(packet_pair):
    """The pair, its baseline's packet.json mode 000 (and proven unreadable to the runs)."""
    a, _ = packet_pair
    a.chmod(0)
    try:
        probe = subprocess.run([sys.executable, "-c", f"open({str(a)!r}).close()"],
                               capture_output=True, preexec_fn=_without_permission_override)
    except OSError as problem:  # no prctl, or not allowed to drop capabilities here
        pytest.skip(f"cannot run without root's permission override: {problem}")
    if probe.returncode == 0:
        pytest.skip("a mode-000 file stays readable here")
    yield packet_pair
    a.chmod(0o644)


def rules_by_role(receipt) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for violation in receipt["violations"]:
        found.setdefault(violation["packet"], set()).add(violation["rule"])
    return found


@pytest.mark.parametrize("command, roles, expected", [
    ("measure", ("--packet", "--peer"), {"packet": {"packet.json.unreadable"}}),
    ("measure", ("--peer", "--packet"), {"peer": {"packet.json.unreadable"},
                                         "pair": {"pair.peer-invalid"}}),
    ("validate-pair", ("--baseline", "--candidate"), {"baseline": {"packet.json.unreadable"}}),
], ids=["measure-packet", "measure-peer", "validate-pair"])
def test_an_unreadable_packet_json_is_evidence_with_a_receipt(unreadable, tmp_path, command,
                                                              roles, expected):
    a, b = unreadable
    output = tmp_path / "r.json"
    completed = run_unprivileged(command, roles[0], a, roles[1], b, "--output", output)
    assert completed.returncode == 2, completed.stderr
    assert "Usage" not in completed.stderr and "Traceback" not in completed.stderr
    receipt = json.loads(output.read_text())
    assert receipt["status"] == "rejected" and "metrics" not in receipt
    assert rules_by_role(receipt) == expected
    (violation,) = [v for v in receipt["violations"] if v["rule"] == "packet.json.unreadable"]
    assert violation["file"] == "packet.json"
    assert violation["message"] == "cannot open: Permission denied"


def test_the_command_line_never_asks_whether_a_packet_is_readable(packet_pair, tmp_path,
                                                                  monkeypatch):
    """In-process, as any user: whatever os.access says, the path goes to the validator
    (which reads the file, here successfully), never to a usage error."""
    a, b = packet_pair
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    result = run("measure", "--packet", a, "--peer", b, "--output", tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "pass"


@pytest.mark.parametrize("ending", ["/", "/.", "//"])
@pytest.mark.parametrize("command, options, which", [
    ("measure", ("--packet", "--peer"), 0), ("measure", ("--packet", "--peer"), 1),
    ("validate-pair", ("--baseline", "--candidate"), 0),
    ("validate-pair", ("--baseline", "--candidate"), 1)])
def test_a_packet_path_spelled_as_a_directory_is_a_usage_error(tmp_path, ending, command,
                                                               options, which):
    paths = [str(tmp_path / name / "packet.json") for name in ("a", "b")]
    paths[which] += ending
    output = tmp_path / "r.json"
    result = run(command, options[0], paths[0], options[1], paths[1], "--output", output)
    assert result.exit_code == 2
    assert (f"Invalid value for '{options[which]}': {paths[which]!r} names a directory (it "
            f"ends with {ending[-2:] if ending != '//' else '/'!r}): name the packet's entry "
            f"file itself") in result.output
    assert not output.exists()


def test_the_library_refuses_such_a_path_before_reading_anything(tmp_path):
    with pytest.raises(ValueError, match="names a directory"):
        measure(f"{tmp_path}/a/packet.json/", tmp_path / "b" / "packet.json",
                tmp_path / "out" / "r.json")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("ending", ["/", "/."])
def test_an_output_spelled_as_a_directory_is_refused(tmp_path, ending):
    """Path("R/r.json/") is R/r.json: the receipt was written there."""
    result = run("validate-pair", "--baseline", tmp_path / "a" / "packet.json", "--candidate",
                 tmp_path / "b" / "packet.json", "--output", f"{tmp_path / 'r.json'}{ending}")
    assert result.exit_code == 2
    assert f"names no file (it ends with {ending!r}); nothing was written" in result.output
    assert list(tmp_path.iterdir()) == []
