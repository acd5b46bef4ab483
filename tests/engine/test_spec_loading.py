"""Spec loading errors: every problem names file:line:column (1-based) and a code."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from bounded_call import finishes_within

from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import MAX_SPEC_BYTES, SpecLibrary, read_spec_file
from flarespec.compiler.resolve import resolve
from flarespec.compiler.yamlmarks import INT_MAX, INT_MIN, MAX_ALIASES, MAX_DEPTH, MAX_NODES

TOY = Path(__file__).parent / "toy"

# Lines 1-5 of every case; the cases' own lines start at 6.
HEAD = """\
flarespec: 1
id: toy/case
title: Toy case
documents:
  doc: {loader: json, entry: true}
"""
RULE = """\
rules:
  - id: toy.a
    description: A rule.
"""  # lines 6-8; a rule's next key is on line 9, its "- id" item mark is 7:5


def body(text: str) -> str:
    """Rule keys written indented anywhere, re-indented under RULE's list item."""
    return textwrap.indent(textwrap.dedent(text), "    ")


def issues(tmp_path, text: str, *, head: str = HEAD):
    """(line, column, code, message) of every issue, reading, resolving and compiling."""
    path = tmp_path / "case.yaml"
    path.write_text(head + textwrap.dedent(text))
    with pytest.raises(SpecInvalid) as caught:
        library = SpecLibrary([tmp_path])
        compile_spec(resolve(library.get("toy/case"), library))
    found = []
    for issue in caught.value.issues:
        assert issue.mark.file == str(path)
        assert str(issue).startswith(f"{path}:{issue.mark.line}:{issue.mark.column}: ")
        assert str(issue).endswith(f" [{issue.code}]")
        found.append((issue.mark.line, issue.mark.column, issue.code, issue.message))
    return found


def compiles(tmp_path, text: str, *, head: str = HEAD):
    (tmp_path / "case.yaml").write_text(head + textwrap.dedent(text))
    library = SpecLibrary([tmp_path])
    return compile_spec(resolve(library.get("toy/case"), library))


def test_the_toy_spec_compiles():
    library = SpecLibrary([TOY])
    spec = compile_spec(resolve(library.get("toy/base"), library))
    assert [rule.id for rule in spec.rules] == [
        "toy.index.schema", "toy.index.shelves", "toy.item.colour", "toy.item.count",
        "toy.shelf.total"]


# --------------------------------------------------------------------------- shape (Cerberus)

def test_unknown_top_level_key(tmp_path):
    assert issues(tmp_path, "rules: []\nbogus: 1\n") == [(7, 1, "spec.shape", "unknown key 'bogus'")]


def test_unknown_rule_key(tmp_path):
    assert issues(tmp_path, RULE + body("""\
            given: "doc:$.a"
            asert: {present: true}
    """)) == [(10, 5, "spec.shape", "unknown key 'asert'"),
             (7, 5, "spec.shape", "missing required key 'assert'"),
             (7, 5, "spec.shape", "missing required key 'hook'")]


@pytest.mark.parametrize("text, expected", [
    ("rules:\n  - id: toy.a\n    given: doc:$.a\n    assert: {present: true}\n",
     [(7, 5, "spec.shape", "missing required key 'description'")]),
    ("rules:\n  - id: Toy\n    description: d\n    given: doc:$.a\n    assert: {present: true}\n",
     [(7, 5, "spec.shape",
       "'id': 'Toy' does not match ^[a-z0-9][a-z0-9_-]*(\\.[a-z0-9][a-z0-9_-]*)+$")]),
    (RULE + "    given: doc:$.a\n    assert: {present: true}\n    hook: toy.check\n",
     [(10, 5, "spec.shape", "'assert' cannot be combined with 'hook'"),
      (11, 5, "spec.shape", "'hook' cannot be combined with 'assert'")]),
    (RULE + "    given: doc:$.a\n    assert: {present: true, absent: true}\n",
     [(10, 5, "spec.shape",
       "'assert': maxlength 1 violated (value {'present': True, 'absent': True})")]),
    (RULE + "    given: doc:$.a\n    severity: fatal\n    assert: {present: true}\n",
     [(10, 5, "spec.shape", "'severity': 'fatal' is not one of ['error', 'warning']")]),
    (RULE + "    given: doc:$.a\n    optional: yes please\n    assert: {present: true}\n",
     [(10, 5, "spec.shape", "'optional' must be of type boolean")]),
])
def test_rule_shape_errors(tmp_path, text, expected):
    assert issues(tmp_path, text) == expected


def test_unsupported_format_version(tmp_path):
    assert issues(tmp_path, "", head=HEAD.replace("flarespec: 1", "flarespec: 2")) == [
        (1, 1, "spec.shape", "'flarespec': 2 is not one of [1]")]


