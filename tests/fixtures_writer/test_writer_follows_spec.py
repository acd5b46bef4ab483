"""Issue 25: the writer follows the spec's shapes, and refuses a spec that does not lint.

A child that stops keeping request bodies (``drop_documents: [request_body]``, the rules
reading them dropped, the manifest rules replaced) but keeps the inherited shapes used to
get packets without ``request_sha256`` that its own spec rejected (69 violations); the
writer now writes what the shapes require and removes what ``drop_members`` drops. Where the
writer cannot fill a shape, ``spec lint`` says so at the member's line; ``fixture write``
lints first and writes nothing for a spec with lint errors.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from flarespec.authoring.lint import lint
from flarespec.cli import main
from flarespec.engine.shapes import DROPPED
from flarespec.fixtures.writers import write_packet
from flarespec.review.shapes import expanded_shapes
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import open_compiled
from renamed_counters import counters, disagreeing

MANIFEST = {"packet.files.missing-entry": "manifest_lists_all",
            "packet.files.extra-entry": "manifest_lists_only",
            "packet.files.digest": "manifest_digests"}
KEPT = "[package, corpus, memory_report, measurements, snapshot, observation, response]"
DIGEST_MEMBER_DROPS = """\
shapes:
  corpus_request: {drop_members: [request_sha256]}
  observation: {drop_members: [request_sha256]}
"""


def invoke(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def spec_file(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(body).lstrip())
    return path


def header(spec_id: str, parent: str, revision: str) -> str:
    return (f"flarespec: 1\nid: {spec_id}\ntitle: {spec_id}\nextends: {parent}\n"
            f"applies_to:\n  given: \"packet:$.source.revision\"\n"
            f"  equals: \"${{source.revision}}\"\n"
            f"constants:\n  source: {{revision: {revision}}}\n")


def no_body_child(directory: Path, *, drop_members: bool) -> Path:
    """The issue's child: no request bodies, with or without dropping the digest member."""
    rules = "".join(f"""\
  - id: {rule_id}
    replaces: true
    clause: "2"
    description: files lists the assets this revision keeps.
    given: "packet:$.files"
    assert: {{{kind}: {KEPT}}}
""" for rule_id, kind in MANIFEST.items())
    return spec_file(directory, "nobody.yaml", header("flare/nobody", "flare/bce032c0", "nobody00")
                     + "drop_documents: [request_body]\n"
                     + "drop_rules: [request.sha256.corpus, request.sha256.observation, "
                       "request.max-tokens, request.stream]\n"
                     + (DIGEST_MEMBER_DROPS if drop_members else "")
                     + "rules:\n" + rules)


def requests_and_sidecars(root: Path) -> tuple[list[dict], list[dict]]:
    packet = json.loads((root / "packet.json").read_text())
    corpus = json.loads((root / packet["corpus"]).read_text())
    requests = [request for group in corpus["groups"] for request in group["requests"]]
    measurements = json.loads((root / packet["measurements"]).read_text())
    sidecars = [json.loads(path.read_text()) for path in root.rglob("observation.json")]
    copies = [o for group in measurements["groups"] for o in group["observations"]]
    assert requests and sidecars and len(copies) == len(sidecars)
    return requests, sidecars + copies


def measured(tmp_path: Path, spec: Path, pair: Path):
    receipt = tmp_path / "receipts" / "r.json"
    result = invoke("measure", "--spec", spec, "--packet", pair / "baseline" / "packet.json",
                    "--peer", pair / "candidate" / "packet.json", "--output", receipt)
    return result, json.loads(receipt.read_text())


