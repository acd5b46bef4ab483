"""`spec lint` reports every error of a file in one run, each located in the file that caused
it (issue 25, "Lint all at once, in the file that caused it").

* An unknown constant, a misspelt key, a rule reading a dropped document: all reported at
  once (resolution goes past an unknown constant, compilation past shape errors, part by
  part), a later step's repeat of an earlier cause left out, a step that cannot run said.
* An error a child's edit causes in the parent (a drop, a constant override) is located at
  the child's line, the parent's line named as context (``read at``, ``related``).
* Loading for a run still refuses such a spec (fail closed).

Children are written to tmp_path; the bundled parent's lines are looked up in its text,
never hard-coded."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from cli_run import run
from flarespec.authoring import lint as lint_module
from flarespec.authoring.lint import lint_one
from flarespec.compiler.compile import _Compiler, compile_spec
from flarespec.compiler.errors import ERROR, SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.open import bundled_library, open_compiled, open_spec
from flarespec.compiler.resolve import resolve
from renamed_counters import counters, disagreeing, idle_metrics

BUNDLED = "flare/bce032c0"
HEAD = f"""\
flarespec: 1
id: flare/next
title: Next revision
extends: {BUNDLED}
applies_to: {{given: 'packet:$.source.revision', equals: 'next'}}
"""  # lines 1-5
# the four rules reading request bodies besides the manifest rules (packet.files.*)
BODY_RULES = "[request.sha256.corpus, request.sha256.observation, request.max-tokens, " \
             "request.stream]"


def parent() -> Path:
    return Path(bundled_library().get(BUNDLED).path)


def parent_place(needle: str, within: str | None = None) -> tuple[int, int]:
    """(line, column) of ``needle`` in the parent, on the first line holding ``within``
    (default: the needle itself)."""
    for number, text in enumerate(parent().read_text().splitlines(), 1):
        if (within or needle) in text:
            return number, text.index(needle) + 1
    raise AssertionError(f"{needle!r} is not in the parent")


def child(tmp_path, text: str) -> Path:
    path = tmp_path / "child.yaml"
    path.write_text(text)
    return path


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def errors(path: Path, code: str | None = None) -> list:
    return [issue for issue in lint_one(str(path)).issues if issue.severity == ERROR
            and (code is None or issue.code == code)]


def where(issue) -> tuple[str, int, int]:
    return issue.mark.file, issue.mark.line, issue.mark.column


# ------------------------------------------------------------------ in the file that caused it

def test_a_kept_manifest_rule_of_a_dropped_document_is_at_the_childs_drop(tmp_path):
    """Was `bce032c0.yaml:378:84: rule 'packet.files.missing-entry' lists document
    'request_body' … which flare/c1 drops (at child.yaml:6:18)`: the child's author did
    not edit the parent."""
    path = child(tmp_path, HEAD + "drop_documents: [request_body]\n"
                 f"drop_rules: {BODY_RULES}\n")
    found = errors(path, "spec.dropped-document")
    assert {where(issue) for issue in found} == {(str(path), 6, 18)}
    expected = {}
    for rule, kind in [("packet.files.missing-entry", "manifest_lists_all"),
                       ("packet.files.extra-entry", "manifest_lists_only"),
                       ("packet.files.digest", "manifest_digests")]:
        line, column = parent_place("request_body", within=f"{kind}: [")
        expected[rule] = (line, column, kind)
    assert len(found) == 3
    for issue in found:
        rule = issue.message.split("'")[1]
        line, column, kind = expected[rule]
        [related] = issue.related
        assert (related.file, related.line, related.column) == (str(parent()), line, column)
        assert issue.message == (f"rule {rule!r} lists document 'request_body' in {kind}, "
                                 f"which flare/next drops (read at {parent()}:{line}:{column})")


def test_github_annotations_and_json_point_at_the_child(tmp_path):
    path = child(tmp_path, HEAD + "drop_documents: [request_body]\n"
                 f"drop_rules: {BODY_RULES}\n")
    github = run("spec", "lint", "--format", "github", "--root", tmp_path, path)
    assert github.exit_code == 2
    annotations = [line for line in github.output.splitlines()
                   if "title=spec.dropped-document" in line]
    assert len(annotations) == 3
    assert all(line.startswith("::error file=child.yaml,line=6,col=18,") for line in annotations)
    report = json.loads(run("spec", "lint", "--format", "json", path).output)
    issues = [i for i in report["specs"][0]["issues"] if i["code"] == "spec.dropped-document"]
    line, column = parent_place("request_body", within="manifest_lists_all: [")
    assert {(i["file"], i["line"]) for i in issues} == {(str(path), 6)}
    assert {"file": str(parent()), "line": line, "column": column} in \
        [place for issue in issues for place in issue["related"]]
    # an issue with no other place keeps the dict it always had
    clean = json.loads(run("spec", "lint", "--format", "json",
                           child(tmp_path, HEAD.replace("applies_to", "extnds"))).output)
    assert all("related" not in i for i in clean["specs"][0]["issues"])


def test_a_counter_renamed_in_counters_alone_lints_clean(tmp_path):
    """The parent's idle_metrics name the counters by ${counters.*}: a rename is one edit."""
    path = child(tmp_path, HEAD + "constants:\n"
                 + counters(reused_tokens="flare_cached_tokens_total"))
    result = lint_one(str(path))
    assert result.errors == []
    assert "flare_cached_tokens_total" in \
        {metric["name"] for metric in result.compiled.constants["idle_metrics"]}