def test_a_spec_is_a_mapping(tmp_path):
    (tmp_path / "case.yaml").write_text("- a\n- b\n")
    with pytest.raises(SpecInvalid) as caught:
        read_spec_file(tmp_path / "case.yaml")
    [issue] = caught.value.issues
    assert (issue.mark.line, issue.mark.column, issue.code, issue.message) == (
        1, 1, "spec.shape", "a spec is a YAML mapping")


def test_spec_must_be_utf8(tmp_path):
    (tmp_path / "case.yaml").write_bytes(HEAD.encode() + b"description: caf\xe9\n")
    with pytest.raises(SpecInvalid) as caught:
        read_spec_file(tmp_path / "case.yaml")
    assert [(i.code, i.message) for i in caught.value.issues] == [("spec.yaml",
                                                                   "spec is not UTF-8")]


# --------------------------------------------------------------------------- YAML

def test_yaml_syntax_error(tmp_path):
    assert issues(tmp_path, "rules: [\n  - id: x\n") == [
        (7, 3, "spec.yaml", "YAML syntax: expected the node content, but found '-'")]


def test_duplicate_yaml_key(tmp_path):
    assert issues(tmp_path, "constants:\n  a: 1\n  b: 2\n  a: 3\n") == [
        (9, 3, "spec.yaml", "duplicate key 'a'")]


def test_duplicate_yaml_key_in_a_flow_mapping(tmp_path):
    assert issues(tmp_path, RULE + "    given: doc:$.a\n    assert: {equals: 1, equals: 2}\n") == [
        (10, 25, "spec.yaml", "duplicate key 'equals'")]


def test_merge_keys_may_be_overridden_but_not_repeated(tmp_path):
    spec = compiles(tmp_path, "constants:\n  base: &b {x: 1, y: 2}\n  c: {<<: *b, x: 3}\n")
    assert spec.constants == {"base": {"x": 1, "y": 2}, "c": {"x": 3, "y": 2}}
    (tmp_path / "case.yaml").unlink()
    assert issues(tmp_path, "constants:\n  base: &b {x: 1}\n  c: {<<: *b, x: 3, x: 4}\n") == [
        (8, 21, "spec.yaml", "duplicate key 'x'")]


@pytest.mark.parametrize("tag", ["!!python/object:os.system {}", "!!python/name:os.system ''",
                                 "!!python/object/apply:os.system ['true']"])
def test_python_tags_are_rejected(tmp_path, tag):
    [(line, column, code, message)] = issues(tmp_path, f"constants:\n  a: {tag}\n")
    assert (line, column, code) == (7, 6, "spec.yaml-type")
    assert message.startswith("the tag !!python/")


def test_yaml_scalars_load_as_json_values(tmp_path):
    spec = compiles(tmp_path, "constants:\n  s: !!str 12\n  yes_word: yes\n"
                              "  eq: =\n  hex: 0x10\n  f: 1.5\n  n: ~\n"
                              f"  low: {INT_MIN}\n  high: {INT_MAX}\n")
    assert spec.constants == {"s": "12", "yes_word": True,  # YAML 1.1, as safe_load
                              "eq": "=", "hex": 16, "f": 1.5, "n": None,
                              "low": -2 ** 63, "high": 2 ** 64 - 1}


@pytest.mark.parametrize("value, column, message", [
    ("2024-01-02", 6, 'is read as a date; a spec holds only strings, numbers, booleans, null, '
                      'lists and mappings: quote it ("2024-01-02")'),
    ("2024-01-02 10:00:00", 6, "is read as a date"),
    ("!!timestamp '2024-01-02'", 6, "the tag !!timestamp is not allowed"),
    ("!!binary aGVsbG8=", 6, "the tag !!binary is not allowed"),
    ("!!set {a, b}", 6, "the tag !!set is not allowed"),
    ("!!omap [a: 1]", 6, "the tag !!omap is not allowed"),
    ("!!int '12'", 6, "the tag !!int is not allowed"),
    ("!!int 'twelve'", 6, "the tag !!int is not allowed"),
    ("!!bool 'maybe'", 6, "the tag !!bool is not allowed"),
    ("!local x", 6, "the tag !local is not allowed"),
    ("[1, .inf]", 10, ".inf is not a finite number (JSON has no infinity or NaN)"),
    (".nan", 6, ".nan is not a finite number"),
    ("-.inf", 6, "-.inf is not a finite number"),
    ("1.0e+999", 6, "1.0e+999 is not a finite number"),
    ("9" * 5000, 6, "an integer of 5000 characters; spec integers fit in 64 bits"),
    (str(2 ** 64), 6, f"{2 ** 64} does not fit in 64 bits ({-2 ** 63} to {2 ** 64 - 1})"),
    (str(-2 ** 63 - 1), 6, f"{-2 ** 63 - 1} does not fit in 64 bits"),
    ('"\\ud800"', 6, "a string holds an unpaired surrogate escape"),
])
def test_values_json_cannot_hold_are_refused_where_they_stand(tmp_path, value, column, message):
    [(line, found_column, code, found)] = issues(tmp_path, f"constants:\n  a: {value}\n")
    assert (line, found_column, code) == (7, column, "spec.yaml-type")
    assert message in found


