"""Issue 6, defect 13: hostile SPEC files through the command line.

A spec is operator input, but a bad one must still end quickly with exit 2 and a message
naming ``file:line:column`` and the code, never a hang, a traceback or a crash when the
receipt is written. Every case runs through ``spec lint``, ``spec diff`` and
``measure --spec``: the cases that used to hang or exhaust memory (alias bomb, FIFO,
/dev/zero, hostile neighbours) as bounded subprocesses (``hostile.run_bounded``: killed at
40 s, RLIMIT_AS 1.5 GiB) with the time and memory asserted, the others in-process with
click's CliRunner. The loader's own tests are in tests/engine/test_spec_loading.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bounded_call import finishes_within
from click.testing import CliRunner
from hostile import run_bounded

from flarespec.cli import main
from flarespec.fixtures.writers import write_packet
from flarespec.compiler.load import MAX_SPEC_BYTES
from flarespec.compiler.yamlmarks import MAX_ALIASES

BUNDLED = "flare/bce032c0"
SECONDS_AT_MOST = 5.0       # the brief's bound for a hostile spec, far above the ~0.2 s taken
RSS_AT_MOST = 300 << 20     # likewise, against ~60 MB (the alias bomb took 6 GB)
SPEC_INVALID = "spec.invalid"

# Lines 1-6; each case's own lines start at line 7.
HEAD = """\
flarespec: 1
id: hostile/case
title: A hostile spec
documents:
  doc: {loader: json, entry: true}
constants:
"""


def alias_bomb() -> str:
    """Nine levels of ten aliases: 90 uses, 10^10 values once expanded."""
    levels = [f"  l0: &l0 [{', '.join(['lol'] * 10)}]\n"]
    levels += [f"  l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]\n" for n in range(1, 10)]
    return "".join(levels)


# name -> (text after HEAD, or a builder of the path's non-regular file; code; line; column)
TEXT_CASES = {
    "alias-bomb": (alias_bomb(), "spec.yaml-alias", 11, 12),
    "aliases-beyond-budget": ("  a: &a 1\n  l: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n",
                              "spec.yaml-alias", 8, 7 + 4 * MAX_ALIASES),
    "10k-deep": ("  d: " + "[" * 10_000 + "]" * 10_000 + "\n", "spec.yaml-depth", 7, 68),
    "5000-digit-integer": ("  n: " + "9" * 5000 + "\n", "spec.yaml-type", 7, 6),
    "integer-key": ("  200: ok\n", "spec.yaml-key", 7, 3),
    "list-key": ("  ? [a]\n  : ok\n", "spec.yaml-key", 7, 5),
    "date": ("  when: 2026-01-01\n", "spec.yaml-type", 7, 9),
    "python-tag": ("  a: !!python/object/apply:os.system ['true']\n", "spec.yaml-type", 7, 6),
    "too-large": ("#" * MAX_SPEC_BYTES + "\n", "spec.too-large", 1, 1),
}
FILE_CASES = {
    "fifo": (os.mkfifo, "spec.not-a-file"),
    "dev-zero": (lambda path: path.symlink_to("/dev/zero"), "spec.not-a-file"),
}
BOUNDED = ("alias-bomb", "fifo", "dev-zero")  # hung or exhausted memory before the fix


def hostile_spec(name: str, directory: Path) -> tuple[Path, str, str]:
    """The hostile file, the expected ``file:line:column:`` prefix of its issue, its code."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.yaml"
    if name in FILE_CASES:
        make, code = FILE_CASES[name]
        make(path)
        return path, f"{path.resolve()}:1:1:", code
    text, code, line, column = TEXT_CASES[name]
    path.write_text(HEAD + text)
    return path, f"{path.resolve()}:{line}:{column}:", code


@pytest.fixture(scope="module")
def packet(tmp_path_factory, flare_spec) -> Path:
    return write_packet(tmp_path_factory.mktemp("packet") / "p", flare_spec)


def commands(spec: Path, packet: Path, output: Path) -> dict[str, list[str]]:
    return {"lint": ["spec", "lint", str(spec)],
            "diff": ["spec", "diff", BUNDLED, str(spec)],
            "measure": ["measure", "--packet", str(packet), "--peer", str(packet),
                        "--output", str(output), "--spec", str(spec), "--quiet"]}


