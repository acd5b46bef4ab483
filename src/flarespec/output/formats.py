"""The formats by name, and the one call every command makes: ``render(report, fmt)``.

Each format is one module of this room with a ``render(report, **options)``; a command
offers the formats that make sense for it (``choices``) and passes the options it has
(``root`` for the formats that name files, ``verbose`` for the human ones). stdout carries only the chosen format.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names and help are read by every command's --help and start-up:
    from flarespec.output.model import Report  # the model is imported when rendering

FORMATS = ("text", "json", "github", "junit", "markdown", "sarif")
MACHINE = ("json", "junit", "sarif")  # read by programs: nothing else is ever mixed in

HELP = {"text": "for people (the default)",
        "json": "the report as one JSON object (docs/output.md)",
        "github": "GitHub Actions annotations (workflow commands at file and line)",
        "junit": "JUnit XML (CI test reports)",
        "markdown": "a PR comment or job summary",
        "sarif": "SARIF 2.1.0 (GitHub code scanning; files relative to --root)"}


def describe(choices=FORMATS) -> str:
    """``text: for people; json: …`` for a command's ``--format`` help."""
    return "; ".join(f"{name}: {HELP[name]}" for name in choices) + "."


def render(report: "Report", fmt: str, *, root: Path | str | None = None,
           verbose: bool = False) -> str:
    import importlib
    import inspect

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    module = importlib.import_module(f"flarespec.output.{fmt}")
    given = {"root": Path(root) if root is not None else None, "verbose": verbose}
    accepted = inspect.signature(module.render).parameters
    return module.render(report, **{k: v for k, v in given.items() if k in accepted})
