"""A kind is one unit (issue 26): every registered kind has every piece, and the docs'
walk-through for adding a kind works as written, with nothing else changed.

A kind is its function (a generator of failures), its argument schema declared as data
(engine/argument_schema.py: the load-time check, the check once read, the editor schema
and what the compiler compiles are derived from it), its diff classification, its
docstring, its section of docs/spec-language.md and its tests (an ``@covers`` case in
tests/engine/test_kinds.py, an argument strategy in tests/engine/test_kind_verdicts.py).
The walk-through ("Adding a kind") is extracted from the docs and run in a process of its
own (the registry and the compiled-spec cache of this one stay untouched): the kind is
registered as if written in engine/kinds.py, then the editor schema is generated, specs
using it are linted, compiled and run, and two of them diffed.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from flarespec.authoring import schema
from flarespec.engine.argument_schema import Assertion, Formula, Schema
from flarespec.engine.kinds import KINDS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "spec-language.md"
SOURCE = ROOT / "src" / "flarespec"
TESTS = Path(__file__).resolve().parent


def _compiled_parts(kind) -> bool:
    """A kind whose argument the compiler compiles (an inner assertion, a formula)."""
    return any(isinstance(node, (Assertion, Formula)) for node in kind.argument.nodes())


def _covered() -> set[str]:
    text = (TESTS / "test_kinds.py").read_text(encoding="utf-8")
    return {name for names in re.findall(r"^@covers\((.*)\)$", text, re.M)
            for name in re.findall(r'"([^"]+)"', names)}


def _strategies() -> set[str]:
    """The kinds with an argument strategy (``ARGUMENTS`` of test_kind_verdicts.py)."""
    tree = ast.parse((TESTS / "test_kind_verdicts.py").read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else \
            node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id == "ARGUMENTS":
            return {key.value for key in node.value.keys}
    raise AssertionError("test_kind_verdicts.py has no ARGUMENTS")


def test_every_kind_has_every_piece():
    """What a newcomer adds is what this lists: a missing piece names the kind and the piece."""
    shipped = json.loads(schema.shipped_path("spec").read_text(encoding="utf-8"))["definitions"]
    documented = DOCS.read_text(encoding="utf-8")
    covered, strategies = _covered(), _strategies()
    missing = []
    for name, kind in sorted(KINDS.items()):
        pieces = {
            "a generator function": inspect.isgeneratorfunction(kind.function),
            "an argument schema (engine/argument_schema.py)": isinstance(kind.argument, Schema),
            "a diff classification": callable(kind.diff),
            "a docstring": bool(kind.doc),
            "a section in docs/spec-language.md": f"\n### {name}\n" in documented,
            "its definition in the shipped spec.schema.json": shipped.get(f"kind_{name}") == {
                "description": kind.doc, "allOf": [schema.kind_argument(kind)]},
            "an @covers case in tests/engine/test_kinds.py": name in covered,
            # a generated argument needs no context and no compiling (a formula)
            "an argument strategy in tests/engine/test_kind_verdicts.py": name in strategies
            or kind.context or isinstance(kind.argument, Formula),
        }
        missing += [f"{name}: {piece}" for piece, there in pieces.items() if not there]
    assert missing == []


def test_no_kind_is_special_cased_by_name_in_the_compiler_or_the_schema():
    """The compiler, the editor schema and the kinds' words ask the argument schema, not the
    kind's name (the kinds whose arguments are compiled: ``not``, ``count``, ``formula``),
    and no check is found by its ``__qualname__``."""
    compiled = {name for name, kind in KINDS.items() if _compiled_parts(kind)}
    assert {"not", "count", "formula"} <= compiled
    for path in (SOURCE / "compiler" / "compile.py", SOURCE / "authoring" / "schema.py",
                 SOURCE / "engine" / "kinds.py"):
        text = path.read_text(encoding="utf-8")
        named = sorted({constant.value for node in ast.walk(ast.parse(text))
                        if isinstance(node, (ast.Compare, ast.Subscript))  # == "not", KINDS["not"]
                        for constant in ast.walk(node)
                        if isinstance(constant, ast.Constant) and constant.value in compiled})
        assert named == [], f"{path.name} names the kinds {named}"
        assert "__qualname__" not in text


def walk_through_code() -> str:
    """The Python blocks of the docs' "Adding a kind" section, as written."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("### Adding a kind")
    section = text[start:text.index("\n### ", start + 1)]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert blocks, "the walk-through has no python block"
    return "\n\n".join(blocks)


SPEC = """\
flarespec: 1
id: toy/bytes
title: Toy bytes
documents:
  doc: {{loader: json, entry: true, shape: doc}}
rules:
  - id: toy.name
    description: A name of at most a few bytes.
    given: "doc:$.name"
    assert: {{max_utf8_bytes: {limit}}}
  - id: toy.read
    description: The limit read from the document.
    given: "doc:$.name"
    assert: {{max_utf8_bytes: {{ref: "doc:$.limit"}}}}
  - id: toy.not
    description: Not a name of at most 9 bytes.
    given: "doc:$.name"
    assert: {{not: {{max_utf8_bytes: 9}}}}
  - id: toy.where
    description: One short name.
    given: "doc:$.names[*]"
    assert: {{count: {{equals: 1, where: {{max_utf8_bytes: 3}}}}}}
  - id: toy.when
    description: A name longer than 3 bytes is at most 4.
    when: {{given: "doc:$.name", not: {{max_utf8_bytes: 3}}}}
    given: "doc:$.name"
    assert: {{max_utf8_bytes: 4}}
shapes:
  doc:
    type: object
    members: {{name: string, limit: integer, names: {{type: array, items: string}}}}
"""

