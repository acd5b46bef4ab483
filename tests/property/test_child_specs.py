"""A correct child spec just works; a wrong one is told where, in its own file (issue 25).

For every generated child of the bundled Flare spec (child_specs.py: dropped documents,
rules and members, constants changed within their shapes, added members, inserted and
removed matrix rows, renamed counters and derived fields):

- if ``spec lint`` finds no error, the spec's own writer's pair passes ``measure --spec
  CHILD`` with a metric, and every inherited valid case passes ``spec test CHILD``;
- if it finds errors, every error is located in the child's file (the file the author
  edited), never only in the parent's.

Bounded for CI (the "ci" hypothesis profile: derandomized, a fixed number of examples);
each failure found once is pinned below with ``@example`` so it stays a regression case.
"""

from __future__ import annotations

from hypothesis import example, given, settings

from flarespec.adapter.commands import measure
from flarespec.authoring.lint import lint_one
from flarespec.fixtures.writers import write_pair
from flarespec.compiler.open import open_compiled

from child_specs import child_spec, edits
from cli_run import run

# generated examples besides the pinned ones (each lints, writes a pair, measures it and runs
# the valid cases: about 5 s): 4 under the "ci" profile, 125 under "thorough"
EXAMPLES = max(4, settings.default.max_examples // 8)


def _check(tmp_path_factory, flare_constants, chosen) -> None:
    directory = tmp_path_factory.mktemp("child")
    path = directory / "child.yaml"
    path.write_text(child_spec(flare_constants, chosen))
    result = lint_one(str(path))
    if result.errors:
        elsewhere = [str(issue) for issue in result.errors
                     if issue.mark is None or issue.mark.file != str(path)]
        assert not elsewhere, f"edits {chosen}: errors not located in the child:\n" + \
            "\n".join(elsewhere)
        return
    spec = open_compiled(path)
    baseline, candidate = write_pair(directory / "pair", spec)
    outcome = measure(baseline, candidate, directory / "receipt.json", spec_path=path)
    assert outcome.exit_code == 0, (chosen, [
        (v["rule"], v.get("message")) for v in outcome.receipt["violations"][:5]])
    assert outcome.receipt["metrics"], chosen
    report_path = directory / "cases.json"
    cases = run("spec", "test", path, "-k", "valid-", "-q", "--format", "json",
                "--output", report_path)
    assert cases.exit_code == 0, (chosen, cases.output[-3000:])


@settings(max_examples=EXAMPLES)
@given(chosen=edits())
@example(chosen=(("drop_request_body", False),))
@example(chosen=(("drop_request_body", True),))
@example(chosen=(("rename_counter", "counters"),))
@example(chosen=(("rename_counter", "idle_metrics"),))
@example(chosen=(("rename_derived_field", "analysis.prefill_tokens_per_second_v2"),))
@example(chosen=(("insert_kind", 2, 3), ("prefix_tokens", 2048, True)))
@example(chosen=(("prefix_tokens", 2048, False),))
@example(chosen=(("add_member", "memory_report", True),))
@example(chosen=(("add_member", "memory_report", False),))
def test_a_child_that_lints_clean_works_and_one_that_does_not_is_told_where(
        tmp_path_factory, flare_constants, chosen):
    _check(tmp_path_factory, flare_constants, chosen)
