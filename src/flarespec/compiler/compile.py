"""Compilation: a resolved spec becomes objects the engine runs, with every name checked.

Everything expensive or fallible happens here, once per spec load: JSONPaths and pointers are
parsed, formulas compiled, assertion kinds and hooks looked up in their registries, and every
reference checked against the documents, iterations and constants in scope. Errors name the
spec file, line and column of the offending key.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from flarespec.engine.argument_schema import ANYTHING, Assertion, Formula, Keys
from flarespec.engine.formula import FormulaError, compile_formula
from flarespec.engine.hooks import HOOKS, argument_problems, discover
from flarespec.engine.kinds import KINDS, Kind
from flarespec.engine.paths import PathSyntaxError, Template, compile_template
from flarespec.engine.placeholders import Placeholder, UnknownMetadata
from flarespec.engine.shapes import SHAPE_RULE, Shape
from flarespec.engine.refs import (
    BINDING_METADATA,
    DOCUMENT_METADATA,
    MESSAGE_FIELDS,
    ArgRef,
    ArgTemplate,
    Condition,
    Ref,
    compile_ref,
    refs_in,
)
from flarespec.loaders import KNOWN_LOADERS, find_loader, option_problems, unknown_loader
from flarespec.compiler.bindings import binding_problems
from flarespec.compiler.errors import SpecInvalid, SpecIssue, did_you_mean
from flarespec.compiler.resolve import ResolvedSpec
from flarespec.compiler.yamlmarks import plain

if TYPE_CHECKING:  # built while compiling only (a cached spec holds its shapes)
    from flarespec.compiler.shapes import ShapeCompiler

CONSTANTS = "constants"
FROM = "from"  # a document's key: the string member it is parsed from
# loaders that never read their file whole (bytes is head-read and hashed as a stream)
STREAMED_LOADERS = frozenset({"bytes", "directory"})
_REFUSED = object()  # an argument (or member) the compiler refused, with its issue


@dataclass(frozen=True)
class CompiledDocument:
    name: str
    loader: str
    options: dict
    entry: bool
    path: Template | None
    path_from: Ref | None
    each: str | None
    rule_prefix: str
    description: str = ""
    # the declared structure, checked right after loading (rule <rule_prefix>.shape)
    shape: Shape | None = None
    # ``from``: the reference selecting the string member this document is parsed from
    # (no file of its own: engine/documents.py)
    from_ref: Ref | None = None


@dataclass(frozen=True)
class CompiledIteration:
    name: str
    over: Ref
    parent: str | None
    label: Template | None
    chain: tuple[str, ...]  # outermost first, this iteration last


@dataclass(frozen=True)
class CompiledRule:
    id: str
    description: str
    severity: str
    for_each: str | None
    when: Condition | None
    given: Ref | None
    optional: bool
    kind: Kind | None
    arg: Any
    hook: str | None
    message: Template | None
    clause: str | None
    source: dict = field(repr=False, default_factory=dict)
    # ids of rules whose failure for this binding (or an enclosing one) skips this rule
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompiledMetric:
    key: str
    unit: str
    contract: dict
    hook: str
    for_each: str | None
    when: Condition | None
    given: Ref
    label: Template | None
    args: Any


@dataclass
class CompiledSpec:
    resolved: ResolvedSpec
    constants: dict
    documents: dict[str, CompiledDocument]
    iterations: dict[str, CompiledIteration]
    rules: list[CompiledRule]
    identities: dict[str, Any]
    pair: list[dict]
    metric: CompiledMetric | None
    applies_to: Condition | None
    hook_modules: set[str]

    @property
    def id(self) -> str:
        return self.resolved.id

    @property
    def entry(self) -> CompiledDocument:
        return next(d for d in self.documents.values() if d.entry)


def compile_spec(resolved: ResolvedSpec) -> CompiledSpec:
    if resolved.issues:  # a lenient resolve's result (lint's) is never run
        raise SpecInvalid(resolved.issues)
    return _Compiler(resolved).run()


@dataclass(frozen=True)
class Crash:
    """A part of a spec the compiler could not go through (lint, on data the shape check
    or resolution refused): what it was, its source node and the exception."""
    what: str
    source: Any
    error: Exception


def compile_leniently(resolved: ResolvedSpec) -> tuple[CompiledSpec, list[SpecIssue],
                                                       list[Crash]]:
    """``spec lint``: what compiles, every issue found and every part that could not be
    compiled (a document, an iteration, a rule or a section whose data trips the compiler,
    each a Crash; the other parts are compiled all the same). The spec is for lint's later
    checks only: never run it."""
    compiler = _Compiler(resolved, lenient=True)
    return compiler.build(), compiler.issues, compiler.crashes


def _known_per_packet(value) -> bool:
    """A compiled argument value read or rendered per packet (its type is known then)."""
    return value is None or isinstance(value, (ArgRef, ArgTemplate))


def _cycle_through(start: str, reads: dict[str, set[str]]) -> list[str] | None:
    """The names from ``start`` along what each reads back to ``start`` (not repeated at
    the end), or None when nothing it reads leads back to it."""
    came_from: dict[str, str] = {}
    pending = [start]
    while pending:
        name = pending.pop()
        for target in sorted(reads.get(name, ())):
            if target == start:
                path = [name]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return path[::-1]
            if target not in came_from and target != start:
                came_from[target] = name
                pending.append(target)
    return None


def _first_step(source: str) -> str:
    """The first key of a constants reference (``constants:/a/b`` -> ``a``)."""
    selector = source.split(":", 1)[1].strip() if ":" in source else ""
    return selector.lstrip("$./").replace("/", ".").split(".")[0].split("[")[0]


def _dotted(constants, prefix: str = "", depth: int = 3) -> list[str]:
    """Constant keys as dotted names (``a``, ``a.b``) for a "did you mean"."""
    names: list[str] = []
    if isinstance(constants, dict) and depth:
        for key, value in constants.items():
            name = f"{prefix}{key}"
            names.append(name)
            names.extend(_dotted(value, name + ".", depth - 1))
    return names


class _Compiler:
    def __init__(self, resolved: ResolvedSpec, lenient: bool = False):
        self.resolved = resolved
        self.lenient = lenient
        self.crashes: list[Crash] = []
        self.data = resolved.data
        self.issues: list[SpecIssue] = []
        self.constants = plain(self.data.get("constants", {}))
        self.document_specs = self.data.get("documents", {})
        # the documents that are files: what a kind's argument may name (a manifest's)
        self.file_documents = {name for name, source in self.document_specs.items()
                               if not (isinstance(source, dict) and FROM in source)}
        self.iteration_specs = self.data.get("iterations", {})
        self.hook_modules: set[str] = set()
        discover()

    # ---------------------------------------------------------------- helpers
    @contextmanager
    def part(self, what: str, source) -> Iterator[None]:
        """One document, iteration, rule or section: compiled leniently, a crash on it is
        recorded and compilation goes on with the next part (loading raises as ever)."""
        if not self.lenient:
            yield
            return
        try:
            yield
        except Exception as error:  # noqa: BLE001 - lint reports it (authoring/lint.py)
            self.crashes.append(Crash(what, source, error))

    def issue(self, message: str, container, key=None, code="spec.invalid") -> None:
        mark = None
        if key is not None:
            mark = getattr(container, "key_marks", {}).get(key)
        self.issues.append(SpecIssue(message, mark or getattr(container, "mark", None), code))

    def chain_of(self, iteration: str | None) -> tuple[str, ...]:
        chain: list[str] = []
        while iteration:
            if iteration in chain or iteration not in self.iteration_specs:
                break
            chain.insert(0, iteration)
            iteration = self.iteration_specs[iteration].get("parent")
        return tuple(chain)

    def ref(self, text, container, key, scope: tuple[str, ...], pinned=None) -> Ref | None:
        try:
            ref = compile_ref(text, pinned)
        except PathSyntaxError as error:
            self.syntax_issue(error, container, key)
            return None
        allowed_scope = scope + tuple(pinned or ())
        target = ref.target
        if target == CONSTANTS:
            pass
        elif target in self.iteration_specs:
            if target not in allowed_scope:
                self.issue(f"{text!r} uses iteration {target!r}, which is not bound here "
                           f"(bound: {', '.join(scope) or 'none'})", container, key,
                           "spec.unbound-iteration")
        elif target in self.document_specs:
            each = self.document_specs[target].get("each")
            if each and each not in allowed_scope:
                self.issue(f"document {target!r} exists once per {each!r}; bind {each!r} "
                           f"with for_each to use it", container, key, "spec.unbound-iteration")
        else:
            known = [*self.document_specs, *self.iteration_specs, CONSTANTS]
            self.issue(f"{text!r} names {target!r}, which is neither a document, an iteration "
                       f"nor 'constants'{did_you_mean(target, known)}", container, key,
                       "spec.unknown-target")
        for placeholder in ref.placeholders:
            self.placeholder(placeholder, container, key, allowed_scope)
        if ref.metadata in DOCUMENT_METADATA and target not in self.document_specs:
            self.issue(f"@{ref.metadata} exists only for documents", container, key,
                       "spec.path-syntax")
        elif ref.metadata in DOCUMENT_METADATA and target not in self.file_documents:
            self.issue(f"@{ref.metadata} exists only for documents read from a file; "
                       f"{target!r} is parsed from a string ({FROM}): ask its container",
                       container, key, "spec.path-syntax")
        if ref.metadata in BINDING_METADATA and target not in self.iteration_specs:
            self.issue(f"@{ref.metadata} exists only for iterations", container, key,
                       "spec.path-syntax")
        # {ref, default} and {ref, all} may select nothing on purpose
        if target == CONSTANTS and not ref.placeholders and not (
                key == "ref" and {"default", "all"} & set(container)):
            self.constant_path(ref, container, key)
        return ref

    def constant_path(self, ref: Ref, container, key) -> None:
        """A reference into the constants without placeholders selects the same values for
        every packet: selecting nothing is a spec error, found now."""
        try:
            if ref.jsonpath is not None:
                found = ref.jsonpath.find(self.constants)
            elif ref.pointer is not None:
                found = ref.pointer.find(self.constants, lambda text: None)
            else:
                return
        except Exception:  # noqa: BLE001 - an unusual selector is judged at run time
            return
        if not found:
            self.issue(f"{ref.source!r} selects nothing in the constants"
                       f"{did_you_mean(_first_step(ref.source), _dotted(self.constants))}",
                       container, key, "spec.unknown-constant")

    def syntax_issue(self, error: PathSyntaxError, container, key) -> None:
        """A selector or template that does not parse (engine/paths.py, engine/placeholders.py:
        an unknown ``@meta`` is its own code, with a "did you mean")."""
        if isinstance(error, UnknownMetadata):
            self.issue(f"{error}{did_you_mean(error.meta, BINDING_METADATA)}", container, key,
                       "spec.unknown-metadata")
        else:
            self.issue(str(error), container, key, "spec.path-syntax")

    def placeholder(self, placeholder: Placeholder, container, key,
                    scope: tuple[str, ...]) -> None:
        """A parsed placeholder (engine/placeholders.py) reads what is bound here: a reference
        is checked as one; a name must be bound, and only an iteration's element has an
        ``@meta`` (a message field has none)."""
        if placeholder.reference:
            self.ref(placeholder.text, container, key, scope)
            return
        name = placeholder.name
        if name not in scope:
            self.issue(f"placeholder {{{placeholder}}} uses {name!r}, which is not bound here "
                       f"(bound: {', '.join(scope) or 'none'}){did_you_mean(name, scope)}",
                       container, key, "spec.unbound-iteration")
        elif placeholder.meta and name not in self.iteration_specs:
            self.issue(f"placeholder {{{placeholder}}}: {name!r} is a message field, not an "
                       f"iteration, so it has no @{placeholder.meta}", container, key,
                       "spec.unknown-metadata")

    def template(self, text, container, key, scope) -> Template | None:
        try:
            template = compile_template(text)
        except PathSyntaxError as error:
            self.syntax_issue(error, container, key)
            return None
        for placeholder in template.placeholders:
            self.placeholder(placeholder, container, key, scope)
        return template

    def condition(self, source, container, key, scope) -> Condition | None:
        kinds = [k for k in source if k != "given"]
        if len(kinds) != 1:
            self.issue("a condition has 'given' and exactly one assertion kind", container, key)
            return None
        kind = self.kind(kinds[0], source, kinds[0])
        given = self.ref(source["given"], source, "given", scope)
        arg = self.argument(kinds[0], source[kinds[0]], source, kinds[0], scope)
        if kind is None or given is None:
            return None
        return Condition(given, kind, arg, plain(source))

    def kind(self, name, container, key) -> Kind | None:
        if name not in KINDS:
            self.issue(f"unknown assertion kind {name!r}{did_you_mean(name, KINDS)}; known: "
                       f"{', '.join(sorted(KINDS))}", container, key, "spec.unknown-kind")
            return None
        return KINDS[name]

    def argument(self, kind_name: str | None, value, container, key, scope):
        """A kind's argument compiled as the kind's argument schema declares it
        (engine/argument_schema.py), then checked by it: a formula compiled (and checked at
        its tolerances' own keys), an inner assertion compiled as an assertion of its own;
        whatever else walked ({ref}s, templates, conditions). No kind is named here."""
        kind = KINDS.get(kind_name)
        schema = kind.argument if kind is not None else ANYTHING
        if isinstance(schema, Formula):
            return self.formula(kind_name, schema, value, container, key, scope)
        compiled = self.compiled(schema, kind_name, value, container, key, scope)
        return None if compiled is _REFUSED else self.checked(kind_name, compiled, container, key)

    def compiled(self, schema, what, value, container, key, scope):
        """``value`` as ``schema`` has it compiled: an ``Assertion`` as one inner assertion
        (``_REFUSED`` when it is not one), the ``Assertion`` members of a ``Keys`` mapping
        each so (``count``'s ``where``: left out when it is not one), the rest walked."""
        if isinstance(schema, Assertion):
            if isinstance(value, dict) and len(value) == 1:
                return self.inner(value, scope)
            self.issue(f"{what} wants exactly one inner assertion kind", container, key)
            return _REFUSED
        inner = [member for member in value if isinstance(schema.members.get(member), Assertion)] \
            if isinstance(schema, Keys) and isinstance(value, dict) else []
        if not inner:
            return self.walk(value, container, key, scope)
        walked = self.walk({k: v for k, v in value.items() if k not in inner},
                           container, key, scope)
        for member in inner:
            compiled = self.compiled(schema.members[member], member, value[member], value,
                                     member, scope)
            if compiled is not _REFUSED:
                walked[member] = compiled
        return walked

    def inner(self, wrapped: dict, scope) -> dict:
        (inner_name, inner_arg), = wrapped.items()
        self.kind(inner_name, wrapped, inner_name)
        return {inner_name: self.argument(inner_name, inner_arg, wrapped, inner_name, scope)}

    def checked(self, kind_name: str, arg, container, key):
        """The argument, after the kind's own shape check (a misspelt bound is an error)."""
        kind = KINDS.get(kind_name)
        if kind is not None:
            problem = kind.check(arg, self.file_documents)
            if problem:
                parsed = [name for name in arg if isinstance(name, str) and name in
                          self.document_specs and name not in self.file_documents] \
                    if isinstance(arg, list) else []
                if parsed:
                    problem += (f" ({', '.join(map(repr, parsed))}: parsed from a string "
                                f"({FROM}), not a file)")
                self.issue(f"{kind_name}: {problem}", container, key, "spec.kind-argument")
        return arg

    def formula(self, kind_name: str, schema: Formula, value, container, key, scope):
        """The formula compiled, its tolerances checked by its schema (at their own keys)."""
        compiled = self._formula(value, container, key, scope)
        if compiled is not None:
            problem = schema.problem(compiled, set(self.document_specs))
            if problem:
                bad = next((k for k in schema.TOLERANCES if problem.startswith(k)), None)
                where = value if isinstance(value, dict) and bad in value else container
                self.issue(f"{kind_name}: {problem}", where, bad if where is value else key,
                           "spec.kind-argument")
        return compiled

    def _formula(self, value, container, key, scope):
        source = {"expr": value} if isinstance(value, str) else value
        if not isinstance(source, dict) or not isinstance(source.get("expr"), str):
            self.issue("formula wants a string or {expr, rel_tol, abs_tol, refs}", container, key)
            return None
        try:
            compiled = compile_formula(source["expr"])
        except FormulaError as error:
            self.issue(f"formula: {error}", container, key, "spec.formula-syntax")
            return None
        if compiled.operator is None:
            self.issue(f"a formula assertion needs a comparison (==, !=, <, <=, >, >=): "
                       f"{source['expr']!r}", container, key, "spec.formula-syntax")
        refs = self.walk(source.get("refs") or {}, source, "refs", scope)
        missing = [n for n in compiled.names if n not in refs]
        if missing:
            self.issue(f"formula uses @{', @'.join(missing)} but refs does not define it",
                       container, key, "spec.formula-syntax")
        unknown = set(source) - {"expr", "refs", "rel_tol", "abs_tol"}
        if unknown:
            self.issue(f"unknown formula keys {sorted(unknown)}", container, key)
        return {"compiled": compiled, "refs": refs, "rel_tol": source.get("rel_tol", 0.0),
                "abs_tol": source.get("abs_tol", 0.0)}

    def walk(self, value, container, key, scope):
        """Compile {ref: ...} mappings and `when` conditions anywhere inside an argument."""
        if isinstance(value, dict):
            if "ref" in value and set(value) <= {"ref", "default", "all", "at"}:
                pinned = value.get("at") or {}
                ref = self.ref(value["ref"], value, "ref", scope, pinned)
                for name in pinned:
                    if name not in self.iteration_specs:
                        self.issue(f"'at' pins unknown iteration {name!r}", value, "at")
                return ArgRef(ref, bool(value.get("all")), "default" in value,
                              plain(value.get("default"))) if ref else None
            if "literal" in value and len(value) == 1:
                return plain(value["literal"])
            if "template" in value and len(value) == 1:
                template = self.template(value["template"], value, "template", scope)
                return ArgTemplate(template) if template else None
            result = {}
            for item_key, item in value.items():
                if item_key == "when" and isinstance(item, dict) and "given" in item:
                    result[item_key] = self.condition(item, value, item_key, scope)
                else:
                    result[item_key] = self.walk(item, value, item_key, scope)
            return result
        if isinstance(value, list):
            return [self.walk(item, value, key, scope) for item in value]
        return value

    # ---------------------------------------------------------------- sections
    def documents(self) -> dict[str, CompiledDocument]:
        compiled = {}
        entries = [n for n, d in self.document_specs.items()
                   if isinstance(d, dict) and d.get("entry")]
        if len(entries) != 1:
            self.issue(f"exactly one document is the entry (entry: true); found {len(entries)}",
                       self.data, "documents", "spec.entry")
        from flarespec.compiler.shapes import ShapeCompiler  # not on a cache hit: see above

        shapes = ShapeCompiler(self.data.get("shapes", {}), self.issue)
        with self.part("shapes", self.data.get("shapes")):
            shapes.all_named()
        for name, source in self.document_specs.items():
            with self.part(f"document {name!r}", source):
                compiled[name] = self.document(shapes, name, source)
        return compiled

    def document(self, shapes: ShapeCompiler, name: str, source) -> CompiledDocument:
        if name in self.iteration_specs or name == CONSTANTS:
            self.issue(f"document {name!r} has the name of an iteration or of 'constants'",
                       self.document_specs, name, "spec.name-clash")
        self.loader(source)
        self.document_options(source)
        each = source.get("each")
        if each and each not in self.iteration_specs:
            self.issue(f"each names unknown iteration {each!r}"
                       f"{did_you_mean(each, self.iteration_specs)}", source, "each",
                       "spec.unknown-iteration")
        scope = self.chain_of(each)
        if not (source.get("entry") or "path" in source or "path_from" in source
                or FROM in source):
            self.issue("a document needs path, path_from, from or entry: true", source)
        path = self.template(source["path"], source, "path", scope) if "path" in source \
            else None
        path_from = self.ref(source["path_from"], source, "path_from", scope) \
            if "path_from" in source else None
        return CompiledDocument(
            name, source["loader"], plain(source.get("options", {})),
            bool(source.get("entry")), path, path_from, each,
            source.get("rule", f"document.{name}"), source.get("description", ""),
            self.shape(shapes, name, source), self.from_string(source, scope))

    def from_string(self, source, scope: tuple[str, ...]) -> Ref | None:
        """``from``: the reference to the string a document is parsed from; a loader that
        reads no file's contents (bytes, directory) cannot parse one."""
        if FROM not in source:
            return None
        if source["loader"] in STREAMED_LOADERS:
            self.issue(f"a {source['loader']} document reads a file, so it cannot be parsed "
                       f"from a string ({FROM})", source, FROM, "spec.document-option")
        return self.ref(source[FROM], source, FROM, scope)

    def loader(self, source) -> None:
        """The loader is built in or a plug-in's (docs/loaders.md, "Plug-ins"), whose module
        the receipt then binds and the cache checks, as a hook module."""
        name = source["loader"]
        if name in KNOWN_LOADERS or name == "directory":
            return
        plugin = find_loader(name)
        if plugin is None:
            self.issue(unknown_loader(name, also=STREAMED_LOADERS), source, "loader",
                       "spec.unknown-loader")
        else:
            self.hook_modules.add(plugin.module)

    def shape(self, shapes: ShapeCompiler, name: str, source) -> Shape | None:
        if "shape" not in source:
            return None
        if source["loader"] in STREAMED_LOADERS:
            self.issue(f"a {source['loader']} document is never parsed, so it has no shape",
                       source, "shape", "spec.document-shape")
            return None
        node = shapes.document(source["shape"], source, "shape")
        rule = f"{source.get('rule', f'document.{name}')}.{SHAPE_RULE}"
        return Shape(node, rule) if node is not None else None

    def document_options(self, source) -> None:
        """Each option is one its loader declares, with a value its declaration takes
        (loaders/options.py): ``max_mib`` bounds a document read whole, so that a spec,
        never a packet, bounds the memory a validation may use; a misspelt option is an
        error, not an option silently ignored."""
        options = source.get("options", {})
        for name, problem in option_problems(source["loader"], options):
            where, key = (options, name) if name is not None else (source, "options")
            self.issue(problem, where, key, "spec.document-option")

    def iterations(self) -> dict[str, CompiledIteration]:
        compiled = {}
        for name, source in self.iteration_specs.items():
            with self.part(f"iteration {name!r}", source):
                iteration = self.iteration(name, source)
                if iteration is not None:
                    compiled[name] = iteration
        with self.part("bindings", self.iteration_specs):
            for name, problem in binding_problems(compiled, self.constants).items():
                self.issue(problem, self.iteration_specs[name], "over",
                           "spec.too-many-bindings")
        return compiled

    def iteration(self, name: str, source) -> CompiledIteration | None:
        parent = source.get("parent")
        if parent and parent not in self.iteration_specs:
            self.issue(f"parent names unknown iteration {parent!r}"
                       f"{did_you_mean(parent, self.iteration_specs)}", source, "parent",
                       "spec.unknown-iteration")
            return None
        chain = self.chain_of(name)
        if chain[0] != name and self.iteration_specs[chain[0]].get("parent"):
            self.issue(f"iteration {name!r} has a parent cycle", source, "parent")
            return None
        over = self.ref(source["over"], source, "over", chain[:-1])
        label = self.template(source["label"], source, "label", chain) \
            if "label" in source else None
        return CompiledIteration(name, over, parent, label, chain) if over else None

    def rules(self) -> list[CompiledRule]:
        compiled = []
        for rule in self.data.get("rules", []):
            with self.part(f"rule {rule.get('id')!r}" if isinstance(rule, dict) else "a rule",
                           rule):
                one = self.rule(rule)
                if one is not None:
                    compiled.append(one)
        with self.part("the rules' order (requires)", self.data.get("rules")):
            return self.ordered(compiled)
        return compiled  # lenient, after a crash ordering them

    def rule(self, rule) -> CompiledRule | None:
        for_each = rule.get("for_each")
        if for_each and for_each not in self.iteration_specs:
            self.issue(f"for_each names unknown iteration {for_each!r}"
                       f"{did_you_mean(for_each, self.iteration_specs)}", rule, "for_each",
                       "spec.unknown-iteration")
            return None
        scope = self.chain_of(for_each)
        when = self.condition(rule["when"], rule, "when", scope) if "when" in rule else None
        given = self.ref(rule["given"], rule, "given", scope) if "given" in rule else None
        kind = arg = hook = None
        if "assert" in rule:
            if given is None and "given" not in rule:
                self.issue("an assertion needs 'given'", rule, "assert")
            (kind_name, raw_arg), = rule["assert"].items()
            kind = self.kind(kind_name, rule["assert"], kind_name)
            arg = self.argument(kind_name, raw_arg, rule["assert"], kind_name, scope)
        else:
            hook = rule["hook"]
            arg = self.walk(rule.get("args", {}), rule, "args", scope)
            self.hook(hook, "check", rule, arg)
        message = self.template(rule["message"], rule, "message", scope + MESSAGE_FIELDS) \
            if "message" in rule else None
        return CompiledRule(
            rule["id"], rule["description"], rule.get("severity", "error"), for_each, when,
            given, bool(rule.get("optional")), kind, arg, hook, message, rule.get("clause"),
            plain(rule), tuple(rule.get("requires", ())))

    def hook(self, name: str, role: str, source, args) -> None:
        """The hook is registered with this role and ``args`` fit its declared schema."""
        if name not in HOOKS or HOOKS[name].role != role:
            registered = sorted(h for h in HOOKS if HOOKS[h].role == role)
            self.issue(f"unknown {role} hook {name!r}{did_you_mean(name, registered)}; "
                       f"registered: {', '.join(registered) or 'none'}", source, "hook",
                       "spec.unknown-hook")
            return
        self.hook_modules.add(HOOKS[name].module)
        raw = source.get("args", {})
        for key, problem in argument_problems(HOOKS[name], args, _known_per_packet):
            if key is not None and isinstance(raw, dict) and key in raw:
                self.issue(problem, raw, key, "spec.hook-argument")
            else:
                self.issue(problem, source, "args" if "args" in source else "hook",
                           "spec.hook-argument")

    def ordered(self, compiled: list[CompiledRule]) -> list[CompiledRule]:
        """The rules in run order: spec order, except that a rule runs after every rule it
        ``requires`` (a child spec may add a required rule after the rules needing it).
        Unknown ids, a rule over an unrelated iteration, and cycles are spec errors."""
        sources = {rule.get("id"): rule for rule in self.data.get("rules", [])}
        by_id = {rule.id: rule for rule in compiled}
        for rule in compiled:
            self.check_requires(rule, sources[rule.id], by_id)
        order: list[CompiledRule] = []
        state: dict[str, str] = {}  # id -> "visiting" | "done"
        for rule in compiled:
            stack = [(rule, iter(rule.requires))]
            state.setdefault(rule.id, "visiting")
            while stack:  # depth-first, iterative: a long requires chain cannot recurse
                current, pending = stack[-1]
                if state[current.id] == "done":
                    stack.pop()
                    continue
                required = next((by_id[r] for r in pending if r in by_id and r != current.id),
                                None)
                if required is None:
                    state[current.id] = "done"
                    order.append(current)
                    stack.pop()
                elif state.get(required.id) == "visiting":
                    self.issue(f"rule {current.id!r} requires {required.id!r}, which requires "
                               f"it in turn (a cycle)", sources[current.id], "requires",
                               "spec.requires-cycle")
                elif required.id not in state:
                    state[required.id] = "visiting"
                    stack.append((required, iter(required.requires)))
        return order

    def check_requires(self, rule: CompiledRule, source, by_id: dict) -> None:
        """Each required id names another error rule (of any severity, for a warning rule)
        over the same or an enclosing iteration: the issue points at that id."""
        marks = getattr(source.get("requires"), "item_marks", None) or []
        key_mark = getattr(source, "key_marks", {}).get("requires")
        chain = self.chain_of(rule.for_each)
        for position, required_id in enumerate(rule.requires):
            mark = marks[position] if position < len(marks) else key_mark
            required = by_id.get(required_id)
            if required is None or required_id == rule.id:
                problem = "itself" if required is not None else \
                    f"no rule of this spec{did_you_mean(required_id, by_id)}"
                self.issues.append(SpecIssue(f"requires names {required_id!r}, which is "
                                             f"{problem}", mark, "spec.requires-unknown"))
                continue
            if required.severity != "error" and rule.severity == "error":
                # skipping an error rule where only a warning fired could let a packet pass
                self.issues.append(SpecIssue(
                    f"requires names {required_id!r}, a warning; an error rule may only "
                    f"require error rules", mark, "spec.requires-severity"))
            required_chain = self.chain_of(required.for_each)
            if chain[:len(required_chain)] != required_chain:
                self.issues.append(SpecIssue(
                    f"requires names {required_id!r}, which runs "
                    f"{'for each ' + required.for_each if required.for_each else 'once'}; "
                    f"a required rule must run once or over an iteration that encloses this "
                    f"rule's ({rule.for_each or 'none'})", mark, "spec.requires-scope"))

    def metric(self) -> CompiledMetric | None:
        source = self.data.get("metric")
        if not source:
            return None
        hook = source["hook"]
        for_each = source.get("for_each")
        scope = self.chain_of(for_each)
        args = self.walk(source.get("args", {}), source, "args", scope)
        self.hook(hook, "metric", source, args)
        return CompiledMetric(
            source["key"], source["unit"], plain(source.get("contract", {})), hook, for_each,
            self.condition(source["when"], source, "when", scope) if "when" in source else None,
            self.ref(source["given"], source, "given", scope),
            self.template(source["label"], source, "label", scope) if "label" in source else None,
            args)

    def read_cycles(self, documents: dict) -> None:
        """A document read to find or parse itself (its path, path_from or from reads it,
        or a document that does) would be loaded for ever: each such cycle is refused once,
        at its first document. (Through an iteration there is none: a document per element
        of one is not bound where that iteration's ``over`` is read.)"""
        reads = {name: {ref.target for ref in refs_in([d.path, d.path_from, d.from_ref])}
                 for name, d in documents.items()}
        reported: set[str] = set()
        for name in documents:
            cycle = None if name in reported else _cycle_through(name, reads)
            if cycle:
                reported.update(cycle)
                self.issue(f"document {name!r} is read to find itself: "
                           f"{' -> '.join([*cycle, name])}", self.document_specs, name,
                           "spec.document-cycle")

    def run(self) -> CompiledSpec:
        compiled = self.build()
        if self.issues:
            raise SpecInvalid(self.issues)
        return compiled

    def build(self) -> CompiledSpec:
        """Every section compiled; leniently (lint), a section that crashes is left empty."""
        documents = self.documents()
        iterations = self.iterations()
        with self.part("document cycles", self.document_specs):
            self.read_cycles(documents)
        rules = self.rules()
        identities, pair, metric, applies_to = {}, [], None, None
        with self.part("identities", self.data.get("identities")):
            identities = self.walk(self.data.get("identities", {}), self.data, "identities", ())
        with self.part("pair", self.data.get("pair")):
            pair = plain(self.data.get("pair", []))
            for entry in pair:
                if entry["identity"] not in identities:
                    self.issue(f"pair rule {entry['id']!r} compares unknown identity "
                               f"{entry['identity']!r}", self.data, "pair",
                               "spec.unknown-identity")
        with self.part("metric", self.data.get("metric")):
            metric = self.metric()
        with self.part("applies_to", self.data.get("applies_to")):
            applies_to = self.condition(self.data["applies_to"], self.data, "applies_to", ()) \
                if "applies_to" in self.data else None
        return CompiledSpec(self.resolved, self.constants, documents, iterations, rules,
                            identities, pair, metric, applies_to, self.hook_modules)
