"""docs/editing-specs.md stays true: its worked example (a revision that renames a counter,
doubles the shared prefix, renames the derived field, inserts a group kind, drops
request.json and renames a rule) writes each new name and number once, lints, scaffolds,
writes, validates, rejects the old revision and broken new packets with the right rule ids,
passes its own cases, and every command line the page shows exists; the outputs the page
shows (lint lines, rejection and case counts, the diff's rows by fingerprint, the gate's
count) are those the commands give."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import click
import pytest
import yaml
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
DERIVED, OLD_DERIVED = "prefill_tokens_per_second", "http_prefill_tokens_per_second"
INSERTED = "ttft-1024"
CHILD = "specs/flare/c0ffee15.yaml"  # where the page puts the child
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


def doc_block(holding: str, after: str = "") -> str:
    """The text of the page's first fenced block that holds ``holding`` (below ``after``)."""
    text = DOC.read_text()
    start = text.index(after)
    return next(block.group(1) for block in re.finditer(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)
                if block.start() >= start and holding in block.group(1))


def test_the_example_writes_each_new_name_and_number_once():
    """The revision's constants are dotted names of the members that change, and the
    matrix (restated to insert a row) keeps the parent's expressions for the prefix rows;
    idle_metrics (which reads counters) and the rest of derived_field are not restated."""
    text = "\n".join(line for line in EXAMPLE.read_text().splitlines()
                     if not line.lstrip().startswith("#"))  # what the spec says, no comment
    constants = yaml.safe_load(text)["constants"]
    assert list(constants) == ["source", "prefix.tokens", "counters.reused_tokens",
                               "derived_field.key", "group_matrix"]
    for once in (DERIVED, RENAMED_COUNTER, "8192", INSERTED):
        assert text.count(once) == 1, once
    for restated in ("4608", "8704", OLD_DERIVED, "flare_prompt_tokens_reused_total"):
        assert restated not in text, restated
    prefix_rows = [row for row in constants["group_matrix"] if row["kind"].startswith("prefix")]
    assert prefix_rows and all("${" in str(row["prompt_token_count"]) for row in prefix_rows)


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
    corpus = json.loads((baseline.parent / "corpus.json").read_text())
    groups = {group["id"]: group["requests"] for group in corpus["groups"]}
    assert list(groups).index(f"r0.{INSERTED}") == list(groups).index("r0.ttft-512") + 1
    assert [r["prompt_token_count"] for r in groups[f"r0.{INSERTED}"]] == [1024] * 3
    assert groups["r0.prefix-seed"][0]["prompt_token_count"] == 8704  # computed from prefix
    measurements = (baseline.parent / "run" / "measurements.json").read_text()
    assert f'"{DERIVED}"' in measurements and OLD_DERIVED not in measurements
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
    # closed, the two hooks that read it; the inserted group is missing; the old derived
    # field is no longer the measurements copy's one allowed extra member
    assert rules_of(outcome) == {
        "packet.source", "packet.files.extra-entry", "corpus.groups.matrix",
        "corpus.request.prompt-token-count", "corpus.request.prefix-seed",
        "observation.reuse.native", "snapshot.sample.exactly-one",
        "snapshot.delta.reused-tokens", "snapshot.counters.monotonic",
        "measurements.observation.matches-sidecar"}
    shown = doc_block("flarespec measure: REJECTED")
    assert shown.splitlines()[0] == (
        f"flarespec measure: REJECTED  {len(outcome.receipt['violations'])} violations of "
        f"{len(rules_of(outcome))} rules; no metric exported")
    listed = re.findall(r"^  \[packet\] ([a-z.-]+) \(", shown, re.M)
    assert len(listed) >= 6 and set(listed) <= rules_of(outcome)
    assert measure(old, old, tmp_path / "own.json").exit_code == 0  # it still selects its spec


def test_a_wrong_delta_of_the_renamed_counter_is_rejected(tmp_path, new_packet):
    packet = broken(tmp_path, new_packet, lambda root: prom_set(
        root, "run/metrics/r0.prefix-hit.after.prom", RENAMED_COUNTER, 16383))
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=EXAMPLE)
    assert outcome.exit_code == 2 and rules_of(outcome) == {"snapshot.delta.reused-tokens"}


def test_a_wrong_derived_value_under_the_new_name_is_rejected(tmp_path, new_packet):
    packet = broken(tmp_path, new_packet, lambda root: set_json(
        root, "run/measurements.json",
        f"$.groups[?@.id=='r0.ttft-4096'].observations[0].analysis.{DERIVED}", 1.0))
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=EXAMPLE)
    assert outcome.exit_code == 2 and rules_of(outcome) == {"measurements.observation.derived-value"}


def test_the_inserted_groups_prompt_size_is_checked(tmp_path, new_packet):
    packet = broken(tmp_path, new_packet, lambda root: set_json(
        root, "corpus.json", f"$.groups[?@.id=='r0.{INSERTED}'].requests[0].prompt_token_count",
        512))
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=EXAMPLE)
    # the corpus row, and what the sidecar and the measurements copy record of it
    assert rules_of(outcome) == {"corpus.request.prompt-token-count", "measurements.corpus.sha256",
                                 "observation.identity", "observation.usage.prompt-tokens"}


