"""Which packets are validated and where a receipt may be written (issue 6, defects 1-3, 7).

A packet is its root directory as named on the command line plus its entry file: a
``packet.json`` symlinked into a subfolder does not make that subfolder the same packet.
A receipt is never written inside a root (named or resolved), never over anything but a
regular file, never through a symlink; an unreadable entry is evidence (a receipt), not a
crash or a usage error.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from flarespec.adapter import commands
from flarespec.adapter.commands import OutputRefused, measure, validate_pair
from flarespec.fixtures.mutations import symlink

CLI = (sys.executable, "-m", "flarespec")
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def rules_by_role(receipt) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for violation in receipt["violations"]:
        found.setdefault(violation["packet"], set()).add(violation["rule"])
    return found


def entry_into_meta(packet_json: Path) -> Path:
    """Move packet.json to meta/packet.json and leave a symlink to it (allowed: inside the
    root). Returns the moved file, the path a careless peer would name."""
    root = packet_json.parent
    moved = root / "meta" / "packet.json"
    moved.parent.mkdir()
    packet_json.rename(moved)
    symlink(root, "packet.json", "meta/packet.json")
    return moved


def run_cli(*args) -> subprocess.CompletedProcess:
    completed = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True,
                               timeout=120)
    assert "Traceback" not in completed.stderr, completed.stderr
    return completed


# ------------------------------------------------------------- defect 1: which packets


def test_peer_naming_the_entry_symlink_target_is_another_invalid_packet(packet_pair, tmp_path):
    a, _ = packet_pair
    moved = entry_into_meta(a)
    assert measure(a, a, tmp_path / "self.json").exit_code == 0  # the layout itself is valid
    outcome = measure(a, moved, tmp_path / "r.json")
    receipt = outcome.receipt
    assert outcome.exit_code == 2 and receipt["status"] == "rejected"
    assert "metrics" not in receipt and receipt["peer"]["same_as_packet"] is False
    roles = rules_by_role(receipt)
    assert "package.file.missing" in roles["peer"] and "packet" not in roles
    assert roles["pair"] == {"pair.peer-invalid"}


def test_the_same_root_named_two_ways_is_validated_once(packet_pair, tmp_path):
    a, _ = packet_pair
    alias = tmp_path / "alias"
    alias.symlink_to(a.parent, target_is_directory=True)
    outcome = measure(a, alias / "packet.json", tmp_path / "r.json")
    assert outcome.exit_code == 0 and outcome.receipt["peer"]["same_as_packet"] is True


# ------------------------------------------------------------ defect 2: output roots


def test_output_in_the_named_root_is_refused_when_the_entry_resolves_elsewhere(packet_pair):
    a, b = packet_pair
    entry_into_meta(a)
    for output in (a.parent / "receipt.json", a.parent / "meta" / "r.json"):
        with pytest.raises(OutputRefused, match="inside the packet root"):
            measure(a, b, output)
        with pytest.raises(OutputRefused, match="inside the packet root"):
            validate_pair(b, a, output)
        assert not output.exists()


def test_output_beside_an_entry_that_resolves_outside_its_root_is_refused(packet_pair,
                                                                          tmp_path):
    a, b = packet_pair
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (a.parent / "packet.json").rename(outside / "packet.json")
    symlink(a.parent, "packet.json", str(outside / "packet.json"))
    with pytest.raises(OutputRefused):
        measure(b, a, outside / "r.json")
    assert sorted(p.name for p in outside.iterdir()) == ["packet.json"]


def test_output_in_the_resolved_root_of_a_symlinked_root_is_refused(packet_pair, tmp_path):
    a, b = packet_pair
    alias = tmp_path / "alias"
    alias.symlink_to(a.parent, target_is_directory=True)
    with pytest.raises(OutputRefused):
        measure(alias / "packet.json", b, a.parent / "r.json")
    with pytest.raises(OutputRefused):  # textually outside, really inside
        measure(a, b, tmp_path / "alias" / "r.json")
    assert not (a.parent / "r.json").exists()


# ------------------------------------------------------- defect 3: what the output is


def test_a_fifo_output_is_refused_and_stays_a_fifo(packet_pair, tmp_path):
    a, b = packet_pair
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputRefused, match="not a regular file"):
        measure(a, b, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "packets"]


def test_a_socket_or_directory_output_is_refused(packet_pair, tmp_path):
    a, b = packet_pair
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock"))
        with pytest.raises(OutputRefused, match="socket"):
            measure(a, b, tmp_path / "sock")
    finally:
        server.close()
    assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)
    (tmp_path / "dir").mkdir()
    with pytest.raises(OutputRefused, match="directory"):
        validate_pair(a, b, tmp_path / "dir")
    assert list((tmp_path / "dir").iterdir()) == []


@pytest.mark.skipif(not AS_ROOT, reason="creating a device node needs root")
def test_a_device_output_is_refused_and_stays_a_device(packet_pair, tmp_path):
    a, b = packet_pair
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a second /dev/null
    completed = run_cli("measure", "--packet", a, "--peer", b, "--output", device)
    assert completed.returncode == 2 and "not a regular file" in completed.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_dev_null_is_never_replaced(packet_pair, monkeypatch):
    """Refused before any write: the writer is replaced so that even a regression of the
    check cannot damage this machine's /dev/null."""
    a, b = packet_pair
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")

    def must_not_write(target, receipt):
        raise AssertionError(f"a receipt was about to be written to {target}")
    monkeypatch.setattr(commands.receipts, "write_atomically", must_not_write)
    with pytest.raises(OutputRefused, match="character device"):
        measure(a, b, "/dev/null")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


