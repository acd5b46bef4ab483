"""``spec lint``: every issue of a spec file at once, errors and warnings.

Loading a spec stops at the first step that fails (a shape error means the compiler cannot
trust the data). Lint goes on after every step: it reads the file leniently (shape errors
recorded), resolves it leniently (an unknown constant or a bad ``${...}`` recorded, the text
left as written), compiles it part by part (a document, iteration, rule or section the
compiler trips over on broken data is left out, and said so unless an earlier error lies in
it), runs the shape and name checks over what compiled, then adds what only matters while
editing: the places that still read a dropped document; placeholders a binding cannot fill
(authoring/placeholders.py); warnings for a missing ``applies_to``, a child's constant that
writes out what a parent computes (authoring/restated.py) and rule literals that repeat a
constant; and ``applies_to``
conditions that overlap another spec of the library (an error naming both specs: the
selector would refuse every packet both accept). A later step's issue that only repeats an
earlier one (the same line and name) is left out.

Each issue is located in the file that caused it (``blame_overrides``): one that surfaces
in a parent file because of the linted file's edit (a constant it restates, a document,
rule or member it drops) is moved to that edit's line, naming where it surfaced.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from flarespec.authoring.literals import literal_constant_warnings
from flarespec.authoring.names_lint import name_issues
from flarespec.authoring.placeholders import literal_placeholder_issues, placeholder_issues
from flarespec.authoring.restated import restated_constant_warnings
from flarespec.authoring.shape_lint import NO_SHAPE, shape_issues
from flarespec.authoring.writer_lint import writer_issues
from flarespec.output.model import NONE, PASS, Finding, Report, Rule, Section
from flarespec.compiler.codes import CODES
from flarespec.compiler import metaschema
from flarespec.compiler.compile import CompiledSpec, Crash, compile_leniently
from flarespec.compiler.entry_name import entry_file_name, names_exclusive
from flarespec.compiler.errors import ERROR, WARNING, SpecInvalid, SpecIssue, did_you_mean
from flarespec.compiler.load import SpecFile, SpecLibrary, bundled_spec_dir, read_spec_bytes
from flarespec.compiler.open import bundled_compiled, bundled_library, is_path, unknown_spec
from flarespec.compiler.resolve import ResolvedSpec, dropped_document_references, resolve
from flarespec.compiler.tokens import Token, TokenError, find_tokens, lookup_constant, value_of
from flarespec.compiler.yamlmarks import (
    Mark, SpecYamlError, load_marked, mark_at, marked_strings, plain)

NO_APPLIES_TO = "spec.no-applies-to"
APPLIES_TO_OVERLAP = "spec.applies-to-overlap"
APPLIES_TO_UNDECIDED = "spec.applies-to-undecided"
DRAFT = "spec.draft"
STEP_SKIPPED = "spec.lint-step-skipped"


@dataclass
class LintResult:
    ref: str
    spec_id: str | None = None
    issues: list[SpecIssue] = field(default_factory=list)
    compiled: CompiledSpec | None = None  # when it compiles without an issue
    resolved: ResolvedSpec | None = None  # when it resolves (perhaps with issues)

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
    dropped = _step(result, "the dropped-document check", dropped_document_references,
                    resolved)
    result.issues.extend(resolved.replacement_issues)
    _compile(resolved, result, _explained_by(dropped, resolved))
    _step(result, "the placeholder check", placeholder_issues, resolved)
    _step(result, "the placeholder-in-literal check", literal_placeholder_issues, resolved)
    result.issues.extend(writer_issues(result.compiled))  # authoring/writer_lint.py
    _step(result, "the warnings", _warnings, resolved)
    result.issues = blame_overrides(result.issues, resolved.chain)
    return result


def _step(result: LintResult, what: str, check: Callable, *args) -> list[SpecIssue]:
    """The issues of one later check, added to ``result``; a check that crashes on data
    an earlier error broke adds nothing, one that crashes on data no error explains says
    so (``spec.lint-step-skipped``): never a traceback, never a silent loss."""
    try:
        found = list(check(*args))
    except Exception as error:  # noqa: BLE001 - reported as an issue below
        _skipped(result, what, error)
        return []
    result.issues.extend(found)
    return found


def _skipped(result: LintResult, what: str, error: Exception, mark=None) -> None:
    if not result.errors:
        result.issues.append(SpecIssue(
            f"{what} not run: it failed on this spec ({type(error).__name__}: {error}), and "
            f"no error explains why: a flarespec bug, please report it with this spec", mark,
            STEP_SKIPPED))


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
    """Resolved leniently, its issues added to ``result``; None when there is nothing to
    merge (an unknown or cyclic parent) or resolution crashed on a broken shape."""
    try:
        resolved = resolve(spec_file, library, lenient=True)
    except SpecInvalid as problem:
        result.issues.extend(problem.issues)
        return None
    except Exception as error:  # noqa: BLE001 - after shape errors, reported already
        _skipped(result, "resolution (extends, constants)", error,
                 getattr(spec_file.data, "mark", None))
        return None
    result.issues.extend(resolved.issues)
    result.resolved = resolved
    return resolved


# issues of resolution whose text stays unsubstituted: what a later step says of that text
_TOKEN_ISSUES = frozenset({"spec.unknown-constant", "spec.constant-type",
                           "spec.constant-filter", "spec.constant-syntax",
                           "spec.constant-expression"})


def _explained_by(dropped: list[SpecIssue], resolved: ResolvedSpec
                  ) -> Callable[[SpecIssue], bool]:
    """Whether a later step's issue only repeats an earlier cause, the same line and the
    same name: a dropped-document issue (an unknown target, an unknown document in a
    kind's list, file metadata of what is no longer a document: the dropped-document issue
    says more, which drop), or a ``${...}`` resolution left as written (the path or
    template that still holds it)."""
    names = resolved.dropped_documents
    lines = {(i.mark.file, i.mark.line) for i in dropped if i.mark}
    quoted = [f"'{name}'" for name in names] + [f" {name}" for name in names]
    unresolved = {(i.mark.file, i.mark.line) for i in resolved.issues
                  if i.mark and i.code in _TOKEN_ISSUES}
    tokens = {token.text for i in resolved.issues if i.code in _TOKEN_ISSUES
              for token in find_tokens(i.message)}

    def explained(issue: SpecIssue) -> bool:
        at = (issue.mark.file, issue.mark.line) if issue.mark else None
        if at in lines and (any(q in issue.message for q in quoted)
                            or "exists only for documents" in issue.message):
            return True
        return (at in unresolved and "${" in issue.message) or \
            any(token in issue.message for token in tokens)
    return explained


def _compile(resolved: ResolvedSpec, result: LintResult, explained: Callable) -> None:
    """Compiled part by part, then the shape and name checks over what compiled."""
    try:
        compiled, issues, crashes = compile_leniently(resolved)
    except Exception as error:  # noqa: BLE001 - reported by _skipped
        _skipped(result, "compilation", error, getattr(resolved.data, "mark", None))
        return
    earlier = [i.mark for i in result.errors if i.mark]
    result.issues.extend(i for i in issues if not explained(i))
    result.issues.extend(_crash_issue(crash) for crash in crashes
                         if not _explained_crash(crash, earlier))
    if not result.errors:
        result.compiled = compiled
    declared_but_failed = _shapes_not_compiled(compiled)
    unheld = _reads_an_unheld_member(resolved)
    _step(result, "the shape check",
          lambda: [i for i in shape_issues(compiled) if (i.code != NO_SHAPE
                   or i.mark not in declared_but_failed.values()) and not unheld(i)])
    if not declared_but_failed:  # a name a failed shape requires would seem required nowhere
        _step(result, "the name check", name_issues, compiled)


# resolve.py's spec.document-shape for a member key ${...} naming a path with no holder
_UNHELD = re.compile(r"member key .* is the path '([^']+)', but these members declare no "
                     r"member '([^']+)' to hold it")


def _reads_an_unheld_member(resolved: ResolvedSpec) -> Callable[[SpecIssue], bool]:
    """Whether an undeclared-member issue reads a member path that resolution could not
    declare (a key ``${field.key}`` that is ``a.b`` where no member ``a`` holds it): the
    same cause, said once, at the key (or the override that made it)."""
    unheld = []
    for issue in resolved.issues:
        found = _UNHELD.match(issue.message) if issue.code == "spec.document-shape" else None
        if found:
            path, holder = found.groups()
            unheld.append((f"reads member {holder.split('.')[-1]!r} of ", re.compile(
                rf"(?<!\w){re.escape(path)}(?!\w)|/{re.escape(path.replace('.', '/'))}(?!\w)")))
    return lambda issue: issue.code == "spec.undeclared-member" and any(
        holder in issue.message and path.search(issue.message) for holder, path in unheld)


def _shapes_not_compiled(compiled: CompiledSpec) -> dict:
    """Documents that declare a shape whose compilation failed (its error is reported):
    name -> the document's mark."""
    documents = compiled.resolved.data.get("documents") or {}
    return {name: getattr(source, "mark", None) for name, source in documents.items()
            if isinstance(source, dict) and "shape" in source
            and (name not in compiled.documents or compiled.documents[name].shape is None)}


