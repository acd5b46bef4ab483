"""docs/examples/code-scanning.yml, tested like the spec-review workflow: it parses, every
flarespec command in it exists with those options, and its SARIF steps, run on a real
branch (a child spec that drops rules), write SARIF the official schema accepts, with
files relative to the checkout that exist there, and fail where they should."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from flarespec.cli import main
from git_repo import revision_branch

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs" / "examples" / "code-scanning.yml"
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text())


def steps() -> list[dict]:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["flarespec"]["steps"]


def commands(files: str = "specs/flare/bce032c0.yaml") -> list[tuple[list[str], str | None]]:
    """Each flarespec command of the workflow (argv, the file its stdout goes to)."""
    found = []
    for step in steps():
        script = re.sub(r"\$\{\{[^}]*\}\}", "main", step.get("run", ""))
        script = re.sub(r"\$\([^)]*\)", files, script)
        for line in script.splitlines():
            line = line.split("||")[0].strip()
            if line.startswith("flarespec "):
                command, _, target = line.partition(">")
                found.append((shlex.split(command)[1:], target.strip() or None))
    return found


def test_the_workflow_uploads_each_commands_sarif_with_its_own_category():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert workflow["permissions"]["security-events"] == "write"
    uploads = [s for s in steps() if str(s.get("uses", "")).startswith(
        "github/codeql-action/upload-sarif@")]
    assert {s["with"]["sarif_file"] for s in uploads} == {"lint.sarif", "test.sarif", "diff.sarif"}
    assert len({s["with"]["category"] for s in uploads}) == len(uploads)
    assert all(s["if"].startswith("always()") for s in uploads)
    diff_step = next(s for s in steps() if "spec diff" in s.get("run", ""))
    assert "[ -s diff.sarif ] || rm -f diff.sarif" in diff_step["run"]
    assert all("--format" in argv and argv[argv.index("--format") + 1] == "sarif"
               for argv, _ in commands())


@pytest.mark.parametrize("argv", [argv for argv, _ in commands()], ids=" ".join)
def test_every_flarespec_command_of_the_workflow_exists(argv):
    command: click.Command = main
    while isinstance(command, click.Group):
        name, argv = argv[0], argv[1:]
        command = command.get_command(click.Context(command), name)
    command.make_context(command.name, list(argv))


@pytest.fixture
def branch(tmp_path, monkeypatch) -> Path:
    """A branch adding a child spec that drops a rule (git_repo.revision_branch)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)
    revision_branch(repo, ("packet.files.digest",))
    return repo


def _run_steps(files: str) -> dict:
    """Run the workflow's lint and diff commands as its steps do: command -> (exit code,
    stdout), the stdout written where the step redirects it."""
    ran = {}
    for argv, target in commands(files):
        if argv[:2] == ["spec", "test"]:
            continue  # the bundled cases: tests/output/test_formats.py runs a failing one
        result = CliRunner().invoke(main, argv, catch_exceptions=False)
        Path(target).write_text(result.stdout)
        ran[argv[1]] = (result.exit_code, result.stdout, result.stderr)
    assert set(ran) == {"lint", "diff"}
    return ran


def _check(log: dict, repo: Path) -> list[dict]:
    jsonschema.validators.validator_for(SCHEMA)(SCHEMA).validate(log)
    results = log["runs"][0]["results"]
    for result in results:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert (repo / uri).is_file(), uri  # relative to the checkout, and there
    return results


def test_the_diff_step_annotates_a_dropped_rule_where_the_child_drops_it(branch):
    ran = _run_steps("specs/flare/bce032c0.yaml specs/flare/c0ffee15.yaml")
    assert ran["lint"][0] == 0 and ran["diff"][0] == 1  # lint clean; the gate fails
    _check(json.loads(ran["lint"][1]), branch)
    dropped = [r for r in _check(json.loads(ran["diff"][1]), branch)
               if "packet.files.digest" in r["message"]["text"] and r["level"] == "error"]
    assert dropped and dropped[0]["locations"][0]["physicalLocation"]["artifactLocation"][
        "uri"] == "specs/flare/c0ffee15.yaml"


def test_a_spec_that_does_not_lint_is_a_lint_alert_and_stops_the_diff(branch):
    Path("specs/broken.yaml").write_text("flarespec: 1\nid: toy/broken\ntitle: t\nbogus: 1\n")
    ran = _run_steps("specs/flare/bce032c0.yaml specs/flare/c0ffee15.yaml specs/broken.yaml")
    assert ran["lint"][0] == 2
    errors = [r for r in _check(json.loads(ran["lint"][1]), branch) if r["level"] == "error"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
            for r in errors] == [("spec.shape", "specs/broken.yaml"),
                                 ("spec.entry", "specs/broken.yaml")]
    code, stdout, stderr = ran["diff"]
    assert code == 2 and stdout == "" and "bogus" in stderr  # the step removes the empty file
