"""The interpreter: applies a compiled spec to the documents under one root.

Documents are loaded lazily, once per binding, from a confined file store. Every rule runs
over its iteration's bindings; every failure becomes a violation carrying rule id, file and
location. A document that cannot be loaded is one violation; rules that need it are skipped
for that binding instead of cascading, and so is a rule whose ``requires`` failed there.
The metric is computed only from a clean report.

What a person needs to find the broken byte (the file's line, the file and place an
expected value was read from, filled-in references, readable values) is worked out only
for a violation the report keeps: passing paths and counted-only violations pay nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator

from flarespec.engine.access import Accessor
from flarespec.engine.hooks import HOOKS
from flarespec.engine.kinds import Failure
from flarespec.engine.values import strict_equal
from flarespec.engine.paths import Match, child_location
from flarespec.engine.plans import Planner
from flarespec.engine.refs import (
    BINDING_METADATA,
    MESSAGE_FIELDS,
    ArgRef,
    ArgTemplate,
    Condition,
    Ref,
    compile_ref,
    expected_ref,
    first_step,
    relative_location,
    shown_ref,
)
from flarespec.engine.report import Report, Violation, shown
from flarespec.loaders import LOADERS, load_bytes_head, locate_line
from flarespec.loaders.errors import LoadError
from flarespec.loaders.files import FileStore
from flarespec.loaders.limits import document_limit, gc_paused

INTERNAL_ERROR = "engine.internal-error"
# loaders that do not read their file whole: it is hashed by a streamed read instead
_NOT_READ_WHOLE = ("bytes", "directory")
METRIC_UNAVAILABLE = "metric.unavailable"


class Unavailable(Exception):
    """Something this check needs failed to load; that failure is already reported."""


class Unresolvable(ValueError):
    """A placeholder or pinned binding has no value here: a violation, never a silent skip."""


class ArgumentUnresolved(Exception):
    def __init__(self, ref: Ref, found: int):
        super().__init__(ref)
        self.ref, self.found = ref, found


class Binding:
    """One element of an iteration. Its label is rendered only when first asked for (by a
    violation, mostly): most bindings pass, and a million rendered labels cost seconds.
    Nothing is allocated per binding for that: it keeps its parent's scope (never its own,
    which holds it: a reference cycle per binding would leave every discarded binding to the
    cyclic garbage collector) and the shared renderer."""

    __slots__ = ("name", "match", "index", "file", "parent", "_label", "_render")

    def __init__(self, name: str, match: Match, index: int, file: str | None, parent: dict,
                 render):
        self.name, self.match, self.index, self.file = name, match, index, file
        self.parent, self._label, self._render = parent, None, render

    @property
    def label(self) -> str:
        if self._label is None:
            self._label = ""  # a label template naming its own label sees "", as it always did
            self._label = self._render(self)
        return self._label

    @property
    def value(self) -> Any:
        return self.match.value

    @property
    def location(self) -> str:
        return self.match.location


@dataclass
class _Loaded:
    value: Any
    path: str | None
    failed: bool = False
    loader: str | None = None


@lru_cache(maxsize=None)
def _placeholder_ref(text: str) -> Ref:
    return compile_ref(text)


_VALUES = ("expected", "actual")  # message placeholders shown as JSON values


def _value_at(value: Any, suffix: str) -> tuple[bool, Any]:
    """(found, value) at a relative location (``.a[0]``) inside ``value``."""
    while suffix:
        step = first_step(suffix)
        if step is None:
            return False, None
        key, suffix = step
        if isinstance(value, dict) and not isinstance(key, int) and key in value:
            value = value[key]
        elif isinstance(value, list) and isinstance(key, int) and key < len(value):
            value = value[key]
        else:
            return False, None
    return True, value


def _member(value: Any, parts: list[str]) -> tuple[bool, Any]:
    """(found, value) of a dotted placeholder's member: ``a.0.b`` (a digit indexes a list)."""
    for part in parts:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isascii() and part.isdigit() \
                and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def _is_expected(value: Any, expected: Any) -> bool:
    """The value read at a place is the failure's expected value (or one of its bounds:
    ``range`` reports ``{"max": 2}``)."""
    if strict_equal(value, expected):
        return True
    return isinstance(expected, dict) and any(strict_equal(value, v) for v in expected.values())


def _matched(found: int) -> str:
    return "matched nothing" if not found else \
        f"matched {found} places, expected exactly one"