@pytest.mark.parametrize("key, column, message", [
    ("200: ok", 3, 'the key 200 is read as an integer; spec keys are strings: quote it ("200")'),
    ("on: ok", 3, 'the key on is read as a boolean; spec keys are strings: quote it ("on")'),
    ("1.5: ok", 3, 'the key 1.5 is read as a number; spec keys are strings: quote it ("1.5")'),
    ("~: ok", 3, 'the key ~ is read as null; spec keys are strings: quote it ("~")'),
    ("? \n  : ok", 4, "an empty key (null); spec keys are strings"),
    ("? [a]\n  : ok", 5, "a list cannot be a key; spec keys are strings"),
    ("{[a]: ok}", 4, "a list cannot be a key; spec keys are strings"),
    ("? {a: 1}\n  : ok", 5, "a mapping cannot be a key; spec keys are strings"),
])
def test_keys_must_be_strings(tmp_path, key, column, message):
    [(line, found_column, code, found)] = issues(tmp_path, f"constants:\n  {key}\n")
    assert (line, found_column, code, found) == (7, column, "spec.yaml-key", message)


# --------------------------------------------------------------------------- YAML bounds

def test_aliases_within_the_budget_load(tmp_path):
    aliases = ", ".join(["*a"] * MAX_ALIASES)
    spec = compiles(tmp_path, f"constants:\n  a: &a {{x: [1, 2]}}\n  l: [{aliases}]\n")
    assert spec.constants["l"] == [{"x": [1, 2]}] * MAX_ALIASES


def test_one_alias_beyond_the_budget_is_refused_at_that_alias(tmp_path):
    aliases = ", ".join(["*a"] * (MAX_ALIASES + 1))
    assert issues(tmp_path, f"constants:\n  a: &a 1\n  l: [{aliases}]\n") == [
        (8, 7 + 4 * MAX_ALIASES, "spec.yaml-alias",
         f"more than {MAX_ALIASES} aliases (*name) in one spec file")]


def test_an_alias_bomb_is_refused_at_the_alias_that_overflows(tmp_path):
    """Nine levels of ten aliases (90 uses, within the alias budget) would expand to 10^10
    values; the expanded-size budget stops it at the first alias that crosses it."""
    levels = [f"  l0: &l0 [{', '.join(['x'] * 10)}]\n"] + [
        f"  l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]\n" for n in range(1, 10)]
    found = finishes_within(5, issues, tmp_path, "constants:\n" + "".join(levels))
    assert found == [(11, 12, "spec.yaml-alias",  # l4's first alias: 11+111+1111+11111+1+11111
                      f"aliases expand the spec to more than {MAX_NODES} values "
                      "(lists, mappings and scalars)")]


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path):
    assert issues(tmp_path, "constants:\n  a: &a [1, *a]\n") == [
        (7, 13, "spec.yaml-alias", "alias *a refers to a node that contains it")]


def test_nesting_up_to_the_depth_bound_loads(tmp_path):
    # the document's mapping and "constants" are two levels
    inner = "[" * (MAX_DEPTH - 2) + "1" + "]" * (MAX_DEPTH - 2)
    spec = compiles(tmp_path, f"constants:\n  d: {inner}\n")
    depth, value = 0, spec.constants["d"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert (depth, value) == (MAX_DEPTH - 2, 1)


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, 10_000])
def test_deeper_flow_nesting_is_refused_without_recursion_error(tmp_path, levels):
    text = "constants:\n  d: " + "[" * levels + "]" * levels + "\n"
    assert finishes_within(5, issues, tmp_path, text) == [
        (7, 6 + MAX_DEPTH - 2, "spec.yaml-depth",
         f"lists and mappings nest more than {MAX_DEPTH} levels deep")]


def test_deep_block_nesting_is_refused(tmp_path):
    text = "constants:\n" + "".join(f"{'  ' * (n + 1)}k{n}:\n" for n in range(200)) + \
        "  " * 201 + "x: 1\n"
    assert issues(tmp_path, text) == [
        (6 + MAX_DEPTH, 2 * MAX_DEPTH + 1, "spec.yaml-depth",  # the mapping under k62
         f"lists and mappings nest more than {MAX_DEPTH} levels deep")]