def check_rejection(command: str, exit_code: int, output: str, receipt: Path,
                    where: str, code: str) -> None:
    assert exit_code == 2, output
    assert "Traceback" not in output
    if command == "measure":
        violations = json.loads(receipt.read_text())["violations"]
        assert {v["rule"] for v in violations} == {SPEC_INVALID}, violations
        [message] = {v["message"] for v in violations}
        assert message.startswith(f"{where} ") and message.endswith(f"[{code}]"), message
    else:
        [line] = [line for line in output.splitlines() if line.startswith(where)]
        assert line.endswith(f"[{code}]"), output


@pytest.mark.parametrize("command", ["lint", "diff", "measure"])
@pytest.mark.parametrize("name", [n for n in [*TEXT_CASES, *FILE_CASES] if n not in BOUNDED])
def test_hostile_spec_is_rejected_with_its_location(name, command, packet, tmp_path):
    spec, where, code = hostile_spec(name, tmp_path / "specs")
    receipt = tmp_path / "receipt.json"
    result = CliRunner().invoke(main, commands(spec, packet, receipt)[command])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    check_rejection(command, result.exit_code, result.output, receipt, where, code)


@pytest.mark.parametrize("command", ["lint", "diff", "measure"])
@pytest.mark.parametrize("name", BOUNDED)
def test_spec_that_hung_is_rejected_in_bounded_time_and_memory(name, command, packet,
                                                               tmp_path):
    spec, where, code = hostile_spec(name, tmp_path / "specs")
    receipt = tmp_path / "receipt.json"
    run = run_bounded(commands(spec, packet, receipt)[command])
    assert run.exit_code is not None, f"killed after {run.wall_s:.0f} s"
    assert run.wall_s < SECONDS_AT_MOST and run.max_rss_bytes < RSS_AT_MOST, run
    check_rejection(command, run.exit_code, run.stdout + run.stderr, receipt, where, code)


def test_a_directory_given_as_a_spec_is_refused(tmp_path):
    result = CliRunner().invoke(main, ["spec", "lint", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output == ("spec lint: 1 spec, 1 error, 0 warnings\n"
                             f"{tmp_path}:1:1: spec is a directory, not a regular file "
                             f"[spec.not-a-file]\n")


@pytest.mark.parametrize("name", ["date", "fifo"])
@pytest.mark.parametrize("command", ["write", "check"])
def test_fixture_commands_reject_a_hostile_spec(name, command, tmp_path):
    spec, where, code = hostile_spec(name, tmp_path / "specs")
    args = {"write": ["fixture", "write", str(tmp_path / "out"), "--spec", str(spec)],
            "check": ["fixture", "check", str(spec), "-k", "no-such-case"]}[command]
    result = finishes_within(5, CliRunner().invoke, main, args)
    assert isinstance(result.exception, SystemExit), result.exc_info
    assert result.exit_code == 2
    assert f"\n{where} " in "\n" + result.output and result.output.endswith(f"[{code}]\n")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------ hostile neighbours

CHILD = f"""\
flarespec: 1
id: hostile/child
title: A valid child beside hostile files
extends: {BUNDLED}
"""


def test_hostile_neighbours_do_not_touch_a_valid_spec(packet, tmp_path):
    """Every *.yaml beside a spec used to be parsed: a FIFO hung lint, an alias bomb ate
    memory, a broken file failed it. Only a parent named after its id is read now."""
    directory = tmp_path / "specs"
    hostile_spec("alias-bomb", directory)
    hostile_spec("fifo", directory)
    hostile_spec("dev-zero", directory)
    hostile_spec("too-large", directory)
    hostile_spec("integer-key", directory)
    child = directory / "child.yaml"
    child.write_text(CHILD)
    found = {}
    for command, args in commands(child, packet, tmp_path / "receipt.json").items():
        run = run_bounded(args)
        found[command] = run.exit_code
        assert run.exit_code is not None, f"{command} killed after {run.wall_s:.0f} s"
        assert run.wall_s < SECONDS_AT_MOST and run.max_rss_bytes < RSS_AT_MOST, run
        assert "Traceback" not in run.stderr
    assert found == {"lint": 0, "diff": 0, "measure": 0}
    assert json.loads((tmp_path / "receipt.json").read_text())["status"] == "pass"