def test_the_renamed_rule_fires_under_its_new_id(tmp_path, new_packet):
    packet = broken(tmp_path, new_packet, lambda root: set_json(
        root, "run/r0.ttft-512/r0.ttft-512.q0/observation.json", "$.error", "connection reset"))
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=EXAMPLE)
    assert rules_of(outcome) == {"observation.no-client-error",
                                 "measurements.observation.matches-sidecar"}


def counts(output: str) -> str:
    """The ``flare/c0ffee15: N passed, 0 failed, M not applicable`` of a spec test run."""
    return re.search(r"^flare/c0ffee15: (\d+ passed, \d+ failed, \d+ not applicable)",
                     output, re.M).group(1)


def test_spec_test_is_green_for_the_whole_inherited_catalog():
    """What the doc tells a newcomer to run before the pull request: every inherited case,
    expressed in the child's constants, passes or is not applicable (~40 s), as many as
    the page says."""
    result = invoke("spec", "test", EXAMPLE)
    assert result.exit_code == 0, result.output
    assert " 0 failed" in result.output and "FAIL" not in result.output
    assert counts(result.output) == counts(doc_block("flare/c0ffee15: ", after="catalog ends with"))


def test_the_request_cases_are_as_the_page_shows():
    result = invoke("spec", "test", EXAMPLE, "-k", "request", "-q")
    assert result.exit_code == 0, result.output
    shown = doc_block("n/a  flare/c0ffee15 missing-request-json")
    assert counts(result.output) == counts(shown)
    for line in shown.splitlines():
        if line.startswith("n/a "):
            assert line in result.output.splitlines()
    assert ("n/a  flare/c0ffee15 missing-request-json: document request_body is dropped"
            in result.output)


# ------------------------------------------------------------ the page's lint and diff

def draft_text() -> str:
    """The example as it is while edited: a draft, as `spec new` writes it (steps 2-5)."""
    from flarespec.authoring.scaffold import scaffold
    from flarespec.compiler.open import open_spec

    scaffolded = scaffold(open_spec(PARENT), REVISION)
    released = scaffolded.replace("\n".join(DRAFT_LINES) + "\n", "")
    cut = lambda text: text[:text.index(SCAFFOLD_HINTS)].rstrip() + "\n"  # noqa: E731
    example = EXAMPLE.read_text().split("\n", 1)[1]
    assert example.startswith(cut(released))
    return EXAMPLE.read_text().split("\n", 1)[0] + "\n" + \
        example.replace(cut(released), cut(scaffolded), 1)


@pytest.fixture
def checkout(tmp_path, monkeypatch) -> Path:
    """A directory holding the draft child where the page has it, as the working dir."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs" / "flare").mkdir(parents=True)
    return tmp_path


def test_lint_shows_the_dropped_documents_readers_at_the_drop(checkout):
    """Step 2's lint, after drop_documents and drop_members and before the rules: each line
    the page shows, up to the parent's place (trimmed there), is one lint gives."""
    text = draft_text()
    (checkout / CHILD).write_text(text[:text.index("\ndrop_rules:") + 1])
    result = invoke("spec", "lint", CHILD)
    assert result.exit_code == 2
    output = result.output.replace(f"{checkout}/", "")  # lint names files by absolute path
    shown = doc_block("[spec.dropped-document]").splitlines()
    assert shown[0] == output.splitlines()[0]  # the summary line
    for line in shown[1:]:
        if line != "...":
            assert line.split(" (read at ")[0] in output, line


def test_the_diff_rows_are_at_the_lines_the_page_shows(checkout):
    """Step 5: the summary and, by fingerprint, each row's class and line; step 6: the
    gate's count of loosenings (the released file: the same diff without the draft row)."""
    (checkout / CHILD).write_text(draft_text())
    result = invoke("spec", "diff", PARENT, CHILD, "--format", "json")
    assert result.exit_code == 0, result.output
    changes = {c["fingerprint"]: c for c in json.loads(result.stdout)["specs"][0]["changes"]}
    shown = doc_block("#### spec diff flare/bce032c0 -> flare/c0ffee15")
    classes = [c["class"] for c in changes.values()]
    summary = ", ".join(f"{classes.count(k)} {k}"
                        for k in ("tightening", "loosening", "review", "neutral"))
    assert f"flare/bce032c0 -> flare/c0ffee15: {summary}\n" in shown
    rows = re.findall(r"^\| (\w+) \| `specs/flare/c0ffee15\.yaml:(\d+)` \|.*\[([0-9a-f]{16})\] \|$",
                      shown, re.M)
    assert len(rows) >= 10
    for klass, line, fingerprint in rows:
        assert (changes[fingerprint]["class"], changes[fingerprint]["line"]) == (klass, int(line))
    gate = doc_block("spec gate --fail-on loosening: FAILED")
    assert f"FAILED, {classes.count('loosening')} unacknowledged loosening changes" in gate


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