def test_more_values_than_the_budget_are_refused(tmp_path):
    values = ",".join(["0"] * MAX_NODES)
    [(line, column, code, message)] = finishes_within(
        5, issues, tmp_path, f"constants:\n  l: [{values}]\n")
    assert (line, code, message) == (7, "spec.too-large", f"the spec holds more than "
                                     f"{MAX_NODES} values (lists, mappings and scalars)")


# --------------------------------------------------------------------------- YAML mistakes

@pytest.mark.parametrize("text, expected", [
    ("constants:\n\ta: 1\n", (7, 1, "a tab character: YAML indents with spaces only")),
    ("constants:\n  a: 'abc\n  b: 2\n", (7, 6, "a quoted string opened here is never closed")),
    ('constants:\n  a: "abc\n', (7, 6, "a quoted string opened here is never closed")),
    ("constants:\n  a: b: c\n", (7, 7, "unexpected ':' — quote a value that contains ': ', "
                                        "or indent this line like the keys around it")),
    ("constants:\n    a: 1\n  b: 2\n", (8, 3, "bad indentation: this line does not line up "
                                              "with the block that starts at line 1, column 1")),
    ("constants:\n  a: 1\n  b\n  c: 2\n", (8, 3, "a line with no ':' where a key was expected "
                                               "(or a quote or bracket left open)")),
    ("constants:\n  a: [1, 2\n  b: 3\n", (8, 4, "the bracket opened at line 7, column 6 is not "
                                            "closed with ']' before this point")),
    ("constants:\n  a: *nowhere\n", (7, 6, "alias *nowhere refers to no anchor &nowhere "
                                          "defined before it")),
    ("constants: {}\n---\nb: 2\n", (7, 1, "a spec is one YAML document; a second one starts "
                                        "here")),
    ("constants:\n  a: @x\n", (7, 6, "a value cannot start with '@': quote it")),
])
def test_common_yaml_mistakes_are_explained(tmp_path, text, expected):
    line, column, message = expected
    assert issues(tmp_path, text) == [(line, column, "spec.yaml", f"YAML syntax: {message}")]


# --------------------------------------------------------------------------- the file itself

def spec_issue(path) -> tuple:
    """(file, line, column, code, message) of the single issue reading ``path``."""
    with pytest.raises(SpecInvalid) as caught:
        finishes_within(5, read_spec_file, path)
    [issue] = caught.value.issues
    return issue.mark.file, issue.mark.line, issue.mark.column, issue.code, issue.message


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    assert spec_issue(fifo) == (str(fifo), 1, 1, "spec.not-a-file",
                                "spec is a FIFO (named pipe), not a regular file")


def test_a_device_is_refused_without_reading(tmp_path):
    link = tmp_path / "spec.yaml"
    link.symlink_to("/dev/zero")
    assert spec_issue(link) == (str(link), 1, 1, "spec.not-a-file",
                                "spec is a character device, not a regular file")


def test_a_directory_is_refused(tmp_path):
    assert spec_issue(tmp_path) == (str(tmp_path), 1, 1, "spec.not-a-file",
                                    "spec is a directory, not a regular file")


def test_a_symlink_loop_is_unreadable(tmp_path):
    loop = tmp_path / "spec.yaml"
    loop.symlink_to(loop)
    assert spec_issue(loop) == (str(loop), 1, 1, "spec.unreadable",
                                "cannot read spec: Too many levels of symbolic links")


def test_a_spec_of_the_size_limit_loads_and_one_byte_more_is_refused(tmp_path):
    path = tmp_path / "case.yaml"
    padding = MAX_SPEC_BYTES - len(HEAD) - len("#\n")
    path.write_text(HEAD + "#" + " " * padding + "\n")
    assert path.stat().st_size == MAX_SPEC_BYTES
    assert read_spec_file(path).id == "toy/case"
    path.write_text(HEAD + "#" + " " * (padding + 1) + "\n")
    assert spec_issue(path) == (str(path), 1, 1, "spec.too-large",
                                f"spec is larger than {MAX_SPEC_BYTES >> 10} KiB, the limit "
                                "for a spec file")


def test_a_regular_file_that_keeps_growing_is_read_only_to_the_limit(tmp_path, monkeypatch):
    """A file whose size grows after ``fstat`` (or /proc files, which say 0): the read
    itself stops one byte past the limit."""
    path = tmp_path / "case.yaml"
    path.write_text(HEAD + "#" * (2 * MAX_SPEC_BYTES) + "\n")
    real_fstat = os.fstat
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result(
        real_fstat(fd)[:6] + (0,) + real_fstat(fd)[7:]))
    real_read, asked = os.read, []
    monkeypatch.setattr(os, "read", lambda fd, n: asked.append(n) or real_read(fd, n))
    assert spec_issue(path)[3] == "spec.too-large"
    assert sum(asked) <= MAX_SPEC_BYTES + 1