@pytest.mark.parametrize("drop_members", [False, True], ids=["members-kept", "members-dropped"])
def test_a_child_without_request_bodies_lints_writes_and_measures(tmp_path, drop_members):
    spec = no_body_child(tmp_path, drop_members=drop_members)
    [linted] = lint([str(spec)])
    assert linted.errors == []
    written = invoke("fixture", "write", tmp_path / "pair", "--pair", "--spec", spec)
    assert written.exit_code == 0, written.output
    baseline = tmp_path / "pair" / "baseline"
    assert not list(baseline.rglob("request.json"))
    requests, observations = requests_and_sidecars(baseline)
    if drop_members:
        assert not [o for o in requests + observations if "request_sha256" in o]
    else:  # what the shapes declare is written: the digest of the body it would write
        digests = {request["id"]: request["request_sha256"] for request in requests}
        assert {o["request_id"]: o["request_sha256"] for o in observations} == digests
        assert all(len(digest) == 64 for digest in digests.values())
    result, receipt = measured(tmp_path, spec, tmp_path / "pair")
    assert result.exit_code == 0, receipt["violations"][:3]
    assert receipt["status"] == "pass" and receipt["metrics"]["delivery_ttft_ns"] > 0


def test_the_digest_of_a_dropped_body_is_of_the_bytes_it_would_have(tmp_path, flare_spec):
    """With request bodies kept, request_sha256 is the digest of request.json's bytes; with
    the document dropped, of the same bytes unwritten (the corpus is otherwise the same)."""
    kept = write_packet(tmp_path / "kept", flare_spec).parent
    dropped = write_packet(tmp_path / "dropped",
                           open_compiled(str(no_body_child(tmp_path, drop_members=False)))).parent
    by_id = {r["id"]: r["request_sha256"] for r in requests_and_sidecars(dropped)[0]}
    bodies = {path.parent.name: hashlib.sha256(path.read_bytes()).hexdigest()
              for path in kept.rglob("request.json")}
    assert by_id and by_id == bodies


@pytest.mark.slow
def test_spec_test_of_the_child_passes_every_inherited_valid_case(tmp_path):
    from flarespec.fixtures.check import PASSED, catalogs_for, check_cases, spec_cases

    spec = no_body_child(tmp_path, drop_members=False)
    compiled = open_compiled(str(spec))
    inherited = spec_cases(compiled, catalogs_for(compiled), selection_runs=False)
    valid = [case for case in inherited.cases
             if case.expect.get("accept") and case.name not in inherited.skip]
    assert len(valid) >= 10
    results = check_cases(valid, compiled, spec)
    assert [(r.name, r.got, r.problems[:1]) for r in results if r.status != PASSED] == []


# ------------------------------------------------------------------ added members

ADDED = """\
shapes:
  memory_report:
    members:
      kv_pages_reserved: {MEMBER}
"""


def added_member_child(directory: Path, member: str) -> Path:
    return spec_file(directory, "added.yaml", header("flare/added", "flare/bce032c0", "added000")
                     + ADDED.replace("{MEMBER}", member))


def test_an_added_required_member_with_an_example_is_written(tmp_path):
    spec = added_member_child(tmp_path, "{type: integer, example: 16}")
    assert lint([str(spec)])[0].errors == []
    written = invoke("fixture", "write", tmp_path / "pair", "--pair", "--spec", spec)
    assert written.exit_code == 0, written.output
    report = next((tmp_path / "pair" / "baseline").rglob("memory-report.json"))
    assert json.loads(report.read_text())["kv_pages_reserved"] == 16
    result, receipt = measured(tmp_path, spec, tmp_path / "pair")
    assert result.exit_code == 0, receipt["violations"][:3]


def test_an_added_required_member_without_an_example_is_a_lint_error_at_the_childs_line(
        tmp_path):
    spec = added_member_child(tmp_path, "integer")
    line = spec.read_text().splitlines().index("      kv_pages_reserved: integer") + 1
    [issue] = lint([str(spec)])[0].errors
    assert issue.code == "spec.writer-shape"
    assert (issue.mark.file, issue.mark.line) == (str(spec.resolve()), line)
    assert issue.message.startswith(
        "member `kv_pages_reserved` is required by shape `memory_report` (declared here) but "
        "writer flare cannot fill it: give it an `example:` or make it optional")
    assert "memory-report.json $.kv_pages_reserved" in issue.message

    written = invoke("fixture", "write", tmp_path / "out", "--spec", spec)
    assert written.exit_code == 2
    assert f"{spec.resolve()}:{line}:" in written.output
    assert "[spec.writer-shape]" in written.output and "Traceback" not in written.output
    assert not (tmp_path / "out").exists()


