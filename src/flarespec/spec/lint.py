"""``spec lint``: every issue of a spec file at once, errors and warnings.

Loading a spec stops at the first step that fails (a shape error means the compiler cannot
trust the data). Lint goes further: it reads the file leniently, still resolves
and compiles it when the shape step found problems (reporting what that finds whenever it
does not trip over the broken shape), then adds what only matters while editing: the places
that still read a dropped document; placeholders a binding cannot fill (spec/placeholders.py);
warnings for a missing ``applies_to``, ``${...}`` kept
as a literal inside ``constants`` and rule literals that repeat a constant; and
``applies_to`` conditions that overlap another spec of the library (an error naming both
specs: the selector would refuse every packet both accept).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from flarespec.spec.compile import CompiledSpec, compile_spec
from flarespec.spec import metaschema
from flarespec.spec.errors import ERROR, WARNING, SpecInvalid, SpecIssue, did_you_mean
from flarespec.spec.literals import literal_constant_warnings
from flarespec.spec.load import SpecFile, SpecLibrary, bundled_spec_dir, read_spec_bytes
from flarespec.spec.placeholders import placeholder_issues
from flarespec.spec.open import bundled_compiled, bundled_library, is_path, unknown_spec
from flarespec.spec.resolve import ResolvedSpec, dropped_document_references, resolve
from flarespec.spec.shape_lint import shape_issues
from flarespec.spec.yamlmarks import Mark, SpecYamlError, load_marked, mark_at, plain

NO_APPLIES_TO = "spec.no-applies-to"
APPLIES_TO_OVERLAP = "spec.applies-to-overlap"
APPLIES_TO_UNDECIDED = "spec.applies-to-undecided"
CONSTANT_IN_CONSTANTS = "spec.constant-in-constants"
DRAFT = "spec.draft"


@dataclass
class LintResult:
    ref: str
    spec_id: str | None = None
    issues: list[SpecIssue] = field(default_factory=list)
    compiled: CompiledSpec | None = None

    @property
    def errors(self) -> list[SpecIssue]:
        return [issue for issue in self.issues if issue.severity == ERROR]

    @property
    def warnings(self) -> list[SpecIssue]:
        return [issue for issue in self.issues if issue.severity == WARNING]

    def as_dict(self) -> dict:
        return {"spec": self.ref, "id": self.spec_id, "ok": not self.errors,
                "rules": len(self.compiled.rules) if self.compiled else None,
                "issues": [issue.as_dict() for issue in self.issues]}


def lint(refs: list[str]) -> list[LintResult]:
    """Lint each reference (file path or bundled id), then check the applies_to conditions
    of the linted specs against each other and against the bundled library."""
    results = [lint_one(ref) for ref in refs]
    _check_overlaps(results)
    return results


def lint_one(ref: str) -> LintResult:
    result = LintResult(ref)
    spec_file, library = _read(ref, result)
    if spec_file is None:
        return result
    result.spec_id = spec_file.data.get("id") if isinstance(spec_file.data.get("id"),
                                                              str) else None
    resolved = _resolve(spec_file, library, result)
    if resolved is None:
        return result
    dropped = dropped_document_references(resolved)
    result.issues.extend(dropped)
    _compile(resolved, result, _explained_by(dropped, resolved.dropped_documents))
    result.issues.extend(placeholder_issues(resolved))
    result.issues.extend(_warnings(resolved))
    return result


def _read(ref: str, result: LintResult) -> tuple[SpecFile | None, SpecLibrary | None]:
    """The spec file, read without stopping at shape errors (recorded in ``result``)."""
    if not is_path(ref):
        library = bundled_library()
        try:
            spec_file = library.get(ref)
        except SpecInvalid as problem:
            result.issues.extend(problem.issues)
            return None, None
        if spec_file is None:
            result.issues.extend(unknown_spec(ref, library).issues)
        return spec_file, library
    try:  # the path as SpecLibrary.for_file names it: resolved, unless symlinks loop
        path = Path(ref).resolve()
    except (OSError, RuntimeError):
        path = Path(ref).absolute()
    try:
        raw = read_spec_bytes(path)
        data = load_marked(raw.decode("utf-8"), str(path))
    except SpecInvalid as problem:
        result.issues.extend(problem.issues)
        return None, None
    except UnicodeDecodeError:
        result.issues.append(SpecIssue("spec is not UTF-8", Mark(str(path), 1, 1), "spec.yaml"))
        return None, None
    except SpecYamlError as error:
        result.issues.append(SpecIssue(error.reason, error.mark, error.code))
        return None, None
    if not isinstance(data, dict):
        result.issues.append(SpecIssue("a spec is a YAML mapping", Mark(str(path), 1, 1),
                                       "spec.shape"))
        return None, None
    result.issues.extend(SpecIssue(message + _key_suggestion(where, message),
                                   mark_at(data, where), "spec.shape")
                         for where, message in metaschema.shape_errors(data))
    bundled = bundled_spec_dir()
    library = SpecLibrary([bundled], siblings=path.parent if path.parent != bundled else None)
    spec_file = SpecFile(path, data, hashlib.sha256(raw).hexdigest())
    library.add(spec_file)
    return spec_file, library


# where an unknown key sits (its path's length and first step) -> the keys allowed there
_KEYS_AT = {(1, None): metaschema.SPEC, (3, "rules"): metaschema.RULE,
            (3, "documents"): metaschema.DOCUMENT, (3, "iterations"): metaschema.ITERATION,
            (2, "metric"): metaschema.METRIC}


def _key_suggestion(where: tuple, message: str) -> str:
    """A "did you mean" for an unknown key of a spec, a rule, a document, an iteration or
    the metric (the shape check only says the key is unknown)."""
    if not message.startswith("unknown key") or not where:
        return ""
    allowed = _KEYS_AT.get((len(where), where[0] if len(where) > 1 else None))
    return did_you_mean(where[-1], allowed) if allowed else ""


def _resolve(spec_file: SpecFile, library: SpecLibrary, result: LintResult
             ) -> ResolvedSpec | None:
    """Resolved, or None; after shape errors, a crash on the broken shape adds nothing."""
    try:
        return resolve(spec_file, library)
    except SpecInvalid as problem:
        result.issues.extend(problem.issues)
    except Exception:  # noqa: BLE001 - only reachable after shape errors, reported already
        if not result.errors:
            raise
    return None


def _explained_by(dropped: list[SpecIssue], names) -> "Callable[[SpecIssue], bool]":
    """Whether a compiler issue repeats a dropped-document issue: on the same line, about
    a dropped name (an unknown target, an unknown document in a kind's list, file metadata
    of what is no longer a document). The dropped-document issue says more: which drop."""
    lines = {(i.mark.file, i.mark.line) for i in dropped if i.mark}
    quoted = [f"'{name}'" for name in names] + [f" {name}" for name in names]

    def explained(issue: SpecIssue) -> bool:
        return bool(issue.mark) and (issue.mark.file, issue.mark.line) in lines and (
            any(q in issue.message for q in quoted)
            or "exists only for documents" in issue.message)
    return explained


def _compile(resolved: ResolvedSpec, result: LintResult, explained=lambda issue: False
             ) -> None:
    try:
        compiled = compile_spec(resolved)
    except SpecInvalid as problem:
        result.issues.extend(i for i in problem.issues if not explained(i))
        return
    except Exception:  # noqa: BLE001 - only reachable after shape errors, reported already
        if not result.errors:
            raise
        return
    if not result.errors:
        result.compiled = compiled
        result.issues.extend(shape_issues(compiled))


def _warnings(resolved: ResolvedSpec) -> list[SpecIssue]:
    # literal_constant_warnings' issues are warnings whatever severity they were built with
    found = [replace(issue, severity=WARNING) for issue in literal_constant_warnings(resolved)]
    own = resolved.chain[0].data
    if "applies_to" not in own:
        found.append(SpecIssue(
            "no applies_to: this spec is never chosen for a packet, only used when named "
            "with --spec; add applies_to (e.g. the revision it covers) to have it selected",
            getattr(own, "key_marks", {}).get("id") or getattr(own, "mark", None),
            NO_APPLIES_TO, WARNING))
    if own.get("draft") is True:
        found.append(SpecIssue(
            "a draft (draft: true): never chosen for a packet by applies_to and never the "
            "default spec of fixture write or demo, only used when named with --spec; "
            "remove draft: true when the revision is released",
            getattr(own, "key_marks", {}).get("draft"), DRAFT, WARNING))
    constants = own.get("constants")
    for text, mark in _strings(constants, getattr(own, "key_marks", {}).get("constants")):
        if "${" in text:
            found.append(SpecIssue(
                f"{text!r}: ${{...}} is not substituted inside constants; it stays this "
                f"literal text (write the value itself, or refer to it from the rules)",
                mark, CONSTANT_IN_CONSTANTS, WARNING))
    return found


def _strings(value, mark):
    """(string, mark) for every string inside a marked value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, getattr(value, "key_marks", {}).get(key, mark))
    elif isinstance(value, list):
        marks = getattr(value, "item_marks", None) or [mark] * len(value)
        for item, item_mark in zip(value, marks):
            yield from _strings(item, item_mark)
    elif isinstance(value, str):
        yield value, mark