def _crash_issue(crash: Crash) -> SpecIssue:
    return SpecIssue(
        f"{crash.what} not compiled: the compiler failed on it ({type(crash.error).__name__}: "
        f"{crash.error}) and no error explains why, so its own errors are not reported: a "
        f"flarespec bug, please report it with this spec", _first_mark(crash.source),
        STEP_SKIPPED)


def _explained_crash(crash: Crash, earlier: list[Mark]) -> bool:
    """An earlier error (a shape error, an unresolved constant) inside the part the
    compiler failed on explains the failure."""
    span = _span(crash.source)
    return span is not None and any(
        mark.file == span[0] and span[1] <= mark.line <= span[2] for mark in earlier)


def _span(node) -> tuple[str, int, int] | None:
    """(file, first line, last line) of the marks inside a spec node."""
    marks, stack = [], [node]
    while stack:
        value = stack.pop()
        marks.append(getattr(value, "mark", None))
        marks.extend(getattr(value, "key_marks", {}).values())
        marks.extend(getattr(value, "item_marks", None) or ())
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    marks = [m for m in marks if isinstance(m, Mark)]
    if not marks:
        return None
    return marks[0].file, min(m.line for m in marks if m.file == marks[0].file), \
        max(m.line for m in marks if m.file == marks[0].file)


