"""A spec's document option ``max_mib`` sets the size limit of that document, both where the
document is parsed and where its file is read ahead for a digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from document_files import compile_text

from flarespec.engine.evaluate import evaluate
from flarespec.loaders.files import FileStore, clear_process_hash_cache
from flarespec.loaders.limits import MIB

SPEC = """
flarespec: 1
id: toy/limits
title: a large log beside a small index
documents:
  index: {{loader: json, entry: true}}
  log: {{loader: json, path: log.json{options}}}
rules:
  - id: toy.log.count
    description: the log counts as many entries as the index says.
    given: "log:$.count"
    assert: {{equals: {{ref: "index:$.count"}}}}
  - id: toy.index.digest
    description: the index holds the log's digest.
    given: "index:$.files"
    assert: {{manifest_digests: [log]}}
"""


@pytest.fixture(autouse=True)
def fresh_hashes():
    clear_process_hash_cache()
    yield
    clear_process_hash_cache()


def compiled(tmp_path: Path, options: str):
    return compile_text(tmp_path / "spec", SPEC.format(options=options), "limits.yaml")


def packet(root: Path, entries: int) -> Path:
    """An index and a log of ``entries`` strings of 100 characters (about 104 bytes each)."""
    root.mkdir(parents=True)
    log = json.dumps({"count": entries, "entries": ["x" * 100] * entries}).encode()
    (root / "log.json").write_bytes(log)
    entry = root / "index.json"
    entry.write_text(json.dumps({"count": entries,
                                 "files": {"log.json": hashlib.sha256(log).hexdigest()}}))
    return entry


def violations(tmp_path: Path, options: str):
    report = evaluate(compiled(tmp_path, options), packet(tmp_path / "p", 15_000))  # ~1.5 MiB
    return [(v.rule, v.file, v.message) for v in report.violations]


def test_a_document_over_its_max_mib_is_too_large_and_the_message_names_that_limit(tmp_path):
    [(rule, file, message)] = violations(tmp_path, ", options: {max_mib: 1}")
    assert (rule, file) == ("document.log.too-large", "log.json")
    assert f"the limit for this document is {MIB} bytes (1 MiB, spec option max_mib)" in message


def test_without_the_option_the_same_document_passes(tmp_path):
    assert violations(tmp_path, "") == []


def test_a_raised_max_mib_passes_it_too(tmp_path):
    assert violations(tmp_path, ", options: {max_mib: 2}") == []


def test_the_file_is_read_under_the_documents_limit(tmp_path, monkeypatch):
    """The engine passes the limit to FileStore.read_bytes too: a file store whose own
    default is lower than max_mib still reads the document (and refuses it first, by stat,
    when it is over)."""
    monkeypatch.setattr(FileStore.read_bytes, "__defaults__", (MIB,))
    assert violations(tmp_path / "raised", ", options: {max_mib: 2}") == []
    [(_, _, message)] = violations(tmp_path / "lowered", ", options: {max_mib: 1}")
    assert message.startswith("the file is ")