# ------------------------------------------------------------------------- applies_to
def _check_overlaps(results: list[LintResult]) -> None:
    """Each linted spec against every other spec of the library: the linted ones replace
    a bundled spec of the same id (a file being edited is the new version of it)."""
    linted = {r.spec_id: r for r in results if r.compiled is not None}
    library = {spec.id: plain(spec.resolved.data.get("applies_to"))
               for spec in _bundled_or_nothing() if spec.id not in linted}
    library.update({spec_id: plain(r.compiled.resolved.data.get("applies_to"))
                    for spec_id, r in linted.items()})
    for spec_id, result in linted.items():
        own = library[spec_id]
        if own is None:
            continue
        mark = result.compiled.resolved.data.key_marks.get("applies_to")
        for other_id, other in sorted(library.items()):
            if other_id != spec_id and other is not None:
                issue = _overlap(spec_id, own, other_id, other, mark)
                if issue:
                    result.issues.append(issue)


def _bundled_or_nothing() -> list[CompiledSpec]:
    try:
        return bundled_compiled()
    except SpecInvalid:
        return []  # a broken bundled spec is linted on its own; it selects nothing


def _overlap(spec_id: str, own: dict, other_id: str, other: dict, mark) -> SpecIssue | None:
    """Two applies_to conditions that can both hold: an error when they provably do (the
    same ``equals`` on the same ``given``), a warning when lint cannot tell."""
    if own.get("given") == other.get("given") and "equals" in own and "equals" in other:
        if own["equals"] != other["equals"]:
            return None
        return SpecIssue(
            f"applies_to of {spec_id!r} and {other_id!r} both hold when {own['given']} "
            f"equals {own['equals']!r}: every such packet would be refused (several specs "
            f"apply); change one applies_to (a new revision pins its own value)", mark,
            APPLIES_TO_OVERLAP)
    return SpecIssue(
        f"cannot tell whether applies_to of {spec_id!r} and {other_id!r} exclude each other "
        f"(only the same given with different equals values can be checked); if both hold "
        f"for a packet, it is refused", mark, APPLIES_TO_UNDECIDED, WARNING)


# ------------------------------------------------------------------------- output
def render_text(results: list[LintResult]) -> str:
    lines = []
    for result in results:
        for issue in result.issues:
            lines.append(str(issue))
        if not result.errors:
            warned = f", {len(result.warnings)} warnings" if result.warnings else ""
            lines.append(f"{result.ref}: ok ({result.spec_id}, "
                         f"{len(result.compiled.rules)} rules{warned})")
    return "\n".join(lines)


def render_github(results: list[LintResult]) -> str:
    """GitHub Actions workflow commands: one annotation per issue on the spec's line."""
    lines = []
    for result in results:
        for issue in result.issues:
            where = [f"file={_property(issue.mark.file)}", f"line={issue.mark.line}",
                     f"col={issue.mark.column}"] if issue.mark else []
            where.append(f"title={_property(issue.code)}")
            lines.append(f"::{issue.severity} {','.join(where)}::{_data(issue.message)}")
    return "\n".join(lines)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(str(text)).replace(":", "%3A").replace(",", "%2C")