def test_a_counter_renamed_in_one_constant_is_at_the_two_lines_that_disagree(tmp_path):
    """Was three errors at the child's `constants:` line: one, at the entry spelling the
    name read, with the child's idle_metrics entry spelling the name required."""
    path = child(tmp_path, HEAD + "constants:\n"
                 + disagreeing("flare_cached_tokens_total", "flare_prefix_tokens_reused_total"))
    [issue] = errors(path)
    assert issue.code == "spec.name-not-required"
    assert where(issue) == (str(path), line_of(path, "reused_tokens: flare_cached_tokens_total"), 5)
    [related] = issue.related
    assert (related.file, related.line, related.column) == \
        (str(path), line_of(path, "{name: flare_prefix_tokens_reused_total"), 8)
    assert issue.message.startswith("'flare_cached_tokens_total' is read from "
                                    "snapshot:$.unlabelled by rules "
                                    "'snapshot.delta.reused-tokens' (counter), "
                                    "'snapshot.counters.monotonic' (counters), "
                                    "'snapshot.counters.continuity' (counters), ")
    assert f"did you mean 'flare_prefix_tokens_reused_total' (at {related})?" in issue.message


def test_a_literal_written_where_the_parent_reads_a_counter_is_at_the_childs_literal(tmp_path):
    """The child restates idle_metrics with a new literal and keeps ``counters``: the error
    is at the literal (the child's edit), the parent's counter entry the name read, and the
    name meant is the literal (not the closest spelling, flare_requests_failed_total)."""
    path = child(tmp_path, HEAD + "constants:\n"
                 + idle_metrics(completed="flare_requests_done_total"))
    [issue] = errors(path)
    assert issue.code == "spec.name-not-required"
    assert where(issue) == (str(path), line_of(path, "{name: flare_requests_done_total"), 8)
    line, column = parent_place("completed:", within="completed: flare_requests_completed_total")
    [related] = issue.related
    assert (related.file, related.line, related.column) == (str(parent()), line, column)
    assert issue.message.startswith("'flare_requests_completed_total' is read from "
                                    "snapshot:$.unlabelled by rules 'snapshot.delta.completed' "
                                    "(counter), ")
    assert "did you mean 'flare_requests_done_total'?" in issue.message
    assert issue.message.endswith(f"(read at {related})")


def test_a_dropped_rule_still_required_is_at_the_childs_drop_rules_entry(tmp_path):
    path = child(tmp_path, HEAD + "drop_rules: [response.done]\n")
    [issue] = errors(path)
    assert issue.code == "spec.requires-unknown"
    assert where(issue) == (str(path), 6, 14)
    requiring = [n for n, text in enumerate(parent().read_text().splitlines(), 1)
                 if re.search(r"requires: \[.*\bresponse\.done\b", text)]
    assert len(requiring) > 1 and [m.line for m in issue.related] == requiring
    assert issue.message.endswith("; flare/next drops rule 'response.done' here: drop or "
                                  "restate the rules that require it")


def test_a_dropped_member_still_read_is_at_the_childs_drop_members_entry(tmp_path):
    path = child(tmp_path, HEAD + "shapes:\n  corpus:\n    drop_members: [name]\n")
    [issue] = errors(path, "spec.undeclared-member")
    assert where(issue) == (str(path), 8, 20)
    [related] = issue.related
    assert related.file == str(parent())
    assert issue.message.startswith("'corpus:$.name' reads member 'name' of $")
    assert issue.message.endswith(f"(read at {related}); flare/next drops member 'name' here "
                                  f"(drop_members): keep it, or drop or restate what reads it")


