"""`flarespec spec lint`: every issue of a file at once, errors and warnings, three formats;
`spec list` and `spec show` for children. Real spec files in tmp_path and the bundled spec."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.cli import main
from flarespec.compiler.errors import ERROR, WARNING
from flarespec.authoring.lint import lint

BUNDLED = "flare/bce032c0"
ALL_BUNDLED = "aiperf/profile-export, flare/bce032c0"  # every bundled id, sorted
REVISION = "bce032c014bae34502ba22d3304fa084d5b40afe"
HEAD = f"""\
flarespec: 1
id: flare/next
title: Next revision
extends: {BUNDLED}
"""  # lines 1-4
PINNED = "applies_to: {given: 'packet:$.source.revision', equals: '%s'}\n"


def write(tmp_path, text: str, name: str = "next.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def found(path) -> list[tuple]:
    """(line, column, code, severity) of every issue lint reports for one file."""
    [result] = lint([str(path)])
    return [(i.mark.line, i.mark.column, i.code, i.severity) for i in result.issues]


# --------------------------------------------------------------------------- all at once
EVERYTHING = HEAD + PINNED % "next" + """\
extnds: x
rules:
  - id: snapshot.delta.completed
    description: The completed counter, misspelt argument.
    for_each: group
    hook: flare.counter_delta
    args:
      before: {ref: "snapshot:$.unlabelled", at: {phase: 0}}
      after: {ref: "snapshot:$.unlabelled", at: {phase: 1}}
      countr: completed_total
      per_request: 1
      requests: {ref: "group:$.requests"}
  - id: toy.kind
    description: A misspelt kind.
    given: "packet:$.schema"
    assert: {equal: 1}
  - id: toy.target
    description: A misspelt document.
    given: "pakcet:$.schema"
    assert: {present: true}
  - id: toy.meta
    description: A misspelt binding metadata.
    for_each: group
    given: "measurements:/groups/{group@idx}"
    assert: {present: true}
  - id: toy.constant
    description: A constant path that does not exist.
    given: "packet:$.schema"
    assert: {equals: {ref: "constants:/sourc/revision"}}
  - id: toy.requires
    description: A misspelt required rule.
    given: "packet:$.schema"
    requires: [packet.schemo]
    assert: {present: true}
