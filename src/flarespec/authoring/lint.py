"""``spec lint``: every issue of a spec file at once, errors and warnings.

Loading a spec stops at the first step that fails (a shape error means the compiler cannot
trust the data). Lint goes further: it reads the file leniently, still resolves
and compiles it when the shape step found problems (reporting what that finds whenever it
does not trip over the broken shape), then adds what only matters while editing: the places
that still read a dropped document; placeholders a binding cannot fill (authoring/placeholders.py);
warnings for a missing ``applies_to``, a child's constant that
writes out what a parent computes (authoring/restated.py) and rule literals that repeat a
constant; and
``applies_to`` conditions that overlap another spec of the library (an error naming both
specs: the selector would refuse every packet both accept).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from flarespec.authoring.literals import literal_constant_warnings
from flarespec.authoring.names_lint import name_issues
from flarespec.authoring.placeholders import placeholder_issues
from flarespec.authoring.restated import restated_constant_warnings
from flarespec.authoring.shape_lint import shape_issues
from flarespec.output.model import NONE, PASS, Finding, Report, Rule, Section
from flarespec.spec.codes import CODES
from flarespec.spec import metaschema
from flarespec.spec.compile import CompiledSpec, compile_spec
from flarespec.spec.entry_name import entry_file_name, names_exclusive
from flarespec.spec.errors import ERROR, WARNING, SpecInvalid, SpecIssue, did_you_mean
from flarespec.spec.load import SpecFile, SpecLibrary, bundled_spec_dir, read_spec_bytes
from flarespec.spec.open import bundled_compiled, bundled_library, is_path, unknown_spec
from flarespec.spec.resolve import ResolvedSpec, dropped_document_references, resolve
from flarespec.spec.tokens import find_tokens, lookup_constant
from flarespec.spec.yamlmarks import (
    Mark, SpecYamlError, load_marked, mark_at, marked_strings, plain)

NO_APPLIES_TO = "spec.no-applies-to"
APPLIES_TO_OVERLAP = "spec.applies-to-overlap"
APPLIES_TO_UNDECIDED = "spec.applies-to-undecided"
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
        result.issues = blame_overrides(result.issues, _chain_of(spec_file, library))
        return result
    dropped = dropped_document_references(resolved)
    result.issues.extend(dropped)
    result.issues.extend(resolved.replacement_issues)
    _compile(resolved, result, _explained_by(dropped, resolved.dropped_documents))
    result.issues.extend(placeholder_issues(resolved))
    result.issues.extend(_warnings(resolved))
    result.issues = blame_overrides(result.issues, resolved.chain)
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
        result.issues.extend(name_issues(compiled))


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
    found.extend(restated_constant_warnings(resolved))
    return found


# ------------------------------------------------------------------------- locations

def _spelled_constants(text: str) -> list[tuple[str, str]]:
    """(head constant, dotted path below it) of every well-formed ``${name.path|filter}`` of
    ``text`` (spec/tokens.py, the grammar resolution reads)."""
    return [(token.head, token.name[len(token.head):]) for token in find_tokens(text)]



def _chain_of(spec_file: SpecFile, library: SpecLibrary) -> list[SpecFile]:
    """The file and its ancestors as far as they can be found (resolve failed: lint still
    wants to know which layer defined what)."""
    chain = [spec_file]
    while isinstance(chain[-1].data.get("extends"), str):
        try:
            parent = library.get(chain[-1].data["extends"])
        except SpecInvalid:
            break
        if parent is None or any(parent.id == layer.id for layer in chain):
            break
        chain.append(parent)
    return chain


def blame_overrides(issues: list[SpecIssue], chain: list[SpecFile]) -> list[SpecIssue]:
    """Issues marked in an ancestor file whose cause is a descendant's constant: each is
    moved to the override that caused it (the descendant's ``constants`` key, as deep as
    the override spells the path), and names the place it surfaced at.

    A mapping constant restated by a child replaces the parent's whole value (constants
    merge by top-level name), so a child writing ``prefix: {tokens: 2048}`` makes every
    ``${prefix.seed_kind}`` of the parent unknown; the parent's file is not where the fix
    goes. An issue is moved when the place it is marked at reads ``${NAME...}`` (the
    issue's own ``${...}`` for an unknown constant, else the text at its line and column)
    and a layer below the marked file restates ``NAME``. An unknown constant is moved only
    when the marked file's own view of the constants (itself and its ancestors) has it."""
    if len(chain) < 2:
        return issues
    layers = {str(layer.path): index for index, layer in enumerate(chain)}
    sources: dict[str, list[str]] = {}
    kept: list = []
    moved: dict = {}  # (mark, code, message, why) -> the places it was read at
    for issue in issues:
        blamed = _blamed(issue, chain, layers, sources)
        if blamed is None:
            kept.append(issue)
            continue
        key = (blamed[0], issue.code, issue.message, blamed[1], issue.severity)
        if key not in moved:
            kept.append(key)
            moved[key] = []
        moved[key].append(str(issue.mark))
    return [item if isinstance(item, SpecIssue) else
            SpecIssue(f"{item[2]} (read at {', '.join(moved[item])}){item[3]}", item[0],
                      item[1], item[4]) for item in kept]


def _blamed(issue: SpecIssue, chain, layers: dict, sources: dict) -> tuple | None:
    """(mark of the override, why) when a descendant's constant caused ``issue``."""
    index = layers.get(str(issue.mark.file)) if issue.mark else None
    if not index:  # not marked in an ancestor
        return None
    for head, rest in _references_at(issue, sources):
        owner = next((k for k in range(index) if head in _constants(chain[k])), None)
        if owner is None:
            continue
        dotted = head + rest
        if issue.code == "spec.unknown-constant" and not _defined_in(chain[index:], dotted):
            continue
        layer = chain[owner]
        mark, spelled = _override_mark(_constants(layer), head, rest)
        if mark is None:
            continue
        why = (f"; {chain[index].id} has {dotted}, and restating constant {head!r} replaces "
               f"its whole value (constants are not merged member by member): restate the "
               f"members you keep" if issue.code == "spec.unknown-constant" else
               f"; the value comes from this override of {spelled!r}")
        return mark, why
    return None


def _constants(layer: SpecFile) -> dict:
    constants = layer.data.get("constants")
    return constants if isinstance(constants, dict) else {}


def _defined_in(layers: list[SpecFile], dotted: str) -> bool:
    """``dotted`` names a value in the constants these layers (a file and its ancestors)
    merge to: top-level names, the nearest layer first."""
    head = dotted.split(".")[0]
    for layer in layers:
        if head in _constants(layer):
            try:
                lookup_constant(_constants(layer), dotted)
            except KeyError:
                return False
            return True
    return False


def _override_mark(constants: dict, head: str, rest: str):
    """(mark, dotted key) of the deepest key of the override that the path spells."""
    marks = getattr(constants, "key_marks", {})
    mark, value, spelled = marks.get(head), constants.get(head), head
    for part in [p for p in rest.split(".") if p]:
        if isinstance(value, dict) and part in value:
            mark = getattr(value, "key_marks", {}).get(part, mark)
            value, spelled = value[part], f"{spelled}.{part}"
        else:
            break
    return mark, spelled


def _references_at(issue: SpecIssue, sources: dict) -> list[tuple[str, str]]:
    """(head, dotted rest) of the ``${...}`` the issue is about: those its message quotes
    for a constant's own code, else those written at its line from its column on."""
    if issue.code in ("spec.unknown-constant", "spec.constant-type", "spec.constant-filter"):
        found = _spelled_constants(issue.message)
        if found:
            return found
    lines = sources.get(issue.mark.file)
    if lines is None:
        try:
            lines = Path(issue.mark.file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            lines = []
        sources[issue.mark.file] = lines
    if not 0 < issue.mark.line <= len(lines):
        return []
    return _spelled_constants(lines[issue.mark.line - 1][max(issue.mark.column - 1, 0):])


# ------------------------------------------------------------------------- applies_to
def _check_overlaps(results: list[LintResult]) -> None:
    """Each linted spec against every other spec of the library: the linted ones replace
    a bundled spec of the same id (a file being edited is the new version of it). Only
    specs that could both be tried for one entry file are compared: two whose entry
    ``file_name`` no name can match both never meet in selection (spec/entry_name.py)."""
    linted = {r.spec_id: r for r in results if r.compiled is not None}
    library = {spec.id: _selection_of(spec) for spec in _bundled_or_nothing()
               if spec.id not in linted}
    library.update({spec_id: _selection_of(r.compiled) for spec_id, r in linted.items()})
    for spec_id, result in linted.items():
        own, own_name = library[spec_id]
        if own is None:
            continue
        mark = result.compiled.resolved.data.key_marks.get("applies_to")
        for other_id, (other, other_name) in sorted(library.items()):
            if other_id != spec_id and other is not None \
                    and not names_exclusive(own_name, other_name):
                issue = _overlap(spec_id, own, other_id, other, mark)
                if issue:
                    result.issues.append(issue)


def _selection_of(spec: CompiledSpec) -> tuple[dict | None, str | None]:
    """What selection reads of a spec: its applies_to and its entry's file_name."""
    return plain(spec.resolved.data.get("applies_to")), entry_file_name(spec.resolved.data)


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
        f"(only the same given with different equals values can be checked, or entry "
        f"file_name values that no file name matches both); if both hold for a packet, it "
        f"is refused", mark, APPLIES_TO_UNDECIDED, WARNING)


# ------------------------------------------------------------------------- output
def lint_report(results: list[LintResult], strict: bool = False) -> Report:
    """Every issue a finding at its file:line:column (code as the rule); one section per
    spec, ending ``REF: ok (ID, N rules)`` when it has no error (then also one passing
    check). ``strict``: warnings fail too."""
    sections = []
    for result in results:
        findings = [_finding(issue, strict) for issue in result.issues]
        if result.errors:
            count = len(result.errors)
            heading = f"{result.ref}: {count} error{'s' * (count != 1)}"
        else:
            count = len(result.warnings)
            warned = f", {count} warning{'s' * (count != 1)}" if count else ""
            heading = f"{result.ref}: ok ({result.spec_id}, {len(result.compiled.rules)} rules{warned})"
            findings.insert(0, Finding("spec.lint", heading, NONE, PASS, file=result.ref
                                       if is_path(result.ref) else None,
                                       title=f"{result.ref}: ok"))
        sections.append(Section(None, findings, notes=[] if result.errors else [heading]))
    failed = any(r.errors or (strict and r.warnings) for r in results)
    errors = sum(len(r.errors) for r in results)
    warnings = sum(len(r.warnings) for r in results)
    title = (f"spec lint: {len(results)} spec{'s' * (len(results) != 1)}, {errors} "
             f"error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}")
    anchor = next((r.ref for r in results if is_path(r.ref)), None)
    return Report("spec lint", title, not failed, sections, rules=_code_rules(),
                  data={"specs": [result.as_dict() for result in results]}, anchor=anchor)


def _code_rules() -> dict[str, Rule]:
    """Each code described from spec/codes.py (SARIF's rules)."""
    return {code: Rule(code, meaning[0].upper() + meaning[1:],
                       f"{meaning[0].upper() + meaning[1:]}. Spec issue code {code}: "
                       f"docs/spec-language.md, \"Spec errors\".")
            for code, meaning in CODES.items()}


def _finding(issue: SpecIssue, strict: bool) -> Finding:
    level = ERROR if issue.severity == ERROR or strict else WARNING
    mark = issue.mark
    return Finding(issue.code, issue.message, level, file=mark.file if mark else None,
                   line=mark.line if mark and mark.line > 0 else None,
                   column=mark.column if mark and mark.column > 0 else None,
                   key=(issue.code, Path(mark.file).name if mark else None, issue.message))