# --------------------------------------------------------------------------- names

def test_unknown_assertion_kind(tmp_path):
    [(line, column, code, message)] = issues(tmp_path, RULE + body("""\
            given: "doc:$.a"
            assert: {equal: 1}
    """))
    assert (line, column, code) == (10, 14, "spec.unknown-kind")
    assert message.startswith("unknown assertion kind 'equal' (did you mean 'equals'?); "
                              "known: absent, count, equals, ")


def test_kind_argument_error(tmp_path):
    assert issues(tmp_path, RULE + body("""\
            given: "doc:$.a"
            assert: {range: {minimum: 1}}
    """)) == [(10, 14, "spec.kind-argument",
               "range: unknown argument minimum; allowed: min, max, exclusive_min, exclusive_max")]


def test_inner_kind_errors_name_the_inner_key(tmp_path):
    found = issues(tmp_path, RULE + (
        '    given: "doc:$.a"\n'
        "    assert: {not: {bogus: 1}}\n"                          # line 10
        "  - id: toy.b\n"
        "    description: B.\n"
        '    given: "doc:$.b[*]"\n'
        '    assert: {count: {min: 1, where: {regex: "("}}}\n'     # line 14
    ))
    assert [(line, column, code) for line, column, code, _ in found] == [
        (10, 20, "spec.unknown-kind"), (14, 38, "spec.kind-argument")]


def test_unknown_hook(tmp_path):
    [(line, column, code, message)] = issues(tmp_path, RULE + "    hook: toy.nope\n")
    assert (line, column, code) == (9, 5, "spec.unknown-hook")
    assert message.startswith("unknown check hook 'toy.nope'") and "; registered: " in message


def test_duplicate_rule_ids(tmp_path):
    path = tmp_path / "case.yaml"
    assert issues(tmp_path, RULE + (
        '    given: "doc:$.a"\n'
        "    assert: {present: true}\n"
        "  - id: toy.b\n"
        "    description: B.\n"
        '    given: "doc:$.b"\n'
        "    assert: {present: true}\n"
        "  - id: toy.a\n"                      # line 15
        "    description: A again.\n"
        '    given: "doc:$.c"\n'
        "    assert: {present: true}\n"
    )) == [(15, 5, "spec.duplicate-rule-id", f"duplicate rule id 'toy.a' (first at {path}:7:5)")]


@pytest.mark.parametrize("given, message", [
    ("doc:$.a[?", "invalid JSONPath '$.a[?': "),
    ("doc:/a/{x", "unbalanced braces in template '{x'"),
    ("doc:a.b", "a selector starts with '$' (JSONPath), '/' (pointer) or '@' (file metadata): "
                "'doc:a.b'"),
    ("doc:@md5", "unknown metadata '@md5' in 'doc:@md5'; known: @sha256, @path, @size, @index, "
                 "@label"),
    ("doc:@index", "@index exists only for iterations"),
])
def test_bad_selectors(tmp_path, given, message):
    [(line, column, code, text)] = issues(
        tmp_path, RULE + f"    given: '{given}'\n    assert: {{present: true}}\n")
    assert (line, column, code) == (9, 5, "spec.path-syntax")
    assert text.startswith(message)


def test_unknown_target(tmp_path):
    assert issues(tmp_path, RULE + body("""\
            given: "doc:$.a"
            assert: {equals: {ref: "nodoc:$.x"}}
    """)) == [(10, 23, "spec.unknown-target",
              "'nodoc:$.x' names 'nodoc', which is neither a document, an iteration nor "
              "'constants' (did you mean 'doc'?)")]


ITERATION_HEAD = HEAD + """\
  per: {loader: json, each: it, path: "x/{it.name}.json"}
iterations:
  it: {over: "doc:$.items[*]"}
"""  # lines 1-8


def test_unknown_iteration(tmp_path):
    assert issues(tmp_path, RULE.replace("    description", "    for_each: nope\n    description")
                  + "    given: doc:$.a\n    assert: {present: true}\n", head=ITERATION_HEAD) == [
        (11, 5, "spec.unknown-iteration", "for_each names unknown iteration 'nope'")]