SCRIPT = r'''
import json, sys
from pathlib import Path

from click.testing import CliRunner

from flarespec.engine import kinds

exec(Path(sys.argv[1]).read_text(encoding="utf-8"), vars(kinds))  # as written in engine/kinds.py

import jsonschema

from flarespec.authoring.schema import spec_schema
from flarespec.cli import main
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve
from flarespec.engine.evaluate import evaluate

work = Path(sys.argv[2])
out = {}
run = lambda *args: CliRunner().invoke(main, [str(a) for a in args])

generated = spec_schema()
definitions = generated["definitions"]
out["definition"] = definitions.get("kind_max_utf8_bytes")
out["assertion_ref"] = definitions["assertion"]["properties"].get("max_utf8_bytes")
out["condition_ref"] = definitions["condition"]["properties"].get("max_utf8_bytes")
printed = run("spec", "schema")
out["spec_schema_command"] = json.loads(printed.output) == generated if not printed.exit_code \
    else printed.output
validator = jsonschema.Draft7Validator(generated)
rule = {"id": "a.b", "description": "d", "given": "doc:$.x"}
spec_file = lambda arg: {"flarespec": 1, "id": "a/b", "title": "t",
                         "rules": [dict(rule, **{"assert": {"max_utf8_bytes": arg}})]}
out["schema_valid"] = [not list(validator.iter_errors(spec_file(arg)))
                       for arg in (3, "${limit}", {"literal": 3}, -1, "x", 1.5)]

for name, limit in (("good", 3), ("bad", -1), ("new", 4)):
    (work / name).mkdir()
    (work / name / "bytes.yaml").write_text(sys.argv[3].format(limit=limit))
good, bad, new = (work / name / "bytes.yaml" for name in ("good", "bad", "new"))
linted = run("spec", "lint", good)
out["lint_good"] = (linted.exit_code, linted.output)
linted = run("spec", "lint", bad)
out["lint_bad"] = (linted.exit_code, linted.output)

library = SpecLibrary([work / "good"])
compiled = compile_spec(resolve(library.get("toy/bytes"), library))
(work / "doc.json").write_text(json.dumps({"name": "äbcd", "limit": -1,
                                           "names": ["ab", "äb", "abcd"]}))
report = evaluate(compiled, work / "doc.json")
out["violations"] = sorted([v.rule, v.message] for v in report.violations)

diffed = run("spec", "diff", good, new, "--format", "json")
out["diff"] = [(c["path"], c["class"], c["change"]) for spec in
               json.loads(diffed.stdout)["specs"] for c in spec["changes"]] \
    if diffed.exit_code == 0 else diffed.output
listed = run("spec", "kinds", "max_utf8_bytes")
out["kinds"] = (listed.exit_code, listed.output)
print(json.dumps(out))
'''


def test_the_walk_through_adds_a_kind_that_everything_finds(tmp_path):
    """The docs' kind, registered as written and nothing else: the editor schema has it
    once, lint checks its argument, a spec runs it as a rule, through a {ref}, under
    ``not``, as ``count``'s ``where`` and in a ``when``, and ``spec diff`` classes a change
    of it."""
    code = tmp_path / "walk_through.py"
    code.write_text(walk_through_code(), encoding="utf-8")
    (tmp_path / "work").mkdir()
    env = dict(os.environ, FLARESPEC_CACHE="0")  # a spec naming the kind is never cached
    done = subprocess.run([sys.executable, "-c", SCRIPT, code, tmp_path / "work", SPEC],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)

    definition = out["definition"]
    assert definition["description"] == "A string whose UTF-8 encoding has at most ``arg`` bytes."
    assert out["assertion_ref"] == out["condition_ref"] == \
        {"$ref": "#/definitions/kind_max_utf8_bytes"}
    assert out["spec_schema_command"] is True
    assert out["schema_valid"] == [True, True, True, False, False, False]

    assert out["lint_good"][0] == 0, out["lint_good"][1]
    code_, output = out["lint_bad"]
    assert code_ == 2 and "spec.kind-argument" in output
    assert "max_utf8_bytes: wants a whole number of bytes >= 0, got integer -1" in output

    assert out["violations"] == [  # "äbcd" is 5 bytes
        ["toy.name", "is 5 bytes, expected at most 3"],
        ["toy.not", "must not satisfy max_utf8_bytes 9"],
        ["toy.read", "cannot evaluate: max_utf8_bytes: wants a whole number of bytes >= 0, "
                     "got integer -1 (the argument as read here)"],
        ["toy.when", "is 5 bytes, expected at most 4"],
        ["toy.where", "count of matches with max_utf8_bytes 3 is 2, expected 1"],
    ]
    assert out["diff"] == [["assert.max_utf8_bytes", "loosening", "max raised"]]
    assert out["kinds"] == [0, "max_utf8_bytes\n    A string whose UTF-8 encoding has at most "
                               "``arg`` bytes.\n"]