def _first_mark(node) -> Mark | None:
    """The node's own mark, else the first line of the marks inside it."""
    if isinstance(getattr(node, "mark", None), Mark):
        return node.mark
    span = _span(node)
    return Mark(span[0], span[1], 1) if span else None


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

def _spelled_constants(text: str) -> list[Token]:
    """Every well-formed ``${name.path|filter}`` of ``text`` (compiler/tokens.py, the grammar
    resolution reads); an expression reads several names and stays out."""
    return [token for token in find_tokens(text) if token.expression is None]



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
    """Issues marked in an ancestor file whose cause is an edit of a descendant (the linted
    file, chain[0], or a layer between): each is moved to the edit that caused it and names
    the place it surfaced at (``read at …``, and in ``related``). An edit is

    * a place the issue itself involves (``SpecIssue.related``) in a descendant: the
      ``drop_documents`` entry of a dropped document still read, the constant entry that
      spells a name another constant does not;
    * a restated constant: the place the issue is marked at reads ``${NAME...}`` (the
      issue's own ``${...}`` for an unknown constant, else the text at its line and
      column, else, where that line reads none, a ``${...}`` of the node marked there
      whose value the message quotes) and a descendant restates ``NAME``. The issue goes to
      the override, as deep as it spells the path, or to a dotted name (``a.b: v``, one
      member overridden) on the path or inside it. A mapping constant restated by a child
      replaces the parent's whole value (constants merge by top-level name), so a child
      writing ``prefix: {tokens: 2048}`` makes every ``${prefix.seed_kind}`` of the parent
      unknown: moved only when the marked file's own view of the constants (itself and its
      ancestors) has it;
    * a ``drop_rules`` entry naming the rule a ``requires`` names, a ``drop_members`` entry
      naming the member an undeclared-member or name issue quotes."""
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
        message = issue.message.replace(f" (at {blamed[0]})", "")
        key = (blamed[0], issue.code, message, blamed[1], issue.severity)
        if key not in moved:
            kept.append(key)
            moved[key] = []
        moved[key].extend(m for m in (issue.mark, *issue.related)
                          if m != blamed[0] and m not in moved[key])
    return [item if isinstance(item, SpecIssue) else
            SpecIssue(f"{item[2]} (read at {', '.join(map(str, moved[item]))}){item[3]}",
                      item[0], item[1], item[4], related=tuple(moved[item])) for item in kept]


def _blamed(issue: SpecIssue, chain, layers: dict, sources: dict) -> tuple | None:
    """(mark of the edit, why) when a descendant's edit caused ``issue``."""
    index = layers.get(str(issue.mark.file)) if issue.mark else None
    if not index:  # not marked in an ancestor
        return None
    below = next((m for m in issue.related if layers.get(str(m.file), index) < index), None)
    if below is not None:
        return below, ""
    return _override_cause(issue, chain, index, sources) or _drop_cause(issue, chain, index)


def _override_cause(issue: SpecIssue, chain, index: int, sources: dict) -> tuple | None:
    """(mark, why) of the descendant's constant override the issue's place reads."""
    view = _constants_view(chain[:index])
    candidates = _references_at(issue, sources)
    quoted = [token for token in candidates if _quoted(issue, token, view)]
    if not candidates:  # the line reads no ${...}: the node marked there, by what is quoted
        quoted = [token for token in _references_in_node(chain[index].data, issue.mark)
                  if _quoted(issue, token, view)]
    for token in quoted + [token for token in candidates if token not in quoted]:
        head, dotted = token.head, token.name
        owner = next((k for k in range(index) if _override_at(_constants(chain[k]), dotted)),
                     None)
        if owner is None:
            continue
        if issue.code == "spec.unknown-constant" and not _defined_in(chain[index:], dotted):
            continue
        layer = chain[owner]
        mark, spelled = _override_at(_constants(layer), dotted)
        if mark is None:
            continue
        why = (f"; {chain[index].id} has {dotted}, and restating constant {head!r} replaces "
               f"its whole value: restate the members you keep, or write only the member "
               f"you change as a dotted name ({head}.MEMBER: value)" if issue.code == "spec.unknown-constant" else
               f"; the value comes from this override of {spelled!r}")
        return mark, why
    return None