def test_a_member_the_writer_writes_with_another_type_is_a_lint_error_at_its_line(tmp_path):
    spec = spec_file(tmp_path, "typed.yaml", header("flare/typed", "flare/bce032c0", "typed000")
                     + "shapes:\n  corpus_request:\n    members:\n      max_tokens: string\n")
    line = spec.read_text().splitlines().index("      max_tokens: string") + 1
    [issue] = lint([str(spec)])[0].errors
    assert (issue.code, issue.mark.file, issue.mark.line) == \
        ("spec.writer-shape", str(spec.resolve()), line)
    assert "member `max_tokens` of shape `corpus_request` (declared here) does not accept " \
           "what writer flare writes there: is integer, expected string" in issue.message
    assert "corpus.json $.groups[0].requests[0].max_tokens and 16 more places" in issue.message


def test_a_writer_that_cannot_write_the_spec_is_a_lint_error(tmp_path):
    """A path_from the writer cannot record (not a plain $.member path): the writer's own
    error, at the child's extends (which brought the writer), and fixture write refuses."""
    spec = spec_file(tmp_path, "placed.yaml", header("flare/placed", "flare/bce032c0", "placed00")
                     + "documents:\n  corpus: {loader: json, path_from: \"packet:$['corpus']\", "
                       "rule: corpus.file, shape: corpus}\n")
    errors = lint([str(spec)])[0].errors
    assert [issue.code for issue in errors] == ["spec.writer-failed"]
    assert "cannot place document 'corpus'" in errors[0].message
    assert (errors[0].mark.file, errors[0].mark.line) == (str(spec.resolve()), 4)
    written = invoke("fixture", "write", tmp_path / "out", "--spec", spec)
    assert written.exit_code == 2 and "[spec.writer-failed]" in written.output
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ dropped members

def nested_nodes(node):
    pending = [node]
    while pending:
        node = pending.pop()
        yield node
        pending.extend((node.get("members") or {}).values())
        pending.extend(node[key] for key in ("items", "values") if key in node)


def test_the_compiled_shapes_record_what_the_chain_dropped(tmp_path):
    compiled = open_compiled(str(no_body_child(tmp_path, drop_members=True)))
    corpus = compiled.documents["corpus"].shape.node
    request = corpus["members"]["groups"]["items"]["members"]["requests"]["items"]
    assert request[DROPPED] == ["request_sha256"] and "request_sha256" not in request["members"]
    for document in ("observation", "measurements"):
        found = [n for n in nested_nodes(compiled.documents[document].shape.node) if DROPPED in n]
        assert [n[DROPPED] for n in found] == [["request_sha256"]]
    # the parent records nothing, and no checker reads the key: the packets pass (above)
    parent = open_compiled("flare/bce032c0")
    assert not [n for d in parent.documents.values() if d.shape
                for n in nested_nodes(d.shape.node) if DROPPED in n]


def test_a_grandchild_declaring_a_dropped_member_again_gets_it_written(tmp_path):
    no_body_child(tmp_path, drop_members=True)  # nobody.yaml: flare/nobody, found beside
    spec = spec_file(tmp_path, "again.yaml", header("flare/again", "flare/nobody", "again000")
                     + "shapes:\n  corpus_request: {members: {request_sha256: sha256}}\n")
    compiled = open_compiled(str(spec))
    assert not [n for n in nested_nodes(compiled.documents["corpus"].shape.node) if DROPPED in n]
    assert lint([str(spec)])[0].errors == []
    written = invoke("fixture", "write", tmp_path / "pair", "--pair", "--spec", spec)
    assert written.exit_code == 0, written.output
    requests, observations = requests_and_sidecars(tmp_path / "pair" / "baseline")
    assert all(len(request["request_sha256"]) == 64 for request in requests)
    assert not [o for o in observations if "request_sha256" in o]  # still dropped there
    result, receipt = measured(tmp_path, spec, tmp_path / "pair")
    assert result.exit_code == 0, receipt["violations"][:3]


