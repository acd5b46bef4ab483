"""``spec lint`` of a spec that names a writer: the writer's packets have the spec's shapes.

A writer writes what it knows; ``fixtures.writers.conform`` then deletes the members the
spec dropped and fills in the required members that have an ``example``. What is left (a
member the shapes require that the writer does not know and no ``example`` gives, or one it
writes with another type) would otherwise show only when the writer's own packet is
measured and rejected. So lint writes one packet (the writer's smallest options) into a
temporary directory, loads its documents as ``measure`` does and checks their shapes (no
rule runs), and reports each problem once, at the declaration of the shape member concerned
in the file that declared it (a child's line for a member the child added)::

    child.yaml:7:7: member `kv_pages_reserved` is required by shape `memory_report`
    (declared here) but writer flare cannot fill it: give it an `example:` or make it
    optional (`optional: true`) (preparation/memory-report.json $) [spec.writer-shape]

A writer that refuses the spec (the constants or documents it declares: ``writer.*``) or
fails while writing (``spec.writer-failed``) is the lint error too. An unchanged spec is
written once (the result is kept per process and in the compiled-spec cache), so ``fixture
write``, which lints before it writes, pays for it once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from pathlib import Path

from flarespec.engine.evaluate import Evaluation
from flarespec.fixtures.writers import WRITERS, WriterError, named_writer, prepare, write_packet
from flarespec.loaders.locations import location_keys
from flarespec.compiler import cache
from flarespec.compiler.compile import CompiledSpec
from flarespec.compiler.errors import SpecInvalid, SpecIssue

WRITER_SHAPE = "spec.writer-shape"
WRITER_FAILED = "spec.writer-failed"
# (expected, actual) of engine/shapes.py's problem for a required member that is missing
_MISSING = ("present", "absent")

_linted: dict[tuple, list[SpecIssue]] = {}


def writer_issues(compiled: CompiledSpec | None) -> list[SpecIssue]:
    """The problems of the packet the spec's writer writes for it (none without a
    ``writer:`` key, or when the spec did not compile). Kept per process, and across
    processes in the compiled-spec cache (compiler/cache.py: keyed by the spec files' paths and
    digests and flarespec's code; the writer's module and the spec's hook modules are
    witnesses), so linting an unchanged spec again writes nothing."""
    if compiled is None or named_writer(compiled)[0] is None:
        return []
    chain = compiled.resolved.chain
    files = tuple(f"{spec_file.path}={spec_file.digest}" for spec_file in chain)
    if files not in _linted:
        _linted[files] = _cached(compiled, files, str(chain[0].path))
    return list(_linted[files])


def _cached(compiled: CompiledSpec, files: tuple, path: str) -> list[SpecIssue]:
    entry_key = cache.key("writer-lint", *files) if cache.enabled() else None
    digest = hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()
    name = f"writer-lint-{digest[:32]}.pickle"
    found = cache.load(name, entry_key, _issue_list) if entry_key else None
    if found is None:
        found = _written_issues(compiled)
        writer = WRITERS.get(named_writer(compiled)[0])
        if entry_key and writer is not None:
            cache.store(name, entry_key, found, hook_modules={
                writer.write_packet.__module__, *compiled.hook_modules})
    return found


def _issue_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(issue, SpecIssue) for issue in value)


def _written_issues(compiled: CompiledSpec) -> list[SpecIssue]:
    try:
        writer = prepare(compiled)
    except SpecInvalid as refused:
        return list(refused.issues)
    smallest = {option.name: option.minimum for option in writer.options
                if option.minimum is not None}
    with tempfile.TemporaryDirectory(prefix="flarespec-lint-") as directory:
        try:
            entry = write_packet(Path(directory) / "packet", compiled, **smallest)
        except SpecInvalid as refused:
            return list(refused.issues)
        except Exception as error:  # noqa: BLE001 - a writer failing on this spec is the issue
            said = str(error) if isinstance(error, WriterError) else \
                f"{type(error).__name__}: {error}"
            return [SpecIssue(f"writer {writer.name} cannot write a packet for spec "
                              f"{compiled.id}: {said}", _writer_mark(compiled), WRITER_FAILED)]
        documents_only = dataclasses.replace(compiled, rules=[], identities={}, pair=[],
                                             metric=None)
        report = Evaluation(documents_only, entry, streaming=False).run()
    if not report.files and report.ok:
        return [SpecIssue(f"writer {writer.name} wrote no document spec {compiled.id} reads",
                          _writer_mark(compiled), WRITER_FAILED)]
    return _report_issues(compiled, writer.name, report)


def _writer_mark(compiled: CompiledSpec):
    """The linted file's ``writer:`` key, else its ``extends`` (which brought the writer)."""
    own = compiled.resolved.chain[0].data
    marks = getattr(own, "key_marks", {})
    return marks.get("writer") or marks.get("extends") or getattr(own, "mark", None)