@pytest.mark.parametrize("target", ["elsewhere.json", "missing.json", "loop"],
                         ids=["to-a-file", "dangling", "loop"])
def test_a_symlink_at_the_output_path_is_refused(packet_pair, tmp_path, target):
    a, b = packet_pair
    (tmp_path / "elsewhere.json").write_text("{}")
    link = tmp_path / "loop" if target == "loop" else tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(OutputRefused, match="symbolic link"):
        measure(a, b, link)
    assert link.is_symlink() and os.readlink(link) == target
    assert (tmp_path / "elsewhere.json").read_text() == "{}"
    assert not (tmp_path / "missing.json").exists()


def test_a_symlink_loop_output_is_refused_by_the_cli_without_a_traceback(packet_pair,
                                                                        tmp_path):
    a, b = packet_pair
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    for output in (loop, loop / "r.json"):
        completed = run_cli("measure", "--packet", a, "--peer", b, "--output", output)
        assert completed.returncode == 2 and "refused" in completed.stderr
    assert loop.is_symlink()


# -------------------------------------------------- defect 7: an unreadable entry file


def _break_entry(packet_json: Path, how: str) -> None:
    packet_json.unlink()
    if how == "loop":
        packet_json.symlink_to("packet.json")
    elif how == "directory":
        packet_json.mkdir()
    elif how == "dangling":
        packet_json.symlink_to("nowhere.json")


@pytest.mark.parametrize("how, rule", [("loop", "packet.json.unreadable"),
                                       ("directory", "packet.json.not-regular-file"),
                                       ("dangling", "packet.json.missing")])
def test_a_broken_entry_file_is_evidence_with_a_receipt(packet_pair, tmp_path, how, rule):
    a, b = packet_pair
    _break_entry(a, how)
    output = tmp_path / "r.json"
    completed = run_cli("measure", "--packet", a, "--peer", b, "--output", output)
    assert completed.returncode == 2
    receipt = json.loads(output.read_text())
    assert receipt["status"] == "rejected" and "metrics" not in receipt
    (violation,) = [v for v in receipt["violations"] if v["packet"] == "packet"]
    assert violation["rule"] == rule and violation["file"] == "packet.json"
    assert receipt["packet"]["entry"] == str(a)


@pytest.mark.skipif(AS_ROOT, reason="permissions do not apply to root")
def test_a_root_without_search_permission_is_evidence_with_a_receipt(packet_pair, tmp_path):
    a, b = packet_pair
    a.parent.chmod(0o600)
    try:
        outcome = measure(a, b, tmp_path / "r.json")
    finally:
        a.parent.chmod(0o755)
    assert outcome.exit_code == 2
    assert rules_by_role(outcome.receipt)["packet"] == {"packet.json.unreadable"}


# ----------------------------------------------------------------- receipts' file mode


def test_a_receipt_honours_the_umask(packet_pair, tmp_path):
    a, b = packet_pair
    previous = os.umask(0o022)
    try:
        measure(a, b, tmp_path / "r.json")
        os.umask(0o077)
        measure(a, b, tmp_path / "private.json")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "r.json").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "private.json").st_mode) == 0o600


def _in_private_mount_namespace(bind: tuple[Path, Path], *command) -> subprocess.CompletedProcess:
    """Run ``command`` with ``bind[0]`` bind-mounted on ``bind[1]``, in a mount namespace
    of its own (the mount vanishes with the process; nothing outside sees it)."""
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           script, "sh", *map(str, bind), *map(str, command)],
                          capture_output=True, text=True, timeout=120)


def test_output_in_another_view_of_a_root_is_refused(packet_pair, tmp_path):
    """A bind mount shows a root under a path that neither names nor resolves into it;
    the output's directories are compared with the roots by device and inode too."""
    a, b = packet_pair
    view = tmp_path / "view"
    view.mkdir()
    try:
        probe = _in_private_mount_namespace((a.parent, view), "true")
    except (FileNotFoundError, subprocess.SubprocessError):
        pytest.skip("no unshare")
    if probe.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {probe.stderr.strip()}")
    completed = _in_private_mount_namespace((a.parent, view), *CLI, "measure", "--packet", a,
                                            "--peer", b, "--output", view / "r.json")
    assert completed.returncode == 2 and "inside the packet root" in completed.stderr
    assert not (a.parent / "r.json").exists()