TOY_PARENT = """\
flarespec: 1
id: toy/parent
title: A toy parent
applies_to: {given: "record:$.schema", equals: toy-1}
constants:
  field: {key: stats.rate}
shapes:
  record:
    type: object
    members:
      schema: string
      stats: {type: object, members: {rate: number}}
documents:
  record: {loader: json, entry: true, shape: record}
rules:
  - id: toy.rate
    description: The rate is not negative.
    given: "record:${field.key|jsonpath}"
    assert: {range: {min: 0}}
"""


UNHELD = """\
flarespec: 1
id: toy/unheld
title: A member key with no holder
applies_to: {given: "record:$.schema", equals: toy-1}
constants:
  field: {key: stats.rate}
shapes:
  record:
    type: object
    members:
      schema: string
      "${field.key}": number
documents:
  record: {loader: json, entry: true, shape: record}
rules:
  - id: toy.rate
    description: The rate is not negative.
    given: "record:${field.key|jsonpath}"
    assert: {range: {min: 0}}
  - id: toy.other
    description: Another member, undeclared on its own.
    given: "record:$.other"
    assert: {present: true}
"""


def test_a_member_key_with_no_holder_is_one_error_not_one_per_reader(tmp_path):
    """The rule reading stats.rate reads a member the shape lacks only because the key could
    not be declared: one cause, one error (at the key); an unrelated undeclared member is
    still its own error."""
    path = child(tmp_path, UNHELD)
    assert [(issue.code, where(issue)) for issue in errors(path)] == [
        ("spec.document-shape", (str(path), line_of(path, '"${field.key}"'), 7)),
        ("spec.undeclared-member", (str(path), line_of(path, "- id: toy.other"), 5))]


def test_a_constant_override_is_at_the_childs_constant_not_the_parents_rule(tmp_path):
    """The derived field renamed by its constant while the parent's shape spells the name:
    `spec.undeclared-member` was at the parent's rule; it is at the child's `key:`, the
    parent's rule named as context."""
    (tmp_path / "parent.yaml").write_text(TOY_PARENT)
    path = child(tmp_path, textwrap.dedent("""\
        flarespec: 1
        id: toy/child
        title: A toy child
        extends: toy/parent
        applies_to: {given: "record:$.schema", equals: toy-2}
        constants:
          field: {key: stats.speed}
        """))
    [issue] = errors(path)
    assert issue.code == "spec.undeclared-member"
    assert where(issue) == (str(path), 7, 11)
    [related] = issue.related
    assert (related.file, related.line) == (str(tmp_path / "parent.yaml"), 16)
    assert issue.message == (f"'record:$.stats.speed' reads member 'speed' of $.stats, which "
                             f"its shape does not declare (declared: rate) (read at {related})"
                             f"; the value comes from this override of 'field.key'")


# ------------------------------------------------------------------ all at once

ALL_AT_ONCE = HEAD + textwrap.dedent(f"""\
    drop_documents: [request_body]
    drop_rules: [request.sha256.corpus, request.sha256.observation, request.max-tokens]
    extnds: x
    rules:
      - id: toy.schema
        description: A misspelt constant.
        given: "packet:$.schema"
        assert: {{equals: "${{packet_schem}}"}}
      - id: toy.asert
        description: A misspelt key in a rule.
        given: "packet:$.schema"
        asert: {{present: true}}
      - id: toy.kind
        description: A misspelt kind.
        given: "packet:${{nope|jsonpath}}"
        assert: {{equal: 1}}
    """)


def test_an_unknown_constant_a_misspelt_key_and_a_dropped_document_in_one_run(tmp_path):
    """Was: the unknown constant alone; the kept rule reading the dropped document only
    once the constant was fixed, the misspelt kind only once the key was."""
    path = child(tmp_path, ALL_AT_ONCE)
    found = {(issue.code, issue.mark.line, issue.mark.column) for issue in errors(path)}
    drop = line_of(path, "drop_documents:")
    assert found == {
        ("spec.shape", line_of(path, "extnds"), 1),
        ("spec.shape", line_of(path, "asert:"), 5),         # unknown key 'asert'
        ("spec.shape", line_of(path, "id: toy.asert"), 5),  # missing assert / hook
        ("spec.unknown-constant", line_of(path, "packet_schem"), 14),
        ("spec.unknown-constant", line_of(path, "${nope"), 5),
        ("spec.unknown-kind", line_of(path, "equal: 1"), 14),
        ("spec.dropped-document", drop, 18),  # the kept rules reading request_body
    }
    dropped = errors(path, "spec.dropped-document")
    assert {issue.message.split("'")[1] for issue in dropped} == {
        "packet.files.missing-entry", "packet.files.extra-entry", "packet.files.digest",
        "request.stream"}
    # the path still holding ${nope|jsonpath} is not a second error at its line, and the
    # rule the compiler trips over (no assert, no hook) is explained by its shape errors
    assert not errors(path, "spec.path-syntax") and not errors(path, "spec.lint-step-skipped")
    result = run("spec", "lint", path)
    assert result.exit_code == 2
    assert f"{path}:{line_of(path, 'packet_schem')}:14: unknown constant ${{packet_schem}} " \
           f"[spec.unknown-constant]" in result.output.splitlines()