class Evaluation:
    def __init__(self, spec, entry_path: str | Path, *, pass_checks: bool = True,
                 shapes: bool = True):
        """``pass_checks=False`` runs every check on the reporting path alone (the tests
        compare both ways; see plans.py). ``shapes=False`` loads documents without checking
        their shapes: only for choosing a spec by ``applies_to``, where the packet may be of
        another revision whose documents have other shapes (it is then validated in full)."""
        entry_path = Path(entry_path)
        self.spec = spec
        self._check_shapes = shapes
        self._planner = Planner(self) if pass_checks else None
        self.entry_name = entry_path.name
        self.root = entry_path.parent
        self.report = Report(spec.id)
        self._store: FileStore | None = None
        self._documents: dict[tuple, _Loaded] = {}
        self._paths: dict[tuple, str | None] = {}
        self._scopes: dict[str, list[dict]] = {}
        self._static: dict[int, bool] = {}
        self._accessors: dict[int, Accessor] = {}
        self._by_path: dict[str, _Loaded] = {}  # loaded documents, for line numbers
        self._emitted = 0  # violations emitted so far, kept or only counted
        # requires: the binding keys where a required rule failed or could not run
        self._failed_at: dict[str, set[tuple]] = {
            rule_id: set() for rule in spec.rules for rule_id in rule.requires}
        self._depth = {rule.id: len(spec.iterations[rule.for_each].chain)
                       if rule.for_each else 0 for rule in spec.rules}
        # the iterations each document instance depends on, outermost first (looked up per
        # reference, so once here rather than per binding)
        self.document_chains = {name: spec.iterations[document.each].chain if document.each
                                 else () for name, document in spec.documents.items()}
        self._leaves = set(spec.iterations) - {it.parent for it in spec.iterations.values()} \
            - {document.each for document in spec.documents.values()}
        self._unresolved: set[tuple] = set()  # (iteration, parent key) already reported
        # iterations whose elements could not be found under some parent (document failed)
        self._incomplete: set[str] = set()
        # path -> the first document that reads it whole; of those paths, the ones read
        # already; and what a document's loader gave (or raised) when its file was read
        # early for a digest, kept for the document (see digest)
        self._whole_paths: dict[str, Any] = {}
        self._read: set[str] = set()
        self._parsed_ahead: dict[str, tuple[Any, Any]] = {}
        # the elements of a pinned iteration, per (iteration, ancestor bindings): see pin
        self._siblings: dict[tuple, tuple[tuple, list[dict]]] = {}

    # ------------------------------------------------------------------ public
    @gc_paused
    def run(self) -> Report:
        """Apply every rule, then compute identities and (on a clean report) the metric.

        The cyclic garbage collector is paused meanwhile, as for a parse: a run allocates a
        few objects per element (matches, scopes, bindings) next to the millions the loaded
        documents hold, and every collection those allocations trigger walks them all (a
        third of a run over a million-event stream). A run makes no cyclic garbage per
        element: what it discards is freed by reference counting."""
        for rule in self.spec.rules:
            self._apply(rule)
        self._load_all_documents()
        self.report.identities = self._identities()
        if self.report.ok and self.spec.metric is not None:
            self._compute_metric()
        self._scopes.clear()  # bindings refer back to this evaluation: free them now
        self._planner = None  # so do the plans' closures
        self._accessors.clear()  # and the accessors
        self._siblings.clear()
        self._parsed_ahead.clear()
        return self.report

    @property
    def store(self) -> FileStore:
        if self._store is None:
            self._store = FileStore(self.root)
        return self._store

    # ------------------------------------------------------------------ documents
    def _instance_key(self, name: str, scope: dict) -> tuple:
        chain = self.document_chains[name]
        if not chain:
            return (name,)
        return (name, *[scope[it].index for it in chain])

    def _path_of(self, name: str, scope: dict) -> str | None:
        key = self._instance_key(name, scope)
        if key in self._paths:
            return self._paths[key]
        scope = self._own_scope(name, scope)
        document = self.spec.documents[name]
        path = None
        try:
            if document.entry:
                path = self.entry_name
            elif document.path is not None:
                path = document.path.render(self.filler(scope))
            else:
                matches, _ = self.resolve(document.path_from, scope)
                if len(matches) != 1:
                    ref_text = self._shown_ref(document.path_from, scope)
                    self._violation(f"{document.rule_prefix}.path-unresolved", "error",
                                    f"no path for document {name!r}: {ref_text} "
                                    f"{_matched(len(matches))}", None, ref_text,
                                    scope=scope)
                elif not isinstance(matches[0].value, str):
                    self._violation(f"{document.rule_prefix}.path-not-string", "error",
                                    f"the path of document {name!r} is not a string",
                                    self._file_of(document.path_from, scope),
                                    matches[0].location, actual=matches[0].value,
                                    scope=scope)
                else:
                    path = matches[0].value
        except Unavailable:
            path = None
        except Unresolvable as problem:
            self._violation(f"{document.rule_prefix}.path-unresolved", "error",
                            f"no path for document {name!r}: {problem}", None, None,
                            scope=scope)
            path = None
        self._paths[key] = path
        if path is not None and document.loader not in _NOT_READ_WHOLE:
            self._whole_paths.setdefault(path, document)
        return path

    def document(self, name: str, scope: dict) -> _Loaded:
        key = self._instance_key(name, scope)
        loaded = self._documents.get(key)
        if loaded is None:
            loaded = self._documents[key] = self._load(name, scope)
        if loaded.failed:
            raise Unavailable(name)
        return loaded

    def _own_scope(self, name: str, scope: dict) -> dict:
        """The bindings a document instance depends on (not those of the rule that asked)."""
        each = self.spec.documents[name].each
        chain = self.spec.iterations[each].chain if each else ()
        return {key: scope[key] for key in chain}

    def _load(self, name: str, scope: dict) -> _Loaded:
        document = self.spec.documents[name]
        scope = self._own_scope(name, scope)
        path = self._path_of(name, scope)
        if path is None:
            return _Loaded(None, None, failed=True)
        try:
            if document.loader == "directory":
                self.store.resolve(path, kind="dir")
                return _Loaded({}, path)
            if document.loader == "bytes":
                head = int(document.options.get("head_bytes", 64))
                return _Loaded(load_bytes_head(self.store, path, head), path)
            loaded = _Loaded(self._parsed(document, path), path, loader=document.loader)
            self._by_path.setdefault(path, loaded)
            if document.shape is not None and self._check_shapes \
                    and not self._has_shape(document, loaded, scope):
                loaded.failed = True  # as a failed load: the rules needing it are skipped
            return loaded
        except LoadError as error:
            location = ", ".join(part for part in (
                f"line {error.line}" if error.line else None, error.location) if part) or None
            self._violation(f"{document.rule_prefix}.{error.code}", "error",
                            error.message, path, location,
                            scope=scope, line=error.line or None)
        except OSError as error:
            self._violation(f"{document.rule_prefix}.unreadable", "error",
                            f"cannot read ({error.strerror or error})", path, None,
                            scope=scope)
        return _Loaded(None, path, failed=True)

    def _has_shape(self, document, loaded: _Loaded, scope: dict) -> bool:
        """Check a loaded document against its declared shape (engine/shapes.py); report
        every problem under the shape's rule. False when the shape does not hold."""
        rule = document.shape.rule
        try:
            problems = document.shape.problems(loaded.value)
        except Exception as bug:  # a checker bug must reject, never pass
            self._violation(INTERNAL_ERROR, "error", f"internal error checking the shape of "
                            f"{document.name!r}: {type(bug).__name__}: {bug}", loaded.path,
                            None, scope=scope)
            return False
        for problem in problems:
            if self._keeps(rule, "error"):
                location = problem.location
                self._add(rule, "error", problem.message, loaded.path, location, scope=scope,
                          expected=problem.expected, actual=problem.actual,
                          line=self._line_of(loaded.path, location))
        return not problems

    def _parsed(self, document, path: str):
        """The document's value: parsed now, or when its file was read early for a digest
        (then whatever the loader raised is raised now, where the document is loaded, so
        violations keep their order)."""
        ahead = self._parsed_ahead.get(path)
        if ahead is not None and ahead[0] is document:
            del self._parsed_ahead[path]
            if isinstance(ahead[1], Exception):
                raise ahead[1]
            return ahead[1]
        self._read.add(path)
        return LOADERS[document.loader](
            self.store.read_bytes(path, document_limit(document.options)), document.options)

    def _load_all_documents(self) -> None:
        """Touch every document instance so that none escapes unchecked and all are hashed."""
        for name, document in self.spec.documents.items():
            for scope in self.scopes(document.each) if document.each else [{}]:
                try:
                    loaded = self.document(name, scope)
                except Unavailable:
                    continue
                if loaded.path and document.loader != "directory":
                    digest = self.digest(loaded.path)
                    if digest:
                        self.report.files[loaded.path] = digest

    def document_paths(self, names, *, complete: bool = False) -> set[str]:
        """The paths of every instance of the named documents that can be found. With
        ``complete``, raises Unavailable when an iteration they depend on could not be
        walked (a document it runs over failed, already reported): the set would lack the
        instances of the missing elements, and a check that every entry names one of them
        would report their entries as extra. Without it, the paths that are known."""
        paths = set()
        for name in names:
            each = self.spec.documents[name].each
            for scope in self.scopes(each) if each else [{}]:
                path = self._path_of(name, scope)
                if path is not None:
                    paths.add(path)
            if complete and each and \
                    self._incomplete.intersection(self.spec.iterations[each].chain):
                raise Unavailable(name)
        return paths

    def digest(self, path: str) -> str | None:
        """The file's SHA-256, or None when it cannot be read. A file that a document will
        parse, asked for before that document is loaded (a manifest of digests is checked
        first), is read whole and parsed here, and the outcome kept for the document: every
        file is read once and hashed from the bytes that are parsed. Parsed, not kept as
        bytes: the documents stay loaded for the whole run anyway, so the peak is the same,
        where raw bytes waiting for their loader would add the packet's size to it. A
        file that cannot be read whole gets the streamed hash, as a file no document
        parses does, and its document reports the problem where it always did."""
        document = self._whole_paths.get(path)
        if document is not None and path not in self._read:
            self._read.add(path)
            try:
                outcome = LOADERS[document.loader](
                    self.store.read_bytes(path, document_limit(document.options)),
                    document.options)
            except Exception as problem:  # raised again where the document is loaded
                outcome = problem
            self._parsed_ahead[path] = (document, outcome)
        try:
            return self.store.sha256(path)
        except (LoadError, OSError):
            return None

    # ------------------------------------------------------------------ selections
    def accessor(self, ref: Ref) -> Accessor:
        """The reference's one accessor for this evaluation (engine/access.py), compiled
        when first asked for. Keyed by identity: references live as long as the spec."""
        accessor = self._accessors.get(id(ref))
        if accessor is None:
            accessor = self._accessors[id(ref)] = Accessor(self, ref)
        return accessor

    def resolve(self, ref: Ref, scope: dict) -> tuple[list[Match], str | None]:
        return self.accessor(ref).matches(scope)

    def values(self, ref: Ref, scope: dict) -> list:
        """The values ``resolve`` would select, without matches or locations (what a
        passing check and an argument need)."""
        return self.accessor(ref).values(scope)

    def _file_of(self, ref: Ref, scope: dict) -> str | None:
        try:
            return self.resolve(ref, scope)[1]
        except Unavailable:
            return None

    def filler(self, scope: dict):
        def fill(placeholder: str):
            if ":" in placeholder:
                matches, _ = self.resolve(_placeholder_ref(placeholder), scope)
                if len(matches) != 1:
                    raise Unresolvable(f"{{{placeholder}}} matched {len(matches)} places, "
                                       f"expected exactly one")
                return matches[0].value
            return self._binding_value(placeholder, scope)
        return fill

    def _binding_value(self, text: str, scope: dict):
        name, _, meta = text.partition("@")
        parts = name.split(".")
        binding = scope.get(parts[0])
        if binding is None:
            raise KeyError(text)
        if meta == "index":
            return binding.index
        if meta in ("label", "location"):
            return getattr(binding, meta)
        if meta:
            raise KeyError(text)
        found, value = _member(binding.value, parts[1:])
        if not found:
            raise Unresolvable(f"{{{text}}} has no value here")
        return value

    # ------------------------------------------------------------------ iterations
    def scopes(self, name: str) -> list[dict]:
        cached = self._scopes.get(name)
        if cached is None:
            iteration = self.spec.iterations[name]
            parents = self.scopes(iteration.parent) if iteration.parent else [{}]
            cached = []
            for parent in parents:
                cached.extend(self._children(iteration, parent))
            self._scopes[name] = cached
        return cached

    def _rule_scopes(self, name: str) -> Iterable[dict]:
        """The bindings a rule runs over. Those of a leaf iteration (no child iteration, no
        per-binding document) are made afresh for each rule and never kept: a stream of a
        million events would otherwise hold a million scopes per such iteration."""
        if name not in self._leaves:
            return self.scopes(name)
        iteration = self.spec.iterations[name]
        parents = self.scopes(iteration.parent) if iteration.parent else [{}]
        return (scope for parent in parents for scope in self._each_child(iteration, parent))

    def _children(self, iteration, parent: dict) -> list[dict]:
        return list(self._each_child(iteration, parent))

    def _each_child(self, iteration, parent: dict) -> Iterator[dict]:
        found = self._elements(iteration, parent)
        if found is None:
            return
        matches, file = found
        for index, match in enumerate(matches):
            yield self._child(iteration, parent, index, match, file)

    def _child(self, iteration, parent: dict, index: int, match: Match, file) -> dict:
        scope = dict(parent)
        scope[iteration.name] = Binding(iteration.name, match, index, file, parent,
                                        self._render_label)
        return scope

    def _elements(self, iteration, parent: dict, select=None):
        """The (matches, file) an iteration runs over under ``parent`` (or, with ``select =
        self.values``, their values alone), or None when they cannot be found (reported
        once, however often it is iterated)."""
        try:
            return (select or self.resolve)(iteration.over, parent)
        except Unavailable:
            self._incomplete.add(iteration.name)
            return None
        except Unresolvable as problem:
            self._incomplete.add(iteration.name)
            reported = (iteration.name, self._key(parent))
            if reported not in self._unresolved:
                self._unresolved.add(reported)
                ref_text = self._shown_ref(iteration.over, parent)
                self._violation(f"iteration.{iteration.name}.unresolved", "error",
                                f"cannot iterate {iteration.name} over {ref_text}: {problem}",
                                None, ref_text, scope=parent)
            return None

    def _render_label(self, binding: Binding) -> str:
        template = self.spec.iterations[binding.name].label
        if template is not None:
            try:
                return str(template.render(self.filler({**binding.parent,
                                                          binding.name: binding})))
            except (KeyError, Unresolvable, Unavailable):  # unfillable: the default label
                pass
        return self._default_label(binding.match)

    @staticmethod
    def _default_label(match: Match) -> str:
        value = match.value
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            return value["id"]
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            return value["name"]
        return match.location

    def pin(self, scope: dict, pinned: dict) -> dict:
        """The scope with some iterations pinned to one element: ``at: {phase: 1}`` picks by
        position, ``at: {group: previous}`` (or ``next``) the sibling of the bound element."""
        for name, index in pinned.items():
            iteration = self.spec.iterations[name]
            ancestors = iteration.chain[:-1]
            if any(ancestor not in scope for ancestor in ancestors):
                raise Unresolvable(f"{name} cannot be pinned here: its parent is not bound")
            siblings = self._siblings_of(iteration, {a: scope[a] for a in ancestors})
            if index in ("previous", "next"):
                if name not in scope:
                    raise Unresolvable(f"{name} is not bound, so it has no {index} element")
                index = scope[name].index + (1 if index == "next" else -1)
            if not (isinstance(index, int) and 0 <= index < len(siblings)):
                raise Unresolvable(f"{name} has no element {index!r} here "
                                   f"({len(siblings)} elements)")
            # keep unrelated bindings; drop the pinned iteration's old descendants
            kept = {key: binding for key, binding in scope.items()
                    if name not in self.spec.iterations[key].chain}
            scope = {**kept, **siblings[index]}
        return scope

    def _siblings_of(self, iteration, parent: dict) -> list[dict]:
        """The elements of ``iteration`` under ``parent``, made once per parent: a rule
        pinned to ``previous`` asks for them once per element, which would otherwise
        rebuild the list each time (quadratic). Keyed by the parent bindings' identity;
        the entry keeps them alive so an id is never reused while cached."""
        bindings = tuple(parent.values())
        key = (iteration.name, *map(id, bindings))
        cached = self._siblings.get(key)
        if cached is None:
            cached = self._siblings[key] = (bindings, self._children(iteration, parent))
        return cached[1]

    @staticmethod
    def _label(scope: dict) -> str | None:
        if not scope:
            return None
        return " / ".join(binding.label for binding in scope.values())

    # ------------------------------------------------------------------ arguments
    def materialize(self, arg, scope: dict):
        if self.is_static(arg):
            return arg
        if isinstance(arg, ArgRef):
            found = self.values(arg.ref, scope)
            if arg.all:
                return found
            if len(found) == 1:
                return found[0]
            if not found and arg.has_default:
                return arg.default
            raise ArgumentUnresolved(arg.ref, len(found))
        if isinstance(arg, Condition):
            return self.holds(arg, scope)
        if isinstance(arg, ArgTemplate):
            return arg.template.render(self.filler(scope))
        if isinstance(arg, dict):
            return {key: self.materialize(value, scope) for key, value in arg.items()}
        if isinstance(arg, list):
            return [self.materialize(value, scope) for value in arg]
        return arg

    def is_static(self, arg) -> bool:
        known = self._static.get(id(arg))
        if known is None:
            if isinstance(arg, (ArgRef, ArgTemplate, Condition)):
                known = False
            elif isinstance(arg, dict):
                known = all(self.is_static(v) for v in arg.values())
            elif isinstance(arg, list):
                known = all(self.is_static(v) for v in arg)
            else:
                known = True
            if isinstance(arg, (dict, list)):
                self._static[id(arg)] = known
        return known

    def holds(self, condition: Condition, scope: dict) -> bool:
        """True when the condition's selection is not empty (unless its kind accepts an
        empty one) and its kind's verdict holds for it. The condition's plan (plans.py)
        reads the values through compiled getters; when it cannot (or raises), the general
        resolver reads them. Either way the verdict is the kind's one function."""
        decide = self._planner.condition(condition) if self._planner is not None else None
        if decide is not None:
            try:
                return bool(decide(scope))
            except Exception:  # not known (or a problem): the general path decides
                pass
        matches, _ = self.resolve(condition.given, scope)
        if not matches and not condition.kind.accepts_empty:
            return False
        arg = self.materialize(condition.arg, scope)
        return condition.kind.holds_for(RuleContext(self, scope), [m.value for m in matches],
                                        arg)

    # ------------------------------------------------------------------ rules
    def _apply(self, rule) -> None:
        tracked = rule.id in self._failed_at  # another rule requires this one
        if not tracked and self._by_element(rule):
            return
        plan = self._planner.plan(rule) if self._planner is not None else None
        for scope in self._rule_scopes(rule.for_each) if rule.for_each else [{}]:
            if rule.requires and self._required_failed(rule, scope):
                passed = False  # skipped: its cause is already reported
            else:
                before = self._emitted
                passed = (_known_to_pass(plan, scope) or self._apply_once(rule, scope)) \
                    and self._emitted == before
            if tracked and not passed:
                self._failed_at[rule.id].add(self._key(scope))

    def _by_element(self, rule) -> bool:
        """Run a rule over a leaf iteration by its element plan (plans.py), when it has one
        and needs nothing per element but its verdict: no other rule requires it, and what
        it requires lies in an enclosing iteration (so it is decided per parent). An element
        that is not known to pass gets its scope and the reporting path, as always. False
        when the rule is not run this way."""
        if self._planner is None or rule.for_each not in self._leaves or any(
                self._depth[required] >= self._depth[rule.id] for required in rule.requires):
            return False
        plan = self._planner.element_plan(rule)
        if plan is None:
            return False
        iteration = self.spec.iterations[rule.for_each]
        for parent in self.scopes(iteration.parent) if iteration.parent else [{}]:
            values = self._elements(iteration, parent, self.values)
            if values is None or rule.requires and self._required_failed(rule, parent):
                continue  # no elements, or all skipped: their cause is already reported
            element, matches = self._planner.element(parent, iteration.name), None
            for index, value in enumerate(values):
                element.move(index, value)
                try:
                    if plan(element) is True:
                        continue
                except Exception:  # not known: the reporting path decides (_known_to_pass)
                    pass
                if matches is None:  # the elements' places, only once one is needed
                    matches, file = self.resolve(iteration.over, parent)
                self._apply_once(rule, self._child(iteration, parent, index, matches[index],
                                                   file))
        return True

    @staticmethod
    def _key(scope: dict) -> tuple:
        """A binding's position: the indices of its iterations, outermost first."""
        return tuple(binding.index for binding in scope.values())

    def _required_failed(self, rule, scope: dict) -> bool:
        """True when a rule this one requires failed (or could not run) for this binding
        or an enclosing one; compile checked that each runs over an enclosing iteration."""
        key = self._key(scope)
        return any(key[:self._depth[required]] in self._failed_at[required]
                   for required in rule.requires)

    def _apply_once(self, rule, scope: dict) -> bool:
        """Run one rule for one binding on the reporting path; False when something it
        needs failed to load."""
        try:
            if rule.when is not None and not self.holds(rule.when, scope):
                return True
            if rule.hook is not None:
                self._apply_hook(rule, scope)
            else:
                self._apply_assertion(rule, scope)
        except Unavailable:
            return False
        except ArgumentUnresolved as problem:
            if self._keeps(rule.id, rule.severity):
                ref_text = self._shown_ref(problem.ref, scope)
                self._add(rule.id, rule.severity, f"cannot evaluate: {ref_text} matched "
                          f"{problem.found} places, expected exactly one", None, ref_text,
                          scope=scope)
        except (ValueError, TypeError) as problem:
            self._violation(rule.id, rule.severity, f"cannot evaluate: {problem}", None, None,
                            scope=scope)
        except Exception as bug:  # an engine or hook bug must reject, never pass
            self._violation(INTERNAL_ERROR, "error",
                            f"internal error in rule {rule.id}: {type(bug).__name__}: {bug}",
                            None, None, scope=scope)
        return True

    def _apply_assertion(self, rule, scope: dict) -> None:
        matches, file = self.resolve(rule.given, scope)
        kind = rule.kind
        if not matches and not kind.accepts_empty:
            if not rule.optional and self._keeps(rule.id, rule.severity):
                ref_text = self._shown_ref(rule.given, scope)
                failure = Failure(f"nothing found at {ref_text}", "present")
                self.report.add(self._described(rule, scope, failure, file, ref_text, None))
            return
        arg = self.materialize(rule.arg, scope)
        context = RuleContext(self, scope)
        if kind.collective:
            values = [match.value for match in matches]
            for failure in kind.function(context, values, arg, _Locations(matches)):
                self._report_failure(rule, scope, failure, file, None)
            return
        function = kind.function
        for match in matches:
            for failure in function(context, match.value, arg, match.location):
                self._report_failure(rule, scope, failure, file, match)

    def _report_failure(self, rule, scope, failure: Failure, file, match: Match | None) -> None:
        if not self._keeps(rule.id, rule.severity):
            return
        location = failure.location or (match.location if match is not None
                                        else self._shown_ref(rule.given, scope))
        origin = self._expected_origin(rule, scope, failure, match, location)
        self.report.add(self._described(rule, scope, failure, failure.file or file, location,
                                        origin))

    def _apply_hook(self, rule, scope: dict) -> None:
        args = self.materialize(rule.arg, scope)
        for failure in HOOKS[rule.hook].function(RuleContext(self, scope), args):
            if self._keeps(rule.id, rule.severity):
                file, location = self._hook_place(rule, scope, failure)
                self.report.add(self._described(rule, scope, failure, file, location, None))

    def _hook_place(self, rule, scope: dict, failure: Failure) -> tuple[str | None, str | None]:
        """Where a hook's failure lies. A failure naming its ``source`` argument lies inside
        that argument's value: when the argument was read by a ``{ref}``, the violation
        names the file it was read from and the place inside it."""
        if failure.source is None or not isinstance(rule.arg, dict):
            return failure.file, failure.location
        origin = self._origin(rule.arg.get(failure.source), scope)
        if origin is None:
            return failure.file, failure.location
        file, base, _ = origin
        inner = failure.location or "$"
        return file, (base + inner[1:] if inner.startswith("$") else inner)

    # ------------------------------------------------------------------ describing violations
    def _keeps(self, rule_id: str, severity: str) -> bool:
        """Count one violation; True when the report keeps it, so it is worth describing.
        A violation past the report's cap is counted only: nothing is rendered for it."""
        self._emitted += 1
        if self.report.accepts(rule_id, severity):
            return True
        self.report.suppress(rule_id, severity)
        return False

    def _violation(self, rule_id, severity, message, file, location, *, scope=None,
                   expected=None, actual=None, line=None) -> None:
        if self._keeps(rule_id, severity):
            self._add(rule_id, severity, message, file, location, scope=scope,
                      expected=expected, actual=actual, line=line)

    def _add(self, rule_id, severity, message, file, location, *, scope=None, expected=None,
             actual=None, line=None) -> None:
        """Add a violation already counted by ``_keeps``."""
        self.report.add(Violation(rule_id, severity, message, file, location, expected, actual,
                                  self._label(scope), line))

    def _described(self, rule, scope, failure: Failure, file, location, origin) -> Violation:
        line = self._line_of(file, location)
        message = self._message(rule, scope, failure, file, location, line, origin)
        return Violation(rule.id, rule.severity, message, file, location, failure.expected,
                         failure.actual, self._label(scope), line, origin)

    def _line_of(self, file: str | None, location: str | None) -> int | None:
        """The 1-based line of a JSONPath location in a loaded file, when its loader can
        tell. Only a courtesy to the reader: not finding it never changes a verdict."""
        if not file or not location:  # locate_line places what it can (a ref's `[*]` too)
            return None
        loaded = self._by_path.get(file)
        if loaded is None or loaded.loader is None:
            return None
        try:
            line = locate_line(loaded.loader, loaded.value, location)
        except Exception:  # a line number must not turn a clear violation into a crash
            return None
        return line if isinstance(line, int) and not isinstance(line, bool) else None

    def _origin(self, arg, scope: dict) -> tuple[str, str, Any] | None:
        """(file, location, value) of a single-valued ``{ref}`` argument read from a file.
        A pointer that found nothing and gave its ``default`` names the place it looked."""
        if not isinstance(arg, ArgRef) or arg.all:
            return None
        ref = arg.ref
        try:
            matches, file = self.resolve(ref, scope)
            if file is None:
                return None
            if not matches and arg.has_default and ref.pointer is not None:
                location = self._pointer_location(ref, scope)
                return (file, location, arg.default) if location else None
            if len(matches) != 1:
                return None
            location = matches[0].location
            if ref.metadata in BINDING_METADATA:  # an element's position: point at the element
                location = self._pinned(ref, scope)[ref.target].location
        except (Unavailable, Unresolvable, LookupError):
            return None
        return file, location, matches[0].value

    def _pinned(self, ref: Ref, scope: dict) -> dict:
        return self.pin(scope, ref.pinned) if ref.pinned else scope

    def _pointer_location(self, ref: Ref, scope: dict) -> str | None:
        """The JSONPath a pointer names, whether or not anything is there (no ``[k=v]``)."""
        scope = self._pinned(ref, scope)
        binding = scope.get(ref.target)
        location = binding.location if binding is not None else "$"
        fill = self.filler(scope)
        for segment in ref.pointer.segments:
            if segment.filter_value is not None:
                return None
            key = segment.key.render(fill)
            location = child_location(location, int(key) if key.isascii() and key.isdigit() else key)
        return location

    def _expected_origin(self, rule, scope, failure: Failure, match, location) -> dict | None:
        """Where the failure's expected value was read, when a ``{ref}`` of the rule's
        argument read it from a file: ``{"file", "location", "line"}`` (see refs.expected_ref).
        Named only when the value found there is the expected one, so never a wrong file."""
        suffix = relative_location(match.location, location) if match is not None else None
        found = expected_ref(rule.arg, suffix or "")
        origin = self._origin(found[0], scope) if found else None
        if origin is None:
            return None
        file, base, value = origin
        inner = found[1]
        present, value = _value_at(value, inner)
        if not present or not _is_expected(value, failure.expected):
            return None
        where = base + inner if base.startswith("$") else base
        entry = {"file": file, "location": where}
        line = self._line_of(file, where)
        if line is not None:
            entry["line"] = line
        return entry

    def _shown_ref(self, ref: Ref, scope: dict) -> str:
        try:
            scope = self._pinned(ref, scope)
        except (Unresolvable, Unavailable):
            pass
        return shown_ref(ref, self.filler(scope))

    def _message(self, rule, scope, failure: Failure, file, location, line, origin) -> str:
        if rule.message is None:
            return failure.message
        origin = origin or {}
        named = dict(zip(MESSAGE_FIELDS, (
            failure.message, failure.expected, failure.actual, file, location, line,
            origin.get("file"), origin.get("location"), origin.get("line"))))

        def fill(placeholder):
            head, *parts = placeholder.split(".")
            if head in named:
                present, value = _member(named[head], parts)
                if not present:
                    return "{" + placeholder + "}"
                if head in _VALUES:
                    return shown(value)
                return "?" if value is None else str(value)  # file, location, line, detail
            try:
                value = self.filler(scope)(placeholder)
            except (KeyError, Unavailable, Unresolvable):
                return "{" + placeholder + "}"
            return value if isinstance(value, str) else shown(value)
        return rule.message.render(fill)

    # ------------------------------------------------------------------ results
    def _identities(self) -> dict:
        identities = {}
        for name, arg in self.spec.identities.items():
            try:
                identities[name] = self.materialize(arg, {})
            except (Unavailable, Unresolvable, ArgumentUnresolved):
                identities[name] = None
        return identities

    def _compute_metric(self) -> None:
        metric = self.spec.metric
        samples = []
        try:
            for scope in self.scopes(metric.for_each) if metric.for_each else [{}]:
                if metric.when is not None and not self.holds(metric.when, scope):
                    continue
                matches, _ = self.resolve(metric.given, scope)
                label = metric.label.render(self.filler(scope)) if metric.label else \
                    self._label(scope)
                samples.append((label, [m.value for m in matches]))
            if not samples:
                raise ValueError("no samples were selected")
            result = HOOKS[metric.hook].function(RuleContext(self, {}), samples,
                                                 self.materialize(metric.args, {}))
            value = result.value
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise ValueError(f"the metric hook returned {value!r}, not a finite number")
        except Exception as problem:  # no metric unless it was computed cleanly
            self._violation(METRIC_UNAVAILABLE, "error",
                            f"metric {metric.key} not computed: {problem}", None, None)
            return
        self.report.metric = {"key": metric.key, "unit": metric.unit, "value": value,
                              "contract": metric.contract, "samples": result.samples,
                              "details": result.details}