@pytest.mark.parametrize("given, message", [
    ("it:$.name", "'it:$.name' uses iteration 'it', which is not bound here (bound: none)"),
    ("doc:/items/{it@index}",
     "placeholder {it@index} uses 'it', which is not bound here (bound: none)"),
    ("per:$.a", "document 'per' exists once per 'it'; bind 'it' with for_each to use it"),
])
def test_unbound_iteration(tmp_path, given, message):
    assert issues(tmp_path, RULE + f"    given: '{given}'\n    assert: {{present: true}}\n",
                  head=ITERATION_HEAD) == [(12, 5, "spec.unbound-iteration", message)]


def test_unknown_parent_and_each(tmp_path):
    head = ITERATION_HEAD.replace("each: it", "each: nit").replace(
        'over: "doc:$.items[*]"', 'over: "doc:$.items[*]", parent: pit')
    assert issues(tmp_path, "", head=head) == [
        (6, 23, "spec.unknown-iteration",
         "each names unknown iteration 'nit' (did you mean 'it'?)"),
        (6, 34, "spec.unbound-iteration",
         "placeholder {it.name} uses 'it', which is not bound here (bound: none)"),
        (8, 32, "spec.unknown-iteration",
         "parent names unknown iteration 'pit' (did you mean 'it'?)")]


def test_iteration_parent_cycle(tmp_path):
    assert issues(tmp_path, "iterations:\n  a: {over: 'doc:$.a[*]', parent: b}\n"
                            "  b: {over: 'doc:$.b[*]', parent: a}\n") == [
        (7, 27, "spec.invalid", "iteration 'a' has a parent cycle"),
        (8, 27, "spec.invalid", "iteration 'b' has a parent cycle")]


def test_at_pins_unknown_iteration(tmp_path):
    assert issues(tmp_path, RULE + body("""\
            given: "doc:$.a"
            assert: {equals: {ref: "doc:$.b", at: {nope: 0}}}
    """)) == [(10, 39, "spec.invalid", "'at' pins unknown iteration 'nope'")]


def test_unknown_loader(tmp_path):
    assert issues(tmp_path, "", head=HEAD.replace("json", "xml")) == [
        (5, 9, "spec.unknown-loader",
         "unknown loader 'xml'; known: bytes, csv, directory, json, jsonl, prometheus, sse, "
         "text")]


# --------------------------------------------------------------------------- constants

def test_unknown_constant(tmp_path):
    assert issues(tmp_path, RULE + body("""\
            given: "doc:$.a"
            assert: {equals: "${nope}"}
    """)) == [(10, 14, "spec.unknown-constant", "unknown constant ${nope}")]


def test_unknown_constant_in_a_list_names_the_item(tmp_path):
    assert issues(tmp_path, "constants:\n  c: [a]\n" + RULE + body("""\
            given: "doc:$.a"
            assert: {one_of: [a, "${c.1}"]}
    """)) == [(12, 26, "spec.unknown-constant", "unknown constant ${c.1}")]


def test_structured_constant_inside_text(tmp_path):
    assert issues(tmp_path, "constants:\n  c: [a]\n" + RULE + body("""\
            given: "doc:$.a"
            assert: {equals: "x${c}"}
    """)) == [(12, 14, "spec.constant-type",
              "constant ${c} is a structure; only a whole string may be replaced by it")]


def test_constant_substitution(tmp_path):
    spec = compiles(tmp_path, """\
        constants:
          colours: [red, green]
          limits: {max: 3}
          version: 7
        rules:
          - id: toy.a
            description: "Version ${version}, up to ${limits.max}, first ${colours.0}."
            given: "doc:$.a"
            assert: {one_of: "${colours}"}
          - id: toy.b
            description: Bounded.
            given: "doc:$.b"
            assert: {range: "${limits}"}
    """)
    a, b = spec.rules
    assert a.description == "Version 7, up to 3, first red."
    assert a.arg == ["red", "green"] and b.arg == {"max": 3}


# --------------------------------------------------------------------------- formulas, conditions

def test_formula_syntax_error(tmp_path):
    assert issues(tmp_path, RULE + body("""\
            given: "doc:$"
            assert: {formula: "a = b"}
    """)) == [(10, 14, "spec.formula-syntax",
              "formula: unexpected character '=' (use '==' to compare) at column 3\n"
              "  a = b\n    ^")]


@pytest.mark.parametrize("formula, code, message", [
    ("{expr: '$ == @x'}", "spec.formula-syntax", "formula uses @x but refs does not define it"),
    ("{expr: '$ == 1', tol: 1}", "spec.invalid", "unknown formula keys ['tol']"),
    ("{rel_tol: 1}", "spec.invalid", "formula wants a string or {expr, rel_tol, abs_tol, refs}"),
])
def test_formula_argument_errors(tmp_path, formula, code, message):
    assert issues(tmp_path, RULE + f"    given: doc:$\n    assert: {{formula: {formula}}}\n") == [
        (10, 14, code, message)]