def test_lint_goes_past_an_unknown_constant_to_the_shape_and_name_checks(tmp_path):
    """Resolution's issue does not stop the checks over the compiled spec: a counter
    renamed in one place is reported beside a misspelt constant."""
    path = child(tmp_path, HEAD + "constants:\n"
                 + disagreeing("flare_cached_tokens_total", "flare_prefix_tokens_reused_total")
                 + textwrap.dedent("""\
        rules:
          - id: toy.schema
            description: A misspelt constant.
            given: "packet:$.schema"
            assert: {equals: "${packet_schem}"}
        """))
    assert sorted(issue.code for issue in errors(path)) == \
        ["spec.name-not-required", "spec.unknown-constant"]


# ------------------------------------------------------------------ steps that cannot run

def test_a_check_that_fails_with_nothing_explaining_it_is_said(tmp_path, monkeypatch):
    def broken(resolved):
        raise KeyError("boom")
    monkeypatch.setattr(lint_module, "placeholder_issues", broken)
    clean = child(tmp_path, HEAD)
    [issue] = errors(clean)
    assert (issue.code, issue.mark) == ("spec.lint-step-skipped", None)
    assert issue.message.startswith("the placeholder check not run: it failed on this spec "
                                    "(KeyError: 'boom'), and no error explains why")
    result = run("spec", "lint", clean)
    assert result.exit_code == 2 and "[spec.lint-step-skipped]" in result.output
    # after an error, the broken data explains it: nothing more is said
    broken_spec = child(tmp_path, HEAD + "extnds: x\n")
    assert [i.code for i in errors(broken_spec)] == ["spec.shape"]


def test_a_rule_the_compiler_fails_on_is_said_at_the_rule_and_the_others_compile(
        tmp_path, monkeypatch):
    rule = _Compiler.rule

    def failing(self, source):
        if source.get("id") == "toy.fails":
            raise TypeError("unexpected")
        return rule(self, source)
    monkeypatch.setattr(_Compiler, "rule", failing)
    path = child(tmp_path, HEAD + textwrap.dedent("""\
        rules:
          - id: toy.fails
            description: The compiler fails on it.
            given: "packet:$.schema"
            assert: {present: true}
          - id: toy.kind
            description: A misspelt kind.
            given: "packet:$.schema"
            assert: {equal: 1}
        """))
    found = errors(path)
    assert [(i.code, i.mark.file, i.mark.line) for i in found] == [
        ("spec.unknown-kind", str(path), 14), ("spec.lint-step-skipped", str(path), 7)]
    assert found[1].message.startswith("rule 'toy.fails' not compiled: the compiler failed "
                                       "on it (TypeError: unexpected)")


# ------------------------------------------------------------------ fail closed

def test_loading_for_a_run_still_refuses_what_lint_goes_past(tmp_path):
    path = child(tmp_path, HEAD + textwrap.dedent("""\
        rules:
          - id: toy.schema
            description: A misspelt constant.
            given: "packet:$.schema"
            assert: {equals: "${packet_schem}"}
        """))
    for opener in (open_spec, open_compiled):
        with pytest.raises(SpecInvalid) as refused:
            opener(path)
        assert [i.code for i in refused.value.issues] == ["spec.unknown-constant"]
    library, spec_file = SpecLibrary.for_file(path)
    resolved = resolve(spec_file, library, lenient=True)
    assert [i.code for i in resolved.issues] == ["spec.unknown-constant"]
    with pytest.raises(SpecInvalid) as refused:
        compile_spec(resolved)
    assert refused.value.issues == resolved.issues
    shown = run("spec", "show", path)
    assert shown.exit_code == 2 and "[spec.unknown-constant]" in shown.output
