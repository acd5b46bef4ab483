"""The writer follows the spec: its documents decide which files exist and where, a declared
schema checks the constants it reads, its options (and their allowed values) come from the
writer and the spec, and it is found by the name the spec gives, through an entry point."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from flarespec.adapter.commands import measure
from flarespec.cli import main
from flarespec.fixtures import writers
from flarespec.fixtures.writers import WriterError, write_packet, write_pair
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.open import open_compiled

MANIFEST_RULES = ("packet.files.missing-entry", "packet.files.extra-entry", "packet.files.digest")
MANIFEST_KINDS = ("manifest_lists_all", "manifest_lists_only", "manifest_digests")


def write_spec(tmp_path: Path, body: str, name: str = "child.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip())
    return path


def no_request_body_spec(tmp_path: Path) -> Path:
    """A revision that stops keeping request.json: the document, the rules reading it and
    the manifest entries for it are gone."""
    rules = []
    for rule_id, kind in zip(MANIFEST_RULES, MANIFEST_KINDS):
        rules.append(f"""
          - id: {rule_id}
            replaces: true
            description: files lists the assets this revision keeps.
            given: "packet:$.files"
            assert:
              {kind}: [package, corpus, memory_report, measurements, snapshot, observation, response]""")
    return write_spec(tmp_path, """
        flarespec: 1
        id: flare/no-request-body
        title: A revision without request bodies
        extends: flare/bce032c0
        drop_documents: [request_body]
        drop_rules: [request.sha256.corpus, request.sha256.observation, request.max-tokens,
                     request.stream]
        shapes:
          corpus_request: {drop_members: [request_sha256]}
          observation: {drop_members: [request_sha256]}
        rules:""" + "".join(textwrap.indent(textwrap.dedent(r), "        ") for r in rules) + "\n")


def test_a_dropped_document_is_not_written_and_the_packet_passes_its_spec(tmp_path):
    spec_path = no_request_body_spec(tmp_path)
    spec = open_compiled(spec_path)
    assert "request_body" not in spec.documents
    root = write_packet(tmp_path / "packet", spec).parent

    assert not list(root.rglob("request.json"))
    packet = json.loads((root / "packet.json").read_text())
    assert not [key for key in packet["files"] if key.endswith("request.json")]
    corpus = json.loads((root / packet["corpus"]).read_text())
    requests = [request for group in corpus["groups"] for request in group["requests"]]
    assert requests and not any("request_sha256" in request for request in requests)
    sidecars = list(root.rglob("observation.json"))
    assert sidecars and not any("request_sha256" in json.loads(p.read_text()) for p in sidecars)

    outcome = measure(root / "packet.json", root / "packet.json", tmp_path / "out" / "r.json",
                      spec_path=spec_path)
    assert outcome.exit_code == 0, outcome.receipt["violations"][:5]
    # ... and the bundled spec, which keeps request bodies, refuses it: its corpus shape
    # requires each request's request_sha256.
    bundled = measure(root / "packet.json", root / "packet.json", tmp_path / "out" / "b.json")
    assert "corpus.file.shape" in {v["rule"] for v in bundled.receipt["violations"]}


def test_fixture_write_follows_the_child_spec_on_the_command_line(tmp_path):
    spec_path = no_request_body_spec(tmp_path)
    result = CliRunner().invoke(main, ["fixture", "write", str(tmp_path / "p"), "--spec", str(spec_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "p" / "packet.json").is_file() and not list((tmp_path / "p").rglob("request.json"))


def test_a_path_template_decides_where_a_document_goes(tmp_path):
    spec_path = write_spec(tmp_path, """
        flarespec: 1
        id: flare/flat-sidecars
        title: Sidecars beside their streams under another name
        extends: flare/bce032c0
        documents:
          observation:
            loader: json
            each: request
            path: "{packet:$.run}/{group.id}/{request.id}/sidecar.json"
            rule: observation.file
        """)
    root = write_packet(tmp_path / "packet", open_compiled(spec_path)).parent
    assert list(root.rglob("sidecar.json")) and not list(root.rglob("observation.json"))
    outcome = measure(root / "packet.json", root / "packet.json", tmp_path / "r.json",
                      spec_path=spec_path)
    assert outcome.exit_code == 0, outcome.receipt["violations"][:5]


# ------------------------------------------------------------------ declared constants


def issues_of(spec_path: Path) -> list:
    with pytest.raises(SpecInvalid) as raised:
        write_packet(spec_path.parent / "never", open_compiled(spec_path))
    assert not (spec_path.parent / "never").exists()
    return raised.value.issues


def standalone_spec(tmp_path: Path, flare_spec, *, constant: str | None = None,
                    document: str | None = None, writer: str | None = "flare") -> Path:
    """A spec of its own (no parent) with the Flare documents and one rule, less one
    constant or document: its rules need neither, the writer does."""
    bundled = yaml.safe_load(flare_spec.resolved.chain[0].path.read_text())
    spec_path = tmp_path / "standalone.yaml"
    spec_path.write_text(yaml.safe_dump({
        "flarespec": 1, "id": "flare/standalone", "title": "standalone",
        **({"writer": writer} if writer else {}),
        "constants": {k: v for k, v in bundled["constants"].items() if k != constant},
        "shapes": bundled["shapes"],
        "documents": {k: v for k, v in bundled["documents"].items() if k != document},
        "iterations": {k: bundled["iterations"][k] for k in ("group", "request", "phase")},
        "rules": [bundled["rules"][0]]}, sort_keys=False))
    return spec_path


def test_a_spec_lacking_a_writer_constant_gets_the_declared_error(tmp_path, flare_spec):
    spec_path = standalone_spec(tmp_path, flare_spec, constant="group_matrix")
    [issue] = issues_of(spec_path)
    assert issue.code == "writer.constant-missing"
    assert str(issue).startswith(f"{spec_path.resolve()}:")
    assert "spec flare/standalone lacks constant `group_matrix` needed by writer flare: " \
           "expected a list (rows {kind, requests" in str(issue)


def test_a_spec_lacking_a_required_document_is_refused(tmp_path, flare_spec):
    spec_path = standalone_spec(tmp_path, flare_spec, document="response")
    [issue] = issues_of(spec_path)
    assert issue.code == "writer.document-missing"
    assert "spec flare/standalone lacks document `response` needed by writer flare " \
           "(optional documents: request_body)" in str(issue)


def test_a_constant_of_the_wrong_shape_names_the_constant_and_its_line(tmp_path):
    spec_path = write_spec(tmp_path, """
        flarespec: 1
        id: flare/bad-labels
        title: a capacity label as a number
        extends: flare/bce032c0
        constants:
          capacity_labels: [sm120, 7]
        """)
    [issue] = issues_of(spec_path)
    assert issue.code == "writer.constant-shape"
    assert "constant `capacity_labels.1` does not have the shape writer flare needs: " \
           "expected string, got int 7" in str(issue)
    assert f"{spec_path.resolve()}:6:" in str(issue)


def test_a_document_the_writer_does_not_know_is_refused(tmp_path):
    spec_path = write_spec(tmp_path, """
        flarespec: 1
        id: flare/extra-document
        title: a new trace file
        extends: flare/bce032c0
        documents:
          trace: {loader: json, path_from: "packet:$.trace", rule: trace.file}
        """)
    [issue] = issues_of(spec_path)
    assert issue.code == "writer.document-unknown"
    assert "writer flare cannot write document `trace`" in str(issue)


def test_a_spec_without_a_writer_or_with_an_unknown_one(tmp_path):
    spec_path = write_spec(tmp_path, """
        flarespec: 1
        id: flare/unknown-writer
        title: a writer nobody registered
        extends: flare/bce032c0
        writer: nosuch
        """)
    [issue] = issues_of(spec_path)
    assert issue.code == "writer.unknown" and "'nosuch'" in str(issue) and "flare" in str(issue)
    assert f"{spec_path.resolve()}:5:" in str(issue)


def test_a_spec_naming_no_writer_says_how_to_name_one(tmp_path, flare_spec):
    [issue] = issues_of(standalone_spec(tmp_path, flare_spec, writer=None))
    assert issue.code == "writer.none"
    assert "spec flare/standalone names no writer (add `writer: NAME`" in str(issue)
    assert "installed writers: flare" in str(issue)


def test_the_writer_is_found_through_its_entry_point(flare_spec):
    from importlib.metadata import entry_points

    [entry] = [e for e in entry_points(group=writers.ENTRY_POINT_GROUP) if e.name == "flare"]
    assert entry.value == "flarespec.flare.writer"
    assert writers.writer_for(flare_spec) is writers.discover()["flare"]


# ----------------------------------------------------------------------------- options


def test_options_are_checked_against_the_writer_and_the_spec(tmp_path, flare_spec):
    with pytest.raises(WriterError, match=r"'sm999' is not one of sm120, sm121 \(constant "
                                          r"capacity_labels of spec flare/bce032c0\)"):
        write_packet(tmp_path / "a", flare_spec, target_arch="sm999")
    with pytest.raises(WriterError, match="writer flare has no option colour"):
        write_packet(tmp_path / "b", flare_spec, colour="red")
    with pytest.raises(WriterError, match="option repetitions takes a int, got True"):
        write_packet(tmp_path / "c", flare_spec, repetitions=True)
    with pytest.raises(WriterError, match="option repetitions must be >= 1"):
        write_pair(tmp_path / "d", flare_spec, candidate={"repetitions": 0})
    assert not any(tmp_path.iterdir())


def test_target_arch_defaults_to_the_first_label_of_the_spec(tmp_path):
    spec_path = write_spec(tmp_path, """
        flarespec: 1
        id: flare/other-labels
        title: other capacity labels
        extends: flare/bce032c0
        constants:
          capacity_labels: [gb300, gb200]
        """)
    root = write_packet(tmp_path / "p", open_compiled(spec_path)).parent
    report = json.loads((root / "preparation/memory-report.json").read_text())
    assert report["target_arch"] == "gb300"


def test_fixture_write_target_arch_lists_the_spec_values(tmp_path):
    result = CliRunner().invoke(main, ["fixture", "write", str(tmp_path / "p"), "--target-arch", "bad"])
    assert result.exit_code == 2
    assert "Invalid value for --target-arch: 'bad' is not one of sm120, sm121 (constant " \
           "capacity_labels of spec flare/bce032c0)" in result.output
    assert not (tmp_path / "p").exists()


def test_fixture_write_help_shows_the_writer_options():
    result = CliRunner().invoke(main, ["fixture", "write", "--help"])
    assert result.exit_code == 0
    for flag in ("--repetitions", "--target-arch", "--seed", "--package-size"):
        assert flag in result.output
    assert "capacity_labels" in result.output
    assert "--synthetic" not in result.output  # the command line always labels packets synthetic


def test_fixture_write_refuses_a_spec_the_writer_cannot_serve(tmp_path):
    spec_path = write_spec(tmp_path, """
        flarespec: 1
        id: flare/bad-labels
        title: a capacity label as a number
        extends: flare/bce032c0
        constants:
          capacity_labels: [sm120, 7]
        """)
    result = CliRunner().invoke(main, ["fixture", "write", str(tmp_path / "p"), "--spec", str(spec_path)])
    assert result.exit_code == 2
    assert "writer.constant-shape" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "p").exists()  # refused by lint (the writer check) before writing