def test_condition_with_two_kinds(tmp_path):
    assert issues(tmp_path, RULE + body("""\
            when: {given: "doc:$.a", equals: 1, present: true}
            given: "doc:$.a"
            assert: {present: true}
    """)) == [(9, 5, "spec.invalid", "a condition has 'given' and exactly one assertion kind")]


def test_assertion_needs_given(tmp_path):
    assert issues(tmp_path, RULE + "    assert: {present: true}\n") == [
        (9, 5, "spec.invalid", "an assertion needs 'given'")]


def test_message_placeholder_must_be_bound(tmp_path):
    [(line, column, code, message)] = issues(tmp_path, RULE + body("""\
            given: "doc:$.a"
            assert: {present: true}
            message: "{item.sku}: {detail}"
    """))
    assert (line, column, code) == (11, 5, "spec.unbound-iteration")
    assert message.startswith("placeholder {item.sku} uses 'item', which is not bound here")


def test_every_issue_is_reported_at_once(tmp_path):
    found = issues(tmp_path, RULE + (
        '    given: "nodoc:$.a"\n'
        "    assert: {equal: 1}\n"
        "  - id: toy.b\n"
        "    description: B.\n"
        '    given: "doc:$.b"\n'
        '    assert: {formula: "1 +"}\n'       # line 14
    ))
    assert [(line, column, code) for line, column, code, _ in found] == [
        (9, 5, "spec.unknown-target"), (10, 14, "spec.unknown-kind"),
        (14, 14, "spec.formula-syntax")]


# --------------------------------------------------------------------------- documents section

def test_document_without_a_path(tmp_path):
    assert issues(tmp_path, "", head=HEAD + "  other: {loader: json}\n") == [
        (6, 10, "spec.invalid", "a document needs path, path_from, from or entry: true")]


def test_document_named_like_an_iteration(tmp_path):
    head = HEAD + "  it: {loader: json, path: x.json}\niterations:\n  it: {over: 'doc:$.a[*]'}\n"
    assert issues(tmp_path, "", head=head) == [
        (6, 3, "spec.name-clash", "document 'it' has the name of an iteration or of 'constants'")]


def test_path_excludes_entry(tmp_path):
    assert issues(tmp_path, "", head=HEAD.replace("entry: true", "entry: true, path: x.json")) == [
        (5, 36, "spec.shape", "'path' cannot be combined with ['path_from', 'entry']")]


def test_entry_count_error_names_the_documents_key(tmp_path):
    head = HEAD.replace("entry: true", "path: x.json")
    assert issues(tmp_path, "", head=head) == [
        (4, 1, "spec.entry", "exactly one document is the entry (entry: true); found 0")]


def test_duplicate_spec_ids_in_a_library(tmp_path):
    (tmp_path / "a.yaml").write_text(HEAD)
    (tmp_path / "b.yaml").write_text(HEAD)
    with pytest.raises(SpecInvalid) as caught:
        SpecLibrary([tmp_path]).all()
    [issue] = caught.value.issues
    assert (issue.mark.file, issue.mark.line, issue.mark.column, issue.code) == (
        str(tmp_path / "b.yaml"), 2, 1, "spec.duplicate-id")
    assert issue.message == f"spec id 'toy/case' is also used by {tmp_path / 'a.yaml'}"


# --------------------------------------------------------------------------- docs/spec-language.md

DOC = Path(__file__).resolve().parents[2] / "docs" / "spec-language.md"


def doc_blocks(language: str) -> list[str]:
    import re

    return [textwrap.dedent(block) for block in
            re.findall(rf"^ *```{language}\n(.*?)^ *```$", DOC.read_text(), re.S | re.M)]


def test_every_yaml_block_of_the_language_reference_parses():
    import yaml

    blocks = doc_blocks("yaml")
    assert len(blocks) > 40
    for block in blocks:
        assert yaml.safe_load(block) is not None, block


def test_every_complete_spec_in_the_language_reference_compiles(tmp_path):
    complete = [block for block in doc_blocks("yaml") if block.startswith("flarespec: 1\n")]
    assert len(complete) >= 2
    for number, block in enumerate(complete):
        path = tmp_path / f"block{number}.yaml"
        path.write_text(block)
        spec_file = read_spec_file(path)
        library = SpecLibrary([TOY])
        library.add(spec_file)
        compile_spec(resolve(spec_file, library))
        # the complete examples are the toy specs themselves, verbatim
        toy_file = TOY / f"{spec_file.id.split('/')[1]}.yaml"
        assert block == toy_file.read_text()


# ------------------------------------------------------------ placeholders, constants, hooks

