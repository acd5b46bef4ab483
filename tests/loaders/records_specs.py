"""Toy specs over one records document (jsonl, csv or a plug-in's), evaluated by the engine,
for the loader tests: the document is the entry, its rows an iteration."""

from __future__ import annotations

import textwrap
from pathlib import Path

from flarespec.engine.evaluate import evaluate
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve


def records_spec(tmp_path: Path, loader: str, shape: str, rules: str = ""):
    """A spec whose entry is a ``loader`` document of shape ``shape`` (YAML flow text),
    with an iteration ``row`` over its elements and the ``rules`` given (YAML text)."""
    directory = tmp_path / "spec"
    directory.mkdir(parents=True, exist_ok=True)
    body = "rules:\n" + textwrap.indent(textwrap.dedent(rules), "  ") if rules else "rules: []\n"
    (directory / "records.yaml").write_text(textwrap.dedent(f"""\
        flarespec: 1
        id: toy/records
        title: Toy records
        shapes:
          rows: {shape}
        documents:
          rows: {{loader: {loader}, entry: true, rule: toy.rows, shape: rows}}
        iterations:
          row: {{over: "rows:$[*]"}}
        """) + body)
    library = SpecLibrary([directory])
    return compile_spec(resolve(library.get("toy/records"), library))


def run(tmp_path: Path, spec, name: str, data: bytes):
    """The report of ``spec`` over one file ``name`` holding ``data``."""
    root = tmp_path / "packet"
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_bytes(data)
    return evaluate(spec, root / name)


def found(report) -> list[tuple]:
    """(rule, file, location, line) of every violation."""
    return [(v.rule, v.file, v.location, v.line) for v in report.violations]