"""


def test_shape_errors_do_not_hide_kind_path_hook_and_placeholder_errors(tmp_path):
    path = write(tmp_path, EVERYTHING)
    result = invoke("spec", "lint", path)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    expected = [
        f"{path}:6:1: unknown key 'extnds' (did you mean 'extends'?) [spec.shape]",
        f"{path}:15:7: flare.counter_delta has no argument 'countr' (did you mean "
        f"'counter'?); arguments: before, after, counter, per_request, requests, sum_field, "
        f"observations [spec.hook-argument]",
        f"{path}:12:5: flare.counter_delta needs argument counter [spec.hook-argument]",
        f"{path}:24:5: 'pakcet:$.schema' names 'pakcet', which is neither a document, an "
        f"iteration nor 'constants' (did you mean 'packet'?) [spec.unknown-target]",
        f"{path}:29:5: placeholder {{group@idx}}: an iteration has no @idx; known: @index, "
        f"@label (did you mean 'index'?) [spec.unknown-metadata]",
        f"{path}:34:23: 'constants:/sourc/revision' selects nothing in the constants (did "
        f"you mean 'source'?) [spec.unknown-constant]",
    ]
    for line in expected:
        assert line in lines, result.output
    kind = next(line for line in lines if "[spec.unknown-kind]" in line)
    assert kind.startswith(f"{path}:21:14: unknown assertion kind 'equal' (did you mean "
                           f"'equals'?); known: ")
    assert f"{path}:38:16: requires names 'packet.schemo', which is no rule of this spec " \
           f"(did you mean 'packet.schema'?) [spec.requires-unknown]" in lines
    assert not any(line.endswith(": ok") or "Traceback" in line for line in lines)


def test_a_clean_child_lints_ok_and_exits_0(tmp_path):
    path = write(tmp_path, HEAD + PINNED % "next")
    result = invoke("spec", "lint", path)
    assert result.exit_code == 0, result.output
    assert result.output == ("spec lint: 1 spec, 0 errors, 0 warnings\n"
                             f"{path}: ok (flare/next, 89 rules)\n")


@pytest.mark.parametrize("value, problem", [
    ("'many'", "flare.counter_delta argument 'per_request' wants a integer, got str"),
    (None, "flare.counter_delta wants exactly one of {per_request, requests} or "
           "{sum_field, observations}"),
])
def test_hook_arguments_are_checked_against_the_hooks_schema(tmp_path, value, problem):
    args = "      per_request: %s\n" % value if value else ""
    path = write(tmp_path, HEAD + PINNED % "next" + textwrap.dedent("""\
        rules:
          - id: snapshot.delta.completed
            replaces: true
            description: The completed counter.
            for_each: group
            hook: flare.counter_delta
            args:
              before: {ref: "snapshot:$.unlabelled", at: {phase: 0}}
              after: {ref: "snapshot:$.unlabelled", at: {phase: 1}}
              counter: "${counters.completed}"
              requests: {ref: "group:$.requests"}
        """) + args)
    [result] = lint([str(path)])
    assert [(i.code, i.message) for i in result.issues] == [("spec.hook-argument", problem)]


# --------------------------------------------------------------------------- warnings
def test_missing_applies_to_is_a_warning_and_a_constant_may_read_a_constant(tmp_path):
    path = write(tmp_path, HEAD + "constants:\n  note: '${source.revision}'\n")
    assert found(path) == [(2, 1, "spec.no-applies-to", WARNING)]
    result = invoke("spec", "lint", path)
    assert result.exit_code == 0, result.output
    assert f"{path}:2:1: warning: no applies_to: this spec is never chosen for a packet" \
        in result.output
    assert result.output.endswith(f"{path}: ok (flare/next, 89 rules, 1 warning)\n")
    assert invoke("spec", "lint", "--strict", path).exit_code == 2


def test_a_rule_literal_equal_to_a_constant_is_a_warning(tmp_path):
    path = write(tmp_path, HEAD + PINNED % "next" + textwrap.dedent(f"""\
        rules:
          - id: packet.source-revision
            description: The revision, spelt out.
            given: "packet:$.source.revision"
            assert: {{equals: "{REVISION}"}}
        """))
    [result] = lint([str(path)])
    assert [(i.code, i.severity) for i in result.issues] == \
        [("spec.literal-equals-constant", WARNING)]
    assert result.issues[0].mark.line == 10


# --------------------------------------------------------------------------- applies_to
def test_applies_to_equal_to_another_library_spec_is_an_error_naming_both(tmp_path):
    """The trap: a child restating its parent's applies_to (here through the inherited
    constant) makes every packet of the old revision "several specs apply"."""
    path = write(tmp_path, HEAD + PINNED % "${source.revision}")
    [result] = lint([str(path)])
    [issue] = result.issues
    assert (issue.code, issue.severity, issue.mark.line) == \
        ("spec.applies-to-overlap", ERROR, 5)
    assert issue.message.startswith(f"applies_to of 'flare/next' and '{BUNDLED}' both hold "
                                    f"when packet:$.source.revision equals '{REVISION}'")
    assert invoke("spec", "lint", path).exit_code == 2


def test_specs_linted_together_are_checked_against_each_other(tmp_path):
    one = write(tmp_path, HEAD + PINNED % "next", "one.yaml")
    two = write(tmp_path, HEAD.replace("flare/next", "flare/other") + PINNED % "next",
                "two.yaml")
    results = lint([str(one), str(two)])
    assert [[i.code for i in r.issues] for r in results] == \
        [["spec.applies-to-overlap"], ["spec.applies-to-overlap"]]
    assert "'flare/other'" in results[0].issues[0].message


def test_an_undecidable_overlap_is_a_warning(tmp_path):
    path = write(tmp_path, HEAD + "applies_to: {given: 'packet:$.schema', present: true}\n")
    assert found(path) == [(5, 1, "spec.applies-to-undecided", WARNING)]


# --------------------------------------------------------------------------- formats
def test_github_format_annotates_errors_and_warnings(tmp_path):
    path = write(tmp_path, HEAD + "extnds: x\n")
    result = invoke("spec", "lint", "--format", "github", "--root", tmp_path, path)
    assert result.exit_code == 2
    name = Path(path).relative_to(tmp_path).as_posix()
    assert result.output.splitlines() == [
        f"::error file={name},line=5,col=1,title=spec.shape::unknown key 'extnds' (did you "
        f"mean 'extends'?)",
        f"::warning file={name},line=2,col=1,title=spec.no-applies-to::no applies_to: this "
        f"spec is never chosen for a packet, only used when named with --spec; add "
        f"applies_to (e.g. the revision it covers) to have it selected",
        "::error title=flarespec spec lint::spec lint: 1 spec, 1 error, 1 warning"]


def test_json_format_has_a_severity_per_issue(tmp_path):
    path = write(tmp_path, HEAD)
    result = invoke("spec", "lint", "--format", "json", path, BUNDLED)
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert report["report"] == "flarespec-report-v1" and report["ok"] is True
    assert [f["rule"] for f in report["findings"] if f["kind"] == "fail"] == ["spec.no-applies-to"]
    first, bundled = report["specs"]
    assert first["ok"] and first["id"] == "flare/next" and first["rules"] == 89
    assert [(i["code"], i["severity"], i["line"]) for i in first["issues"]] == \
        [("spec.no-applies-to", "warning", 2)]
    assert bundled == {"spec": BUNDLED, "id": BUNDLED, "ok": True, "rules": 89, "issues": []}


def test_an_unknown_reference_is_an_error_with_a_suggestion():
    result = invoke("spec", "lint", "flare/bce032")
    assert result.exit_code == 2
    assert result.output == ("spec lint: 1 spec, 1 error, 0 warnings\n"
                             "'flare/bce032' is neither a spec file nor a bundled spec id "
                             f"(did you mean '{BUNDLED}'?); bundled: {ALL_BUNDLED} "
                             "[spec.unknown]\n")


# --------------------------------------------------------------------------- list / show
def test_show_puts_id_and_title_first_and_marks_each_rule(tmp_path):
    path = write(tmp_path, HEAD + PINNED % "next" + textwrap.dedent("""\
        rules:
          - id: packet.schema
            description: Overridden.
            given: "packet:$.schema"
            assert: {present: true}
          - id: toy.added
            description: Added.
            given: "packet:$.schema"
            assert: {present: true}
        """))
    result = invoke("spec", "show", path)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:2] == ["id: flare/next", "title: Next revision"]
    assert lines[lines.index("- id: packet.schema") - 1] == "# overridden by flare/next"
    assert lines[lines.index("- id: toy.added") - 1] == "# added by flare/next"
    assert lines[lines.index("- id: packet.source") - 1] == f"# inherited from {BUNDLED}"
    shown = json.loads(invoke("spec", "show", path, "--format", "json").output)
    assert list(shown)[:2] == ["id", "title"]
    assert shown["rule_status"]["toy.added"] == {"status": "added", "spec": "flare/next"}
    assert shown["rule_status"]["packet.source"]["status"] == "inherited"


def test_show_says_where_each_rule_runs(tmp_path):
    """Where the engine runs each rule (engine/schedule.py): per request, before the
    requests, or after them, which is where a rule reading another request's documents goes
    (it re-reads them); a spec that does not compile is shown without it."""
    path = write(tmp_path, HEAD + PINNED % "next" + textwrap.dedent("""\
        rules:
          - id: toy.after-previous
            description: A request's first arrival is not before the previous request's.
            for_each: request
            given: "observation:$.events[0].arrival_ns"
            assert: {range: {min: {ref: "observation:$.events[0].arrival_ns", at: {request: previous}}}}
        """))
    lines = invoke("spec", "show", path).output.splitlines()
    assert lines[lines.index("- id: toy.after-previous") - 2] == "# runs after the request elements"
    assert lines[lines.index("- id: observation.events.match-sse") - 2] == "# runs per request"
    assert lines[lines.index("- id: packet.schema") - 2] == "# runs before the request elements"
    runs = json.loads(invoke("spec", "show", path, "--format", "json").output)["rule_runs"]
    assert runs["toy.after-previous"] == runs["packet.files.digest"] == "after the request elements"
    broken = write(tmp_path, HEAD + PINNED % "next" + "rules:\n  - id: toy.broken\n"
                   "    description: Reads a document that does not exist.\n"
                   "    given: \"nowhere:$.x\"\n    assert: {present: true}\n", "broken.yaml")
    shown = invoke("spec", "show", broken)
    assert shown.exit_code == 0 and "# runs " not in shown.output
    assert "rule_runs" not in json.loads(invoke("spec", "show", broken, "--format", "json").output)


def test_a_dropped_document_is_reported_once_per_reading_place_naming_the_drop(tmp_path):
    """At the child's drop (the edit that caused them), each naming the parent's place."""
    path = write(tmp_path, HEAD + PINNED % "next" + "drop_documents: [corpus]\n")
    [result] = lint([str(path)])
    assert {issue.code for issue in result.issues} == {"spec.dropped-document"}
    assert {(i.mark.file, i.mark.line, i.mark.column) for i in result.issues} == \
        {(str(path), 6, 18)}
    places = [i.related for i in result.issues]
    assert len(places) == len(set(places)) > 1  # compiler repeats are folded into them
    assert all(f"which flare/next drops (read at {i.related[0]})" in i.message
               or f"which flare/next drops: " in i.message for i in result.issues)
    assert all(Path(i.related[0].file).name == "bce032c0.yaml" for i in result.issues)
    assert any(i.message.startswith("rule 'corpus.name' reads document 'corpus'")
               for i in result.issues)


def test_show_marks_a_renamed_rule(tmp_path):
    path = write(tmp_path, HEAD + PINNED % "next" + textwrap.dedent("""\
        rules:
          - id: packet.schema-v2
            renamed_from: packet.schema
            description: Renamed.
            given: "packet:$.schema"
            assert: {present: true}
        """))
    lines = invoke("spec", "show", path).output.splitlines()
    assert lines[lines.index("- id: packet.schema-v2") - 1] == \
        "# renamed from packet.schema by flare/next"
    assert "- id: packet.schema" not in lines


# --------------------------------------------------------------------------- placeholders
def test_a_misspelt_placeholder_field_is_caught_at_lint(tmp_path):
    """`{group.knd}` used to lint clean and fail only when a packet was checked. A field of
    an iteration over the evidence read nowhere else is a warning with a did-you-mean; a
    field the values of an iteration over a constant lack can never be filled: an error."""
    path = write(tmp_path, HEAD + PINNED % "next" + textwrap.dedent("""\
        rules:
          - id: corpus.group.kind-known
            description: Every group's kind is a kind of the matrix (misspelt placeholder).
            for_each: group
            given: "group:$.kind"
            assert: {one_of: {ref: "constants:/group_matrix/[kind={group.knd}]/kind", all: true}}
          - id: snapshot.phase.named
            description: A misspelt field of a constant iteration.
            for_each: phase
            given: "snapshot:$.families"
            message: "{phase.nme} snapshot: {detail}"
            assert: {length: {min: 1}}
        """))
    [result] = lint([str(path)])
    issues = {(i.code, i.severity, i.mark.line) for i in result.issues}
    assert issues == {("spec.placeholder-field-unread", WARNING, 11),
                      ("spec.unfillable-placeholder", ERROR, 16)}
    messages = " ".join(i.message for i in result.issues)
    assert "did you mean 'kind'?" in messages and "did you mean 'name'?" in messages
    assert invoke("spec", "lint", path).exit_code == 2


def test_the_bundled_spec_and_the_worked_example_fill_every_placeholder():
    example = Path(__file__).resolve().parents[2] / "docs/examples/flare-next/flare-next.yaml"
    for ref in (BUNDLED, str(example)):
        [result] = lint([ref])
        assert not [i for i in result.issues if "placeholder" in i.code], ref


def test_a_placeholder_inside_a_path_s_string_literal_is_a_warning(tmp_path):
    """``[?@.name=='{family.name}_count']`` reads as "the family's count sample" but the
    braces are text in a literal: the filter selects nothing on a real page. It linted
    clean; now it is a warning naming the placeholder and what is filled instead. A brace
    in a literal that is no binding (``'{x}'`` with no iteration x) stays quiet."""
    path = write(tmp_path, textwrap.dedent("""\
        flarespec: 1
        id: toy/page
        title: a metrics page
        documents:
          page: {loader: prometheus, entry: true, rule: toy.page}
        iterations:
          family: {over: "page:$.families[?@.type=='histogram']"}
        rules:
          - id: toy.page.count
            description: Each histogram has a count sample.
            for_each: family
            given: "page:$.samples[?@.name=='{family.name}_count']"
            assert: {count: {equals: 1}}
          - id: toy.page.braces
            description: A literal with braces that name no binding.
            given: "page:$.samples[?@.name=='{x}']"
            assert: {count: {equals: 0}}
        """), name="page.yaml")
    [result] = lint([str(path)])
    literal = [i for i in result.issues if i.code == "spec.placeholder-in-literal"]
    assert [(i.severity, i.mark.line) for i in literal] == [(WARNING, 12)]
    assert "{family.name}, which is text there, never filled" in literal[0].message
    assert ".{family.name}" in literal[0].message