def test_a_spec_file_may_not_write_the_resolvers_key(tmp_path):
    spec = spec_file(tmp_path, "own.yaml", header("flare/own", "flare/bce032c0", "own00000")
                     + "shapes:\n  corpus_request: {dropped: [max_tokens]}\n")
    with pytest.raises(SpecInvalid) as refused:
        open_compiled(str(spec))
    [issue] = refused.value.issues
    assert issue.code == "spec.document-shape"
    assert "unknown shape key 'dropped'" in issue.message and issue.mark.line == 11


def test_spec_diff_shows_a_drop_as_the_member_removed_only(tmp_path):
    spec = no_body_child(tmp_path, drop_members=True)
    compiled = open_compiled(str(spec))
    assert not [n for node in expanded_shapes(compiled.resolved.data).values()
                for n in nested_nodes(node) if DROPPED in n]
    result = invoke("spec", "diff", "flare/bce032c0", spec, "--format", "json")
    assert "member request_sha256 removed" in result.output
    assert DROPPED not in {word.strip('"') for word in result.output.split()}


def test_conform_deletes_dropped_members_at_every_depth():
    from flarespec.fixtures.writers import conform

    node = {"type": "object", DROPPED: ["gone"], "members": {
        "items": {"type": "array", "items": {"type": "object", DROPPED: ["old"], "members": {}}}}}
    value = {"gone": 1, "kept": 2, "items": [{"old": 1, "new": 2}, {"new": 3}]}
    assert conform(node, value) == {"kept": 2, "items": [{"new": 2}, {"new": 3}]}


# ------------------------------------------------------------------ refusing to write

def test_fixture_write_refuses_a_counter_renamed_in_one_constant_only(tmp_path):
    """Lint exits 2 (the counter the rules read is not the one the restated idle metrics
    require); fixture write used to write packets measure rejected (81 violations): now it
    refuses. Renamed in ``counters`` alone (idle_metrics read it), it writes."""
    renamed = spec_file(tmp_path, "ok.yaml", header("flare/ok", "flare/bce032c0", "renamed1")
                        + counters(reused_tokens="flare_prefix_tokens_reused_total"))
    assert invoke("fixture", "write", tmp_path / "ok", "--spec", renamed).exit_code == 0
    snapshots = list((tmp_path / "ok").rglob("*.prom"))
    assert snapshots and all("\nflare_prefix_tokens_reused_total " in "\n" + path.read_text()
                             for path in snapshots)
    spec = spec_file(tmp_path, "renamed.yaml", header("flare/renamed", "flare/bce032c0", "renamed0")
                     + disagreeing("flare_prefix_tokens_reused_total",
                                   "flare_prompt_tokens_reused_total"))
    codes = {issue.code for issue in lint([str(spec)])[0].errors}
    assert codes == {"spec.name-not-required"}
    for command in (("fixture", "write", tmp_path / "out", "--spec", spec),
                    ("fixture", "write", tmp_path / "out", "--pair", "--spec", spec)):
        written = invoke(*command)
        assert written.exit_code == 2
        assert f"error: spec {spec} does not lint" in written.output
        assert [line for line in written.output.splitlines()
                if line.startswith(f"{spec.resolve()}:")] == \
            [line for line in written.output.splitlines() if "[spec." in line]
        assert written.output.endswith("[spec.name-not-required]\n")
        assert not (tmp_path / "out").exists()


def test_fixture_write_lints_the_bundled_spec_once_per_process(monkeypatch, tmp_path):
    from flarespec.authoring import writer_lint

    writes = []
    real = writer_lint._written_issues
    monkeypatch.setattr(writer_lint, "_linted", {})
    monkeypatch.setenv("FLARESPEC_CACHE", "0")
    monkeypatch.setattr(writer_lint, "_written_issues",
                        lambda compiled: writes.append(compiled.id) or real(compiled))
    for number in range(2):
        assert invoke("fixture", "write", tmp_path / f"p{number}").exit_code == 0
    assert writes == ["flare/bce032c0"]
