"""The example GitHub Actions workflow and the pre-commit hooks call flarespec correctly:
they parse, and every flarespec command line in them is accepted by the CLI's parser."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from flarespec.cli import main
from git_repo import revision_branch

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs" / "examples" / "spec-review.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def flarespec_lines(script: str) -> list[str]:
    """Every flarespec command line of a shell script, with GitHub expressions and command
    substitutions replaced by plausible words."""
    script = re.sub(r"\$\{\{[^}]*\}\}", "main", script)
    script = re.sub(r"\$\([^)]*\)", "specs/flare/bce032c0.yaml", script)
    lines = []
    for line in script.splitlines():
        line = line.split(">")[0].strip()  # redirections are the shell's
        if line.startswith("flarespec "):
            lines.append(line)
    return lines


def parses(argv: list[str]) -> None:
    """The argv reaches a leaf command whose parser accepts it (options, choices)."""
    command: click.Command = main
    while isinstance(command, click.Group):
        name, argv = argv[0], argv[1:]
        command = command.get_command(click.Context(command), name)
    command.make_context(command.name, list(argv))


def workflow_commands() -> list[str]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["spec-review"]["steps"]
    return [line for step in steps for line in flarespec_lines(step.get("run", ""))]


def test_the_workflow_parses_and_runs_the_review_commands():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key on as true
    assert trigger == {"pull_request": {"paths": ["specs/**"]}}
    commands = " | ".join(workflow_commands())
    for expected in ("spec lint --format github", "spec test --format github",
                     "spec diff --base origin/main --format markdown",
                     "spec diff --base origin/main --format github",
                     "--fail-on loosening --ack .github/spec-acks.yaml"):
        assert expected in commands


@pytest.mark.parametrize("line", workflow_commands())
def test_every_flarespec_command_of_the_workflow_exists(line):
    parses(shlex.split(line)[1:])


def test_the_pre_commit_hooks_name_existing_commands():
    hooks = yaml.safe_load(HOOKS.read_text())
    assert [hook["id"] for hook in hooks] == ["flarespec-spec-lint", "flarespec-spec-test"]
    for hook in hooks:
        assert re.fullmatch(hook["files"], "specs/flare/bce032c0.yaml")
        parses(shlex.split(hook["entry"])[1:] + ["specs/flare/bce032c0.yaml"])


def test_a_misspelt_option_would_be_caught():
    with pytest.raises(click.UsageError):
        parses(["spec", "diff", "--fail-onn", "loosening", "a", "b"])
    with pytest.raises(click.BadParameter):
        parses(["spec", "diff", "--format", "html", "a", "b"])


# --------------------------------------------------------------------------- the gate, run

DROPPED = ("packet.files.digest", "observation.events.match-sse", "snapshot.delta.completed",
           "measurements.observation.matches-sidecar")


def gate_command() -> list[str]:
    """The workflow's gate step, as the runner would run it for a pull request into main."""
    (line,) = [line for line in workflow_commands() if "--fail-on" in line]
    return shlex.split(line)[1:]


@pytest.fixture
def pull_request(tmp_path, monkeypatch) -> Path:
    """A branch adding a child spec for a new revision that drops four core rules
    (git_repo.revision_branch)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)
    revision_branch(repo, DROPPED)
    return repo


def test_the_workflow_gate_fails_on_a_new_child_that_drops_rules_until_acknowledged(
        pull_request):
    command = gate_command()
    assert command[:4] == ["spec", "diff", "--base", "origin/main"]
    failed = CliRunner().invoke(main, command, catch_exceptions=False)
    assert failed.exit_code == 1, failed.output
    out = failed.stdout
    assert "spec diff flare/bce032c0 -> flare/c0ffee15" in out  # against its parent
    for rule in DROPPED:
        assert f"loosening   rule {rule}: removed" in out
    assert "spec gate --fail-on loosening: FAILED, 4 unacknowledged loosening changes " \
        "(acknowledgements .github/spec-acks.yaml: 0 acknowledged)" in out
    as_json = json.loads(CliRunner().invoke(main, command + ["--format", "json"]).stdout)
    hits = as_json["gate"]["changes"]
    assert sorted(c["subject"] for c in hits) == sorted(f"rule {rule}" for rule in DROPPED)
    # each annotated where the child drops it, in the file the pull request adds
    assert {(c["file"], c["class"]) for c in hits} == {("specs/flare/c0ffee15.yaml",
                                                       "loosening")}
    acks = "".join(f"- fingerprint: {c['fingerprint']}\n  reason: {c['subject']} is not "
                   f"kept from revision c0ffee15 on (test)\n" for c in hits)
    (pull_request / ".github" / "spec-acks.yaml").write_text(acks)
    passed = CliRunner().invoke(main, command, catch_exceptions=False)
    assert passed.exit_code == 0, passed.output
    assert "spec gate --fail-on loosening: passed, no unacknowledged loosening change " \
        "(acknowledgements .github/spec-acks.yaml: 4 acknowledged)" in passed.stdout
    assert "0 loosening" in passed.stdout and "(4 acknowledged)" in passed.stdout
