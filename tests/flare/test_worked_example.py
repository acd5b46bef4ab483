"""docs/editing-specs.md stays true: its worked example (a revision that renames a counter,
doubles the shared prefix, drops request.json and renames a rule) lints, scaffolds, writes,
validates, rejects the old revision and broken new packets with the right rule ids, passes
its own cases, and every command line the page shows exists."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from flarespec.adapter.commands import measure
from flarespec.cli import main
from flarespec.fixtures.mutations import prom_set, refresh_digests, set_json
from flarespec.fixtures.writers import write_packet, write_pair
from flarespec.authoring.lint import lint
from flarespec.authoring.scaffold import DRAFT_LINES, SCHEMA_LINE
from flarespec.authoring.schema import shipped_path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "editing-specs.md"
EXAMPLE = ROOT / "docs" / "examples" / "flare-next" / "flare-next.yaml"
PARENT, REVISION = "flare/bce032c0", "c0ffee15a1b2c3d4e5f60718293a4b5c6d7e8f90"
RENAMED_COUNTER = "flare_prefix_tokens_reused_total"
# the scaffold's own text ends where its commented hints begin; the example edits from there
SCAFFOLD_HINTS = "# Documents the revision no longer keeps"
OUTPUT = re.compile(r"flarespec \S+: ")  # a command's own output line, e.g. "flarespec measure: PASS"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def rules_of(outcome) -> set[str]:
    return {v["rule"] for v in outcome.receipt["violations"]}


@pytest.fixture(scope="module")
def new_packet(tmp_path_factory) -> Path:
    return write_packet(tmp_path_factory.mktemp("new") / "packet", EXAMPLE)


def broken(tmp_path, packet: Path, mutate) -> Path:
    root = tmp_path / "broken"
    shutil.copytree(packet.parent, root)
    mutate(root)
    refresh_digests(root)
    return root / packet.name


def test_the_example_lints_without_any_issue():
    [result] = lint([str(EXAMPLE)])
    assert result.issues == [] and result.spec_id == "flare/c0ffee15"


def test_spec_new_writes_the_start_of_the_example_and_it_lints_clean(tmp_path):
    out = tmp_path / "c0ffee15.yaml"
    assert invoke("spec", "new", "--from", PARENT, "--revision", REVISION, "--out", out).exit_code == 0
    schema_line, scaffold = out.read_text().split("\n", 1)
    example_line, example = EXAMPLE.read_text().split("\n", 1)
    # the scaffold is a draft; the example is the released spec: the draft lines removed
    draft = "\n".join(DRAFT_LINES) + "\n"
    assert draft in scaffold
    released = scaffold.replace(draft, "")
    assert example.startswith(released[:released.index(SCAFFOLD_HINTS)].rstrip() + "\n")
    # the first line names the shipped spec schema relative to each file (authoring/scaffold.py)
    for line, directory in ((schema_line, out.parent), (example_line, EXAMPLE.parent)):
        assert line.startswith(SCHEMA_LINE)
        assert (directory / line[len(SCHEMA_LINE):]).resolve() == shipped_path("spec")
    [result] = lint([str(out)])
    assert [issue.code for issue in result.issues] == ["spec.draft"]  # its one warning


def test_the_writer_writes_valid_packets_for_it(tmp_path):
    baseline, candidate = write_pair(tmp_path / "pair", EXAMPLE)
    assert not list(baseline.parent.rglob("request.json"))  # the document is dropped
    outcome = measure(baseline, candidate, tmp_path / "r.json", spec_path=EXAMPLE)
    assert outcome.exit_code == 0, outcome.receipt["violations"][:5]
    result = invoke("measure", "--spec", EXAMPLE, "--packet", baseline, "--peer", candidate,
                    "--output", tmp_path / "cli.json")
    assert result.exit_code == 0 and "PASS" in result.output


def test_the_old_revisions_packet_is_rejected(tmp_path):
    old = write_packet(tmp_path / "old", PARENT)
    outcome = measure(old, old, tmp_path / "r.json", spec_path=EXAMPLE)
    assert outcome.exit_code == 2
    # the renamed counter is missing from the old snapshots: its sample rule and, failing
    # closed, the two hooks that read it
    assert rules_of(outcome) == {
        "packet.source", "packet.files.extra-entry", "corpus.request.prompt-token-count",
        "corpus.request.prefix-seed", "observation.reuse.native", "snapshot.sample.exactly-one",
        "snapshot.delta.reused-tokens", "snapshot.counters.monotonic"}
    assert measure(old, old, tmp_path / "own.json").exit_code == 0  # it still selects its spec


def test_a_wrong_delta_of_the_renamed_counter_is_rejected(tmp_path, new_packet):
    packet = broken(tmp_path, new_packet, lambda root: prom_set(
        root, "run/metrics/r0.prefix-hit.after.prom", RENAMED_COUNTER, 16383))
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=EXAMPLE)
    assert outcome.exit_code == 2 and rules_of(outcome) == {"snapshot.delta.reused-tokens"}


def test_the_renamed_rule_fires_under_its_new_id(tmp_path, new_packet):
    packet = broken(tmp_path, new_packet, lambda root: set_json(
        root, "run/r0.ttft-512/r0.ttft-512.q0/observation.json", "$.error", "connection reset"))
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=EXAMPLE)
    assert rules_of(outcome) == {"observation.no-client-error",
                                 "measurements.observation.matches-sidecar"}


def test_spec_test_is_green_for_the_whole_inherited_catalog():
    """What the doc tells a newcomer to run before the pull request: every inherited case,
    expressed in the child's constants, passes or is not applicable (~40 s)."""
    result = invoke("spec", "test", EXAMPLE)
    assert result.exit_code == 0, result.output
    assert " 0 failed" in result.output and "FAIL" not in result.output


def test_a_case_of_the_dropped_document_is_not_applicable():
    result = invoke("spec", "test", EXAMPLE, "-k", "missing-request-json")
    assert result.exit_code == 0, result.output
    assert ("n/a  flare/c0ffee15 missing-request-json: document request_body is dropped"
            in result.output)


def documented_commands() -> list[list[str]]:
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", DOC.read_text(), re.M | re.S)
    return [shlex.split(line) for block in blocks for line in block.splitlines()
            if line.startswith("flarespec ") and not OUTPUT.match(line)]


def test_every_documented_command_line_parses(tmp_path, monkeypatch):
    """Each line resolves to a real subcommand whose options and arguments click accepts
    (run where the page's files exist, since some options check their files)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs" / "flare").mkdir(parents=True)
    shutil.copy(EXAMPLE, tmp_path / "specs" / "flare" / "c0ffee15.yaml")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "spec-acks.yaml").write_text("[]\n")
    commands = documented_commands()
    assert len(commands) >= 10
    for argv in commands:
        parse(argv)


def parse(argv: list[str]) -> None:
    """Resolve the subcommand path, then let click parse (and check) the rest; a wrong
    option, choice or missing argument raises a click usage error."""
    command, args, ctx, name = main, argv[1:], None, "flarespec"
    while isinstance(command, click.Group):
        ctx = click.Context(command, info_name=name, parent=ctx)
        name, command, args = command.resolve_command(ctx, args)
    command.make_context(name, args, parent=ctx)
