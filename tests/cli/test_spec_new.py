"""`flarespec spec new`: a child scaffold that pins the new revision, is a draft and lints
without an error as written (its one warning: the draft); generic (a toy spec family in
tmp_path), plus the bundled spec."""

from __future__ import annotations

import yaml
from click.testing import CliRunner

from flarespec.cli import main
from flarespec.authoring.lint import lint

OLD, NEW = "a" * 40, "b" * 40
PARENT = f"""\
flarespec: 1
id: shop/v1
title: Shop export, release {OLD}
description: The export of release {OLD}.
constants:
  release:
    name: shop
    revision: {OLD}
    modules: [cart, till]
applies_to: {{given: "index:$.release.revision", equals: "${{release.revision}}"}}
shapes:
  index: {{type: object, members: {{release: {{type: object, members: {{revision: string}}}}}}}}
documents:
  index: {{loader: json, entry: true, shape: index}}
rules:
  - id: shop.release
    description: The export names the pinned release.
    given: "index:$.release"
    assert: {{equals: "${{release}}"}}
"""


def invoke(*args):
    return CliRunner().invoke(main, ["spec", "new", *map(str, args)])


def parent(tmp_path, text: str = PARENT):
    path = tmp_path / "v1.yaml"  # beside the child, named after the parent id's last segment
    path.write_text(text)
    return path


def errors_and_warnings(path) -> list[str]:
    [result] = lint([str(path)])
    return [issue.code for issue in result.issues]


def toy_issues(path) -> list[str]:
    """Lint codes, but for the warning that a toy family's applies_to reads another input
    than the bundled specs' (lint cannot decide whether they exclude each other)."""
    return [code for code in errors_and_warnings(path) if code != "spec.applies-to-undecided"]


DRAFTED = ["spec.draft"]  # a scaffold's one lint issue: the warning that it is a draft


def test_scaffold_pins_the_revision_restates_the_constant_and_lints_clean(tmp_path):
    out = tmp_path / "b.yaml"
    result = invoke("--from", parent(tmp_path), "--revision", NEW, "--out", out)
    assert result.exit_code == 0, result.output
    child = yaml.safe_load(out.read_text())
    assert child["extends"] == "shop/v1" and child["id"] == "shop/bbbbbbbb"
    assert child["applies_to"] == {"given": "index:$.release.revision",
                                   "equals": "${release.revision}"}
    assert child["constants"] == {"release": {"name": "shop", "revision": NEW,
                                              "modules": ["cart", "till"]}}
    assert child["title"] == f"Shop export, release {NEW}"
    assert child["description"] == f"The export of release {NEW}."
    assert toy_issues(out) == DRAFTED


def test_comments_point_at_what_usually_changes_and_the_next_steps(tmp_path):
    text = invoke("--from", parent(tmp_path), "--revision", NEW).output
    for word in ("drop_documents:", "drop_rules:", "renamed_from:", "# rules:",
                 "flarespec spec lint", "flarespec spec test", "flarespec spec diff shop/v1"):
        assert word in text, word


def test_a_literal_applies_to_gets_the_new_revision_and_an_id_can_be_given(tmp_path):
    literal = PARENT.replace('equals: "${release.revision}"', f'equals: "{OLD}"')
    out = tmp_path / "b.yaml"
    result = invoke("--from", parent(tmp_path, literal), "--revision", NEW, "--id", "shop/v2",
                    "--out", out)
    assert result.exit_code == 0, result.output
    child = yaml.safe_load(out.read_text())
    assert child["id"] == "shop/v2" and child["applies_to"]["equals"] == NEW
    assert "constants" not in child
    assert toy_issues(out) == DRAFTED


def test_the_parents_own_revision_is_refused(tmp_path):
    result = invoke("--from", parent(tmp_path), "--revision", OLD)
    assert result.exit_code == 2
    assert "[spec.scaffold]" in result.output and "already applies" in result.output


def test_a_revision_that_is_not_one_word_is_refused(tmp_path):
    for revision in ("", "two words", "a/b"):
        result = invoke("--from", parent(tmp_path), "--revision", revision)
        assert result.exit_code == 2 and "[spec.scaffold]" in result.output, revision


def test_a_parent_without_applies_to_is_refused(tmp_path):
    unpinned = PARENT.replace('applies_to: {given: "index:$.release.revision", '
                              'equals: "${release.revision}"}\n', "")
    result = invoke("--from", parent(tmp_path, unpinned), "--revision", NEW)
    assert result.exit_code == 2 and "[spec.scaffold]" in result.output


def test_an_existing_out_file_is_kept_unless_forced(tmp_path):
    out = tmp_path / "b.yaml"
    out.write_text("keep me\n")
    refused = invoke("--from", parent(tmp_path), "--revision", NEW, "--out", out)
    assert refused.exit_code == 2 and "--force" in refused.output
    assert out.read_text() == "keep me\n"
    forced = invoke("--from", parent(tmp_path), "--revision", NEW, "--out", out, "--force")
    assert forced.exit_code == 0 and "extends: shop/v1" in out.read_text()


def test_an_unknown_parent_is_a_usage_error_without_traceback(tmp_path):
    result = invoke("--from", "shop/none", "--revision", NEW)
    assert result.exit_code == 2 and "[spec.unknown]" in result.output
    assert "Traceback" not in result.output


def test_the_bundled_spec_scaffolds_a_child_that_lints_clean(tmp_path):
    out = tmp_path / "child.yaml"
    assert invoke("--from", "flare/bce032c0", "--revision", NEW, "--out", out).exit_code == 0
    assert errors_and_warnings(out) == DRAFTED


def test_the_scaffold_is_a_draft_until_its_lines_are_removed(tmp_path):
    """Issue 25: ``spec new`` writes ``draft: true`` with a comment saying when to remove
    it (docs/editing-specs.md, step 1); without those lines the child is live and lints
    clean."""
    from flarespec.authoring.scaffold import DRAFT_LINES

    out = tmp_path / "b.yaml"
    assert invoke("--from", parent(tmp_path), "--revision", NEW, "--out", out).exit_code == 0
    text = out.read_text()
    assert yaml.safe_load(text)["draft"] is True
    assert "Remove these lines when the revision is released" in text
    assert "\n".join(DRAFT_LINES) + "\n" in text
    out.write_text(text.replace("\n".join(DRAFT_LINES) + "\n", ""))
    assert "draft" not in yaml.safe_load(out.read_text()) and toy_issues(out) == []


def test_the_first_line_names_the_shipped_spec_schema_for_editors(tmp_path):
    """Relative to the --out file (the same in every clone of a checkout); on stdout, where
    no file is known, the absolute file:// URI of this machine's copy. The loader and lint
    read it as the YAML comment it is."""
    from flarespec.authoring.scaffold import SCHEMA_LINE
    from flarespec.authoring.schema import shipped_path

    out = tmp_path / "specs" / "shop" / "b.yaml"
    out.parent.mkdir(parents=True)
    source = parent(out.parent)
    assert invoke("--from", source, "--revision", NEW, "--out", out).exit_code == 0
    first = out.read_text().splitlines()[0]
    assert first.startswith(SCHEMA_LINE) and not first[len(SCHEMA_LINE):].startswith("/")
    assert (out.parent / first[len(SCHEMA_LINE):]).resolve() == shipped_path("spec")
    assert toy_issues(out) == DRAFTED
    printed = invoke("--from", source, "--revision", NEW).output.splitlines()[0]
    assert printed == SCHEMA_LINE + shipped_path("spec").as_uri()