def _constants_view(layers: list[SpecFile]) -> dict:
    """The constants the descendants' overrides give, by top-level name (nearest first)."""
    view: dict = {}
    for layer in reversed(layers):
        view.update(_constants(layer))
    return view


def _quoted(issue: SpecIssue, token: Token, view: dict) -> bool:
    """Whether the issue's message quotes the value the descendants give the token (as its
    filters spell it: ``${a.key|pointer}`` is ``/b/c``); a value shorter than 3 characters
    is too common to tell."""
    if token.head not in view and token.name not in view:  # a.b: a child's dotted name
        return False
    try:
        value = value_of(token, lambda dotted: view[dotted] if dotted in view else
                         lookup_constant(view, dotted))
    except (KeyError, TokenError):
        return False
    return isinstance(value, (str, int, float)) and not isinstance(value, bool) \
        and len(str(value)) >= 3 and str(value) in issue.message


def _references_in_node(data, mark: Mark) -> list[Token]:
    """Every ``${...}`` in the node of ``data`` marked at ``mark`` (a rule, a shape, a
    document: what an issue marked at a node's opening is about)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if getattr(value, "mark", None) == mark:
            return _tokens_in(value)
        if isinstance(value, dict):
            marks = getattr(value, "key_marks", {})
            hit = next((k for k in value if marks.get(k) == mark), None)
            if hit is not None:
                return _tokens_in(value[hit])
            stack.extend(value.values())
        elif isinstance(value, list):
            marks = getattr(value, "item_marks", None) or []
            hit = next((i for i, m in enumerate(marks) if m == mark), None)
            if hit is not None:
                return _tokens_in(value[hit])
            stack.extend(value)
    return []


def _tokens_in(value) -> list[Token]:
    return [token for text, _ in marked_strings(value) for token in _spelled_constants(text)]


def _drop_cause(issue: SpecIssue, chain, index: int) -> tuple | None:
    """(mark, why) of a descendant's drop_rules or drop_members entry the issue names."""
    for layer in chain[:index]:
        if issue.code == "spec.requires-unknown":
            for name, mark in _entries(layer.data.get("drop_rules")):
                if issue.message.startswith(f"requires names {name!r}"):
                    return mark, (f"; {layer.id} drops rule {name!r} here: drop or restate "
                                  f"the rules that require it")
        if issue.code in ("spec.undeclared-member", "spec.name-not-required"):
            for name, mark in _dropped_members(layer.data.get("shapes")):
                if f"{name!r}" in issue.message:
                    return mark, (f"; {layer.id} drops member {name!r} here (drop_members): "
                                  f"keep it, or drop or restate what reads it")
    return None


def _entries(value) -> list[tuple[str, Mark]]:
    """(name, mark) of each string item of a marked list."""
    if not isinstance(value, list):
        return []
    marks = getattr(value, "item_marks", None) or [None] * len(value)
    return [(name, mark) for name, mark in zip(value, marks)
            if isinstance(name, str) and mark is not None]


def _dropped_members(shapes) -> list[tuple[str, Mark]]:
    """Every ``drop_members`` entry anywhere inside a file's ``shapes``."""
    found, stack = [], [shapes]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found.extend(_entries(value.get("drop_members")))
            stack.extend(v for k, v in value.items() if k != "drop_members")
        elif isinstance(value, list):
            stack.extend(value)
    return found


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


def _override_at(constants: dict, dotted: str) -> tuple | None:
    """(mark, dotted key) of the entry of one file's constants that gives the path
    ``dotted`` its value: the deepest key of a whole constant the path spells, or a dotted
    name (``a.b: v``, one member of an inherited constant) on the path or inside the value
    it reads; None when the file sets neither."""
    head, _, rest = dotted.partition(".")
    if head in constants:
        return _override_mark(constants, head, rest)
    steps = dotted.split(".")
    name = next((name for name in constants if "." in str(name) and
                 str(name).split(".")[:len(steps)] == steps[:len(str(name).split("."))]), None)
    return None if name is None else (constants.key_marks.get(name), name)


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


def _references_at(issue: SpecIssue, sources: dict) -> list[Token]:
    """The ``${...}`` the issue is about: those its message quotes for a constant's own
    code, else those written at its line from its column on."""
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
    ``file_name`` no name can match both never meet in selection (compiler/entry_name.py)."""
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
    """Each code described from compiler/codes.py (SARIF's rules)."""
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
