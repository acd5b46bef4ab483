"""The interpreter: applies a compiled spec to the documents under one root.

Documents are loaded lazily, once per binding, from a confined file store. Every rule runs
over its iteration's bindings; every failure becomes a violation carrying rule id, file and
location. A document that cannot be loaded is one violation; rules that need it are skipped
for that binding instead of cascading. The metric is computed only from a clean report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from flarespec.engine.hooks import HOOKS
from flarespec.engine.kinds import Failure
from flarespec.engine.paths import Match
from flarespec.engine.refs import ArgRef, ArgTemplate, Condition, Ref, compile_ref
from flarespec.engine.report import Report, Violation
from flarespec.loaders import LOADERS, load_bytes_head
from flarespec.loaders.errors import LoadError
from flarespec.loaders.files import FileStore

INTERNAL_ERROR = "engine.internal-error"
METRIC_UNAVAILABLE = "metric.unavailable"


class Unavailable(Exception):
    """Something this check needs failed to load; that failure is already reported."""


class Unresolvable(ValueError):
    """A placeholder or pinned binding has no value here: a violation, never a silent skip."""


class ArgumentUnresolved(Exception):
    def __init__(self, ref: Ref, found: int):
        super().__init__(ref)
        self.ref, self.found = ref, found


@dataclass(frozen=True, slots=True)
class Binding:
    name: str
    match: Match
    index: int
    file: str | None
    label: str

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


@lru_cache(maxsize=None)
def _placeholder_ref(text: str) -> Ref:
    return compile_ref(text)


class Evaluation:
    def __init__(self, spec, entry_path: str | Path):
        entry_path = Path(entry_path)
        self.spec = spec
        self.entry_name = entry_path.name
        self.root = entry_path.parent
        self.report = Report(spec.id)
        self._store: FileStore | None = None
        self._documents: dict[tuple, _Loaded] = {}
        self._paths: dict[tuple, str | None] = {}
        self._scopes: dict[str, list[dict]] = {}
        self._static: dict[int, bool] = {}

    # ------------------------------------------------------------------ public
    def run(self) -> Report:
        for rule in self.spec.rules:
            self._apply(rule)
        self._load_all_documents()
        self.report.identities = self._identities()
        if self.report.ok and self.spec.metric is not None:
            self._compute_metric()
        return self.report

    @property
    def store(self) -> FileStore:
        if self._store is None:
            self._store = FileStore(self.root)
        return self._store

    # ------------------------------------------------------------------ documents
    def _instance_key(self, name: str, scope: dict) -> tuple:
        each = self.spec.documents[name].each
        if not each:
            return (name,)
        chain = self.spec.iterations[each].chain
        return (name,) + tuple(scope[it].index for it in chain)

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
                path = document.path.render(self._filler(scope))
            else:
                matches, _ = self.resolve(document.path_from, scope)
                if len(matches) != 1:
                    self._violation(f"{document.rule_prefix}.path-unresolved", "error",
                                    f"no path for document {name!r}: "
                                    f"{document.path_from} matched nothing", None,
                                    str(document.path_from), binding=self._label(scope))
                elif not isinstance(matches[0].value, str):
                    self._violation(f"{document.rule_prefix}.path-not-string", "error",
                                    f"the path of document {name!r} is not a string",
                                    self._file_of(document.path_from, scope),
                                    matches[0].location, actual=matches[0].value,
                                    binding=self._label(scope))
                else:
                    path = matches[0].value
        except Unavailable:
            path = None
        except Unresolvable as problem:
            self._violation(f"{document.rule_prefix}.path-unresolved", "error",
                            f"no path for document {name!r}: {problem}", None, None,
                            binding=self._label(scope))
            path = None
        self._paths[key] = path
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
            data = self.store.read_bytes(path)
            return _Loaded(LOADERS[document.loader](data, document.options), path)
        except LoadError as error:
            location = ", ".join(part for part in (
                f"line {error.line}" if error.line else None, error.location) if part) or None
            self._violation(f"{document.rule_prefix}.{error.code}", "error",
                            error.message, path, location,
                            binding=self._label(scope))
        except OSError as error:
            self._violation(f"{document.rule_prefix}.unreadable", "error",
                            f"cannot read ({error.strerror or error})", path, None,
                            binding=self._label(scope))
        return _Loaded(None, path, failed=True)

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

    def document_paths(self, names) -> set[str]:
        paths = set()
        for name in names:
            each = self.spec.documents[name].each
            for scope in self.scopes(each) if each else [{}]:
                path = self._path_of(name, scope)
                if path is not None:
                    paths.add(path)
        return paths

    def digest(self, path: str) -> str | None:
        try:
            return self.store.sha256(path)
        except (LoadError, OSError):
            return None

    # ------------------------------------------------------------------ selections
    def resolve(self, ref: Ref, scope: dict) -> tuple[list[Match], str | None]:
        if ref.pinned:
            scope = self.pin(scope, ref.pinned)
        target = ref.target
        if target == "constants":
            value, base, file = self.spec.constants, "$", None
        elif target in scope:
            binding = scope[target]
            value, base, file = binding.value, binding.match, binding.file
            if ref.metadata:
                return [Match(getattr(binding, ref.metadata), "@" + ref.metadata)], file
        else:
            loaded = self.document(target, scope)
            value, base, file = loaded.value, "$", loaded.path
            if ref.metadata:
                meta = {"path": loaded.path,
                        "sha256": lambda: self.digest(loaded.path),
                        "size": lambda: self.store.size(loaded.path)}[ref.metadata]
                return [Match(meta() if callable(meta) else meta, "@" + ref.metadata)], file
        if ref.jsonpath is not None:
            return ref.jsonpath.find(value, base), file
        return ref.pointer.find(value, self._filler(scope), base), file

    def _file_of(self, ref: Ref, scope: dict) -> str | None:
        try:
            return self.resolve(ref, scope)[1]
        except Unavailable:
            return None

    def _filler(self, scope: dict):
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
        if meta:
            return {"index": binding.index, "label": binding.label,
                    "location": binding.location}[meta]
        value = binding.value
        for part in parts[1:]:
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
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

    def _children(self, iteration, parent: dict) -> list[dict]:
        try:
            matches, file = self.resolve(iteration.over, parent)
        except Unavailable:
            return []
        except Unresolvable as problem:
            self._violation(f"iteration.{iteration.name}.unresolved", "error",
                            f"cannot iterate {iteration.name} over {iteration.over}: {problem}",
                            None, str(iteration.over), binding=self._label(parent))
            return []
        children = []
        for index, match in enumerate(matches):
            scope = dict(parent)
            scope[iteration.name] = Binding(iteration.name, match, index, file, "")
            try:
                label = iteration.label.render(self._filler(scope))
            except (AttributeError, Unresolvable, Unavailable):  # no label template, or unfillable
                label = self._default_label(match)
            scope[iteration.name] = Binding(iteration.name, match, index, file, str(label))
            children.append(scope)
        return children

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
            siblings = self._children(iteration, {a: scope[a] for a in ancestors})
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

    @staticmethod
    def _label(scope: dict) -> str | None:
        if not scope:
            return None
        return " / ".join(binding.label for binding in scope.values())

    # ------------------------------------------------------------------ arguments
    def materialize(self, arg, scope: dict):
        if self._is_static(arg):
            return arg
        if isinstance(arg, ArgRef):
            matches, _ = self.resolve(arg.ref, scope)
            if arg.all:
                return [m.value for m in matches]
            if len(matches) == 1:
                return matches[0].value
            if not matches and arg.has_default:
                return arg.default
            raise ArgumentUnresolved(arg.ref, len(matches))
        if isinstance(arg, Condition):
            return self.holds(arg, scope)
        if isinstance(arg, ArgTemplate):
            return arg.template.render(self._filler(scope))
        if isinstance(arg, dict):
            return {key: self.materialize(value, scope) for key, value in arg.items()}
        if isinstance(arg, list):
            return [self.materialize(value, scope) for value in arg]
        return arg

    def _is_static(self, arg) -> bool:
        known = self._static.get(id(arg))
        if known is None:
            if isinstance(arg, (ArgRef, ArgTemplate, Condition)):
                known = False
            elif isinstance(arg, dict):
                known = all(self._is_static(v) for v in arg.values())
            elif isinstance(arg, list):
                known = all(self._is_static(v) for v in arg)
            else:
                known = True
            if isinstance(arg, (dict, list)):
                self._static[id(arg)] = known
        return known

    def holds(self, condition: Condition, scope: dict) -> bool:
        matches, _ = self.resolve(condition.given, scope)
        if not matches and not condition.kind.accepts_empty:
            return False
        arg = self.materialize(condition.arg, scope)
        context = RuleContext(self, scope)
        if condition.kind.collective:
            return not any(True for _ in condition.kind.function(context, matches, arg))
        return not any(True for m in matches for _ in condition.kind.function(context, m, arg))

    # ------------------------------------------------------------------ rules
    def _apply(self, rule) -> None:
        for scope in self.scopes(rule.for_each) if rule.for_each else [{}]:
            try:
                if rule.when is not None and not self.holds(rule.when, scope):
                    continue
                if rule.hook is not None:
                    self._apply_hook(rule, scope)
                else:
                    self._apply_assertion(rule, scope)
            except Unavailable:
                continue
            except ArgumentUnresolved as problem:
                self._violation(rule.id, rule.severity,
                                f"cannot evaluate: {problem.ref} matched {problem.found} "
                                f"places, expected exactly one", None, str(problem.ref),
                                binding=self._label(scope))
            except (ValueError, TypeError) as problem:
                self._violation(rule.id, rule.severity, f"cannot evaluate: {problem}",
                                None, None, binding=self._label(scope))
            except Exception as bug:  # an engine or hook bug must reject, never pass
                self._violation(INTERNAL_ERROR, "error",
                                f"internal error in rule {rule.id}: {type(bug).__name__}: {bug}",
                                None, None, binding=self._label(scope))

    def _apply_assertion(self, rule, scope: dict) -> None:
        matches, file = self.resolve(rule.given, scope)
        kind = rule.kind
        if not matches and not kind.accepts_empty:
            if not rule.optional:
                self._violation(rule.id, rule.severity,
                                self._message(rule, scope, f"nothing found at {rule.given}",
                                              None, None, str(rule.given), file),
                                file, str(rule.given), expected="present",
                                binding=self._label(scope))
            return
        arg = self.materialize(rule.arg, scope)
        context = RuleContext(self, scope)
        if kind.collective:
            results = ((failure, None) for failure in kind.function(context, matches, arg))
        else:
            results = ((failure, match) for match in matches
                       for failure in kind.function(context, match, arg))
        for failure, match in results:
            location = failure.location or (match.location if match else str(rule.given))
            self._report_failure(rule, scope, failure, failure.file or file, location)

    def _apply_hook(self, rule, scope: dict) -> None:
        args = self.materialize(rule.arg, scope)
        for failure in HOOKS[rule.hook].function(RuleContext(self, scope), args):
            self._report_failure(rule, scope, failure, failure.file, failure.location)

    def _report_failure(self, rule, scope, failure: Failure, file, location) -> None:
        message = self._message(rule, scope, failure.message, failure.expected, failure.actual,
                                location, file)
        self._violation(rule.id, rule.severity, message, file, location,
                        expected=failure.expected, actual=failure.actual,
                        binding=self._label(scope))

    def _message(self, rule, scope, detail, expected, actual, location, file) -> str:
        if rule.message is None:
            return detail
        named = {"detail": detail, "expected": expected, "actual": actual,
                 "location": location, "file": file}

        def fill(placeholder):
            if placeholder in named:
                return named[placeholder]
            try:
                return self._filler(scope)(placeholder)
            except (KeyError, Unavailable, Unresolvable):
                return "{" + placeholder + "}"
        return rule.message.render(fill)

    def _violation(self, rule_id, severity, message, file, location, *, expected=None,
                   actual=None, binding=None) -> None:
        self.report.add(Violation(rule_id, severity, message, file, location, expected, actual,
                                  binding))

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
                label = metric.label.render(self._filler(scope)) if metric.label else \
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

    def document_paths(self, names) -> set[str]:
        return self._evaluation.document_paths(names)

    def digest(self, path: str) -> str | None:
        return self._evaluation.digest(path)


def evaluate(spec, entry_path: str | Path) -> Report:
    """Apply ``spec`` to the documents whose entry file is ``entry_path``."""
    return Evaluation(spec, entry_path).run()