def _known_to_pass(plan, scope: dict) -> bool:
    """True when the rule's pass plan (plans.py) says it passes here. Anything else (a
    failure, no plan for its kind, any exception on the way) is "not known": the caller
    runs the rule on the reporting path, which repeats what it needs (documents already
    loaded or reported stay as they are) and words every violation. So this may only
    ever say "passes"."""
    if plan is None:
        return False
    try:
        return plan(scope) is True
    except Exception:  # not known: the reporting path decides and words it
        return False


class _Locations:
    """The locations of a collective kind's values, each computed only when a failure
    names it (a match's location is built from its keys on demand)."""

    __slots__ = ("_matches",)

    def __init__(self, matches: list[Match]):
        self._matches = matches

    def __getitem__(self, index: int) -> str:
        return self._matches[index].location


class RuleContext:
    """What an assertion kind or hook may ask of the engine, for one binding."""

    def __init__(self, evaluation: Evaluation, scope: dict):
        self._evaluation = evaluation
        self.scope = scope

    def binding(self, name: str) -> Binding:
        return self.scope[name]

    def matches(self, ref: str | Ref, scope: dict | None = None) -> list[Match]:
        ref = ref if isinstance(ref, Ref) else _placeholder_ref(ref)
        try:
            return self._evaluation.resolve(ref, self.scope if scope is None else scope)[0]
        except Unavailable:
            return []

    def scopes(self, iteration: str) -> list[dict]:
        return self._evaluation.scopes(iteration)

    def document_paths(self, names, *, complete: bool = False) -> set[str]:
        return self._evaluation.document_paths(names, complete=complete)

    def digest(self, path: str) -> str | None:
        return self._evaluation.digest(path)


def evaluate(spec, entry_path: str | Path) -> Report:
    """Apply ``spec`` to the documents whose entry file is ``entry_path``."""
    return Evaluation(spec, entry_path).run()

