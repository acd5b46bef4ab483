"""Issue 23, output: what a hostile packet made flarespec print, end to end.

* A manifest key holding ``\\n::error file=README.md,line=1::forged annotation`` put GitHub
  workflow commands at the start of lines on stdout (``--format text|markdown|junit``)
  and in the stderr summary; OSC/BEL bytes passed raw in every format, github included.
  Now every format's stdout and the summary are inert (tests/inert_output.py), the json
  and sarif output keep the exact key.
* A key holding an escaped lone surrogate (``"x\\ud800y"``: valid JSON) killed ``measure
  --format text|json|markdown|sarif``, ``report --format json`` and ``flarespec path``
  with ``UnicodeEncodeError`` after the receipt was written: now shown as ``\\ud800``.
* A 20 KB key printed whole on one line of the summary: human output cuts it.
* A failed write to stdout or stderr (``> /dev/full``) was a traceback and exit 1: now
  one line on the other stream, exit 2, the receipt written stays valid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from inert_output import check_inert

from flarespec.adapter.receipt_report import read_receipt
from flarespec.cli import main
from flarespec.output.formats import FORMATS
from flarespec.output.visible import SHOWN_LIMIT

CLI = (sys.executable, "-m", "flarespec")
FORGED = "\n::error file=README.md,line=1::forged annotation\n::add-mask::secret.json"
KEYS = {"forged": FORGED, "osc": "\x1b]0;pwned\x07", "legacy": "x ##[add-mask]secret ##vso[x]",
        "long": "d/" * 10_000}
SURROGATE = "x\ud800y"
EXTRA_ENTRY = "packet.files.extra-entry"  # the rule a manifest key naming no file breaks


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def with_keys(pair: tuple[Path, Path], keys) -> tuple[Path, Path]:
    """The pair, its first packet's manifest ``files`` given ``keys`` (JSON-escaped: a lone
    surrogate is written ``\\ud800``, as valid JSON)."""
    packet, peer = pair
    document = json.loads(packet.read_text())
    document["files"].update({key: "0" * 64 for key in keys})
    packet.write_text(json.dumps(document))
    return packet, peer


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, flare_spec):
    from flarespec.fixtures.writers import write_pair

    return with_keys(write_pair(tmp_path_factory.mktemp("hostile") / "p", flare_spec),
                     KEYS.values())


@pytest.fixture(scope="module")
def surrogate(tmp_path_factory, flare_spec):
    from flarespec.fixtures.writers import write_pair

    return with_keys(write_pair(tmp_path_factory.mktemp("surrogate") / "p", flare_spec),
                     [SURROGATE])


def rules_of(receipt: Path) -> set[str]:
    return {v["rule"] for v in read_receipt(receipt).violations}


@pytest.mark.parametrize("fmt", [None, *FORMATS])
def test_packet_text_is_inert_on_stdout_and_in_the_summary(hostile, tmp_path, fmt):
    packet, peer = hostile
    receipt = tmp_path / "r.json"
    result = invoke("measure", "--packet", packet, "--peer", peer, "--output", receipt,
                    *(["--format", fmt] if fmt else []))
    assert result.exit_code == 2, result.output
    assert rules_of(receipt) == {EXTRA_ENTRY}
    check_inert(fmt or "text", result.stdout)
    check_inert("text", result.stderr)
    shown = result.stdout if fmt else result.stderr  # the summary when no format is asked
    if fmt == "json":  # the exact strings, as the receipt holds them
        assert json.loads(shown)["receipt"] == json.loads(receipt.read_text())
    elif fmt == "sarif":
        json.loads(shown)
    else:
        assert "\\n::error file=README.md" in shown.replace("\\\\", "\\")
        assert max(map(len, shown.split("\n"))) < 12 * SHOWN_LIMIT  # the 20 KB key is cut


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif"])
def test_a_lone_surrogate_in_a_key_is_printed_escaped(surrogate, tmp_path, fmt):
    packet, peer = surrogate
    receipt = tmp_path / "r.json"
    result = invoke("measure", "--packet", packet, "--peer", peer, "--output", receipt,
                    "--format", fmt)
    assert result.exit_code == 2, result.output
    assert "\\ud800" in result.stdout
    check_inert(fmt, result.stdout)
    assert rules_of(receipt) == {EXTRA_ENTRY}
    again = invoke("report", receipt, "--format", "json")
    assert again.exit_code == 1, again.output
    assert SURROGATE in json.dumps(json.loads(again.stdout)["receipt"], ensure_ascii=False)


def test_flarespec_path_prints_a_lone_surrogate_as_its_json_escape(surrogate):
    packet, _ = surrogate
    result = invoke("path", "$.files", packet)
    assert result.exit_code == 0, result.output
    assert SURROGATE in json.loads(result.stdout)[0]
    assert '"x\\ud800y"' in result.stdout


# ----------------------------------------------------------------- a stream that fails

FULL = "/dev/full"
needs_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full")


BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as by default


def run_into_full(*args, stream: str, cli=CLI) -> subprocess.CompletedProcess:
    """``flarespec ARGS`` with ``stream`` (stdout or stderr) writing to /dev/full."""
    with open(FULL, "w") as full:
        given = {"stdout": full, "stderr": subprocess.PIPE} if stream == "stdout" else \
            {"stdout": subprocess.PIPE, "stderr": full}
        return subprocess.run([*cli, *map(str, args)], text=True, timeout=120, env=BUFFERED,
                              **given)


def said_in_one_line(result, stream: str) -> None:
    other = result.stderr if stream == "stdout" else result.stdout
    assert result.returncode == 2, other
    assert other == f"flarespec: cannot write to {stream}: No space left on device\n", other


@needs_full
def test_measure_with_stdout_full_says_so_and_its_receipt_stays_valid(packet_pair, tmp_path):
    packet, peer = packet_pair
    receipt = tmp_path / "r.json"
    result = run_into_full("measure", "--packet", packet, "--peer", peer, "--output", receipt,
                           "--format", "json", stream="stdout")
    said_in_one_line(result, "stdout")
    assert read_receipt(receipt).passed  # written before the report, whole


@needs_full
def test_measure_with_stderr_full_says_so_on_stdout(packet_pair, tmp_path):
    packet, peer = packet_pair
    receipt = tmp_path / "r.json"
    result = run_into_full("measure", "--packet", packet, "--peer", peer, "--output", receipt,
                           stream="stderr")
    said_in_one_line(result, "stderr")
    assert read_receipt(receipt).passed


@needs_full
@pytest.mark.parametrize("command", ["report", "path", "spec lint"])
def test_other_commands_with_stdout_full_say_so(packet_pair, tmp_path, command):
    packet, peer = packet_pair
    args = {"report": lambda: ["report", receipt],
            "path": lambda: ["path", "$.files", packet],
            "spec lint": lambda: ["spec", "lint", "--format", "json", "flare/bce032c0"]}
    receipt = tmp_path / "r.json"
    if command == "report":
        assert invoke("measure", "--packet", packet, "--peer", peer, "--output",
                      receipt).exit_code == 0
    said_in_one_line(run_into_full(*args[command](), stream="stdout"), "stdout")


@needs_full
def test_output_still_buffered_at_the_end_is_flushed_inside_the_guard():
    """A command whose write is still buffered when it returns: the flush that would fail
    at the interpreter's exit ("Exception ignored", exit 120) is said, exit 2."""
    script = ("import sys, click\nfrom flarespec.cli import main\n"
              "main.add_command(click.Command('buffered', callback=lambda: "
              "sys.stdout.write('x' * 100)))\nmain(['buffered'])\n")
    said_in_one_line(run_into_full(stream="stdout", cli=(sys.executable, "-c", script)),
                     "stdout")
