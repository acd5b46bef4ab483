"""Running the command line in-process for the CLI tests."""

from __future__ import annotations

from click.testing import CliRunner

from flarespec.cli import main


def run(*args):
    """``flarespec ARGS`` through click's runner; never a traceback, never an exception but
    the exit."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result
