"""The ``--format``/``--root`` options every reporting command shares, and where the
chosen format goes: stdout (only it: notes and progress go to stderr) or a file; and
:func:`echo`, the write to stdout or stderr that says which stream failed."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from flarespec.output.formats import FORMATS, describe


def format_options(choices=FORMATS, default: str | None = "text", intro: str = ""):
    """``--format`` (among ``choices``) and ``--root`` (what the formats that name files
    make them relative to), declared once for every command."""
    def decorate(command):
        command = click.option(
            "--root", type=click.Path(file_okay=False, path_type=Path), default=None,
            help="Files in github, junit, json and sarif output are relative to this "
                 "directory (default: the current directory; a file outside it gets ../ "
                 "segments, never an absolute path).")(command)
        return click.option(
            "--format", "fmt", type=click.Choice(choices), default=default,
            show_default=default is not None, help=intro + describe(choices))(command)
    return decorate


class StreamUnwritable(Exception):
    """Writing stdout or stderr failed (``> /dev/full``, a closed pipe): ``cli.main``
    says so in one line on the other stream and exits 2."""

    def __init__(self, stream: str, problem: OSError):
        super().__init__(f"cannot write to {stream}: {problem.strerror or problem}")
        self.stream = stream


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` to stdout (``err``: stderr), a failed write raised as
    :class:`StreamUnwritable` naming the stream."""
    try:
        click.echo(text, err=err, nl=nl)
    except OSError as problem:
        raise StreamUnwritable("stderr" if err else "stdout", problem) from None


def write_file(path: str | Path, text: str, option: str = "--output") -> None:
    """Write a command's output file, or say why not (``error: --output F: reason``) and
    exit 2: the one place the command line writes a file the user named."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as problem:
        echo(f"error: {option} {path}: {problem.strerror or problem}", err=True)
        sys.exit(2)


def emit(report, fmt: str, *, root: Path | None = None, verbose: bool = False,
         to: str | None = None) -> None:
    """Render ``report`` in ``fmt`` to stdout, or to the file ``to``."""
    from flarespec.output.formats import render

    text = render(report, fmt, root=root, verbose=verbose)
    if not text.endswith("\n"):
        text += "\n"
    if to is None:
        echo(text, nl=False)
    else:
        write_file(to, text)