def test_a_misspelt_binding_metadata_is_found_at_load(tmp_path):
    rule = RULE.replace("    description", "    for_each: it\n    description")
    assert issues(tmp_path, rule + "    given: 'doc:/items/{it@idx}'\n    assert: {present: true}\n",
                  head=ITERATION_HEAD) == [
        (13, 5, "spec.unknown-metadata",
         "placeholder {it@idx}: an iteration has no @idx; known: @index, @label (did you mean "
         "'index'?)")]


def test_a_constant_path_that_selects_nothing_is_found_at_load(tmp_path):
    head = HEAD + "constants:\n  limits: {low: 1}\n"  # lines 6-7
    assert issues(tmp_path, RULE + body("""\
            given: "doc:$.a"
            assert: {equals: {ref: "constants:/limits/lwo"}}
    """), head=head) == [
        (12, 23, "spec.unknown-constant",
         "'constants:/limits/lwo' selects nothing in the constants (did you mean 'limits'?)")]
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    compiles(fixed, RULE + body("""\
            given: "doc:$.a"
            assert: {equals: {ref: "constants:/limits/low"}}
    """), head=head)
    compiles(fixed, RULE + body("""\
            given: "doc:$.a"
            assert: {equals: {ref: "constants:/limits/lwo", default: 1}}
    """), head=head)  # a default says selecting nothing is expected


@pytest.fixture
def schema_hook(monkeypatch):
    """A check hook declaring its arguments, registered for one test."""
    from flarespec.engine import hooks

    monkeypatch.setattr(hooks, "HOOKS", dict(hooks.HOOKS))
    monkeypatch.setattr("flarespec.compiler.compile.HOOKS", hooks.HOOKS)
    hooks.check_hook("toy.schema", args={"numbers": "list", "label": "string?"})(
        lambda ctx, args: iter(()))


@pytest.mark.parametrize("args, expected", [
    ("{numbers: [1], labl: x}",
     [(10, 26, "spec.hook-argument", "toy.schema has no argument 'labl' (did you mean "
                                     "'label'?); arguments: numbers, label")]),
    ("{label: x}", [(10, 5, "spec.hook-argument", "toy.schema needs argument numbers")]),
    ("{numbers: 3}",
     [(10, 12, "spec.hook-argument", "toy.schema argument 'numbers' wants a list, got int")]),
])
def test_hook_arguments_are_checked_against_the_declared_schema(tmp_path, schema_hook, args,
                                                                expected):
    assert issues(tmp_path, RULE + f"    hook: toy.schema\n    args: {args}\n") == expected


def test_a_hook_argument_read_per_packet_is_not_type_checked(tmp_path, schema_hook):
    compiles(tmp_path, RULE + "    hook: toy.schema\n    args: {numbers: {ref: 'doc:$.n'}}\n")


def test_a_misspelt_hook_name_gets_a_suggestion(tmp_path, schema_hook):
    [(line, column, code, message)] = issues(tmp_path, RULE + "    hook: toy.schem\n")
    assert (line, column, code) == (9, 5, "spec.unknown-hook")
    assert message.startswith("unknown check hook 'toy.schem' (did you mean 'toy.schema'?); "
                              "registered: ")


@pytest.mark.parametrize("value", ["0", "-1", "true", "1.5", "257", "'8'"])
def test_max_mib_must_be_a_whole_number_of_mib_up_to_the_ceiling(tmp_path, value):
    head = HEAD.replace("entry: true", f"entry: true, options: {{max_mib: {value}}}")
    [(line, column, code, message)] = issues(tmp_path, "", head=head)
    assert (line, column, code) == (5, 46, "spec.document-option")
    assert message.startswith("max_mib must be a whole number of MiB from 1 to 256; got ")


@pytest.mark.parametrize("loader", ["bytes", "directory"])
def test_max_mib_on_a_streamed_document_is_a_spec_error(tmp_path, loader):
    head = HEAD + f"  raw: {{loader: {loader}, path: raw, options: {{max_mib: 64}}}}\n"
    assert issues(tmp_path, "", head=head) == [
        (6, 40 + len(loader), "spec.document-option",
         f"a {loader} document has no option 'max_mib'; its options: "
         f"{'head_bytes' if loader == 'bytes' else 'none'} (max_mib is for documents read "
         f"whole: a {loader} document is never read whole)")]


@pytest.mark.parametrize("value", [1, 256])
def test_max_mib_within_the_ceiling_compiles(tmp_path, value):
    head = HEAD.replace("entry: true", f"entry: true, options: {{max_mib: {value}}}")
    assert compiles(tmp_path, "", head=head).documents["doc"].options == {"max_mib": value}