def _report_issues(compiled: CompiledSpec, writer: str, report) -> list[SpecIssue]:
    """One issue per shape member (and kind of problem) the packet breaks, at the member's
    declaration, with the first place and how many more; a document that does not load is
    one issue at the document's declaration."""
    by_rule = {document.shape.rule: name for name, document in compiled.documents.items()
               if document.shape is not None}
    data = compiled.resolved.data
    grouped: dict[tuple, list] = {}
    for violation in report.violations:
        where = " ".join(part for part in (violation.file, violation.location) if part)
        document = by_rule.get(violation.rule)
        if document is None:
            mark = getattr((data.get("documents") or {}), "key_marks", {}).get(
                _document_of(compiled, violation.rule)) or _writer_mark(compiled)
            key = (mark, violation.rule, violation.message)
            message = (f"the packet writer {writer} writes breaks {violation.rule}: "
                       f"{violation.message}")
        else:
            shape, member, mark = _declaration(data, document, violation.location)
            missing = (violation.expected, violation.actual) == _MISSING
            key = (mark, shape, member, missing)
            message = _shape_message(writer, shape, member, missing, violation.message)
        grouped.setdefault(key, [message, where, 0, mark])[2] += 1
    issues = []
    for message, where, count, mark in grouped.values():
        more = f" and {count - 1} more place{'s' * (count > 2)}" if count > 1 else ""
        issues.append(SpecIssue(f"{message} ({where}{more})", mark, WRITER_SHAPE))
    return issues


def _shape_message(writer: str, shape, member, missing: bool, problem: str) -> str:
    if missing:
        return (f"member `{member}` is required by shape `{shape}` (declared here) but writer "
                f"{writer} cannot fill it: give it an `example:` or make it optional "
                f"(`optional: true`)")
    subject = f"member `{member}` of shape `{shape}`" if member else f"shape `{shape}`"
    return (f"{subject} (declared here) does not accept what writer {writer} writes there: "
            f"{problem}; change the shape or the writer")


def _document_of(compiled: CompiledSpec, rule: str) -> str | None:
    """The document whose loading a violation's rule (``<document rule>.<code>``) names."""
    for name, document in compiled.documents.items():
        if rule.startswith(f"{document.rule_prefix}."):
            return name
    return None


def _declaration(data: dict, document: str, location: str | None):
    """(named shape, member, mark) of the deepest member the document's shape declares
    along ``location``, as the resolved spec has it: the mark is the member's declaration
    in the file that wrote it. Named shapes and ``use`` are followed."""
    named = data.get("shapes") or {}
    owner = ((data.get("documents") or {}).get(document) or {}).get("shape")
    node, member, mark = owner, None, getattr(named, "key_marks", {}).get(owner)
    for key in location_keys(location or "$"):
        step = _child(node, owner, key, named)
        if step is None:
            break
        node, owner, found, found_mark = step
        if found is not None:
            member, mark = found, found_mark or mark
    return owner, member, mark


def _child(node, owner, key, named):
    """(child node, its named shape, the member name or None, its mark) of ``key`` (a
    member name or an index) below ``node``, or None where no shape declares it."""
    seen: set = set()
    while True:
        while isinstance(node, str) and node in named and node not in seen:
            seen.add(node)
            owner, node = node, named[node]
        if not isinstance(node, dict):
            return None
        marks = getattr(node, "key_marks", {})
        members = node.get("members")
        if isinstance(key, int) and "items" in node:
            return node["items"], owner, None, marks.get("items")
        if isinstance(key, str) and isinstance(members, dict) and key in members:
            return members[key], owner, key, getattr(members, "key_marks", {}).get(key)
        if isinstance(key, str) and "values" in node:
            return node["values"], owner, None, marks.get("values")
        if not isinstance(node.get("use"), str):
            return None
        node = node["use"]
