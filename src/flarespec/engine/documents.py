"""Documents: the files a spec names, found, read once, parsed, shape-checked and hashed.

One ``DocumentStore`` per ``Evaluation`` (engine/evaluate.py): the documents are
loaded lazily, once per binding they depend on, from a confined file store. A document
that cannot be loaded (or does not have its declared shape) is one violation; the checks
that need it raise ``Unavailable`` and are skipped for that binding instead of cascading.

A document with ``from`` is no file: its value is a string member of another document (a
raw JSON response or event stream kept as text), parsed by its own loader. It has its
container's file and continues the member's location (``$.records[0].raw.usage`` is
``$.usage`` of the document parsed from ``$.records[0].raw``); the receipt binds it through
its container's digest.
"""

from __future__ import annotations

import hashlib
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flarespec.engine.problems import INTERNAL_ERROR, Unavailable, Unresolvable
from flarespec.engine.values import json_type
from flarespec.loaders import load_bytes_head, load_document
from flarespec.loaders.errors import LoadError
from flarespec.loaders.files import FileStore
from flarespec.loaders.limits import document_limit
from flarespec.loaders.options import HEAD_BYTES


# loaders that do not read their file whole: it is hashed by a streamed read instead
_NOT_READ_WHOLE = ("bytes", "directory")
# released documents read again (for a rule after the stream) kept at once: a rule over
# every element that also reads the previous one's reads each about twice in a row, so a
# few suffice; the oldest is released again
_RELOADED_KEPT = 16


@dataclass
class Loaded:
    value: Any
    path: str | None
    failed: bool = False
    loader: str | None = None
    name: str | None = None
    # the element's rules are done and the value was let go (engine/schedule.py): read
    # again, and checked against its digest, if anything still asks for it
    released: bool = False
    # the violations its loading emitted (engine/sink.py): moved to whoever asks first
    groups: tuple = ()
    # a records format's file line of each element (jsonl, csv), kept when released
    lines: Any = None
    # where the value sits in its file: the root, or the JSONPath of the string member a
    # ``from`` document was parsed from (every location inside it continues that one)
    base: str = "$"
    # a ``from`` document's own bindings: its string is read again there once released
    scope: dict | None = None


def _matched(found: int) -> str:
    return "matched nothing" if not found else \
        f"matched {found} places, expected exactly one"


class DocumentStore:
    """The documents of one evaluation: found, read, parsed, shape-checked, hashed and
    released, each instance once. It reports through the evaluation's reporter and reads
    references (a ``path_from``, a ``from`` string) and iterations through the evaluation,
    which holds it (a weak proxy back: no reference cycle)."""

    def __init__(self, spec, entry_path: Path, reporter, evaluation, *, shapes: bool,
                 final_position: tuple):
        """``shapes=False``: documents are not checked against their shapes (see
        Evaluation). ``final_position``: where the sink files the final load of every
        instance (engine/sink.py), instance by instance after it."""
        self.spec = spec
        self.reporter = reporter
        self._evaluation = weakref.proxy(evaluation)
        self.entry_name = entry_path.name
        self.root = entry_path.parent
        self._check_shapes = shapes
        self.final_position = final_position
        self._files: FileStore | None = None
        self._documents: dict[tuple, Loaded] = {}
        self._paths: dict[tuple, str | None] = {}
        self._path_groups: dict[tuple, tuple] = {}
        self._by_path: dict[str, Loaded] = {}  # loaded documents, for line numbers
        self._reloaded: deque = deque()  # released documents read again, oldest first
        # the iterations each document instance depends on, outermost first (looked up per
        # reference, so once here rather than per binding)
        self.chains = {name: spec.iterations[document.each].chain if document.each else ()
                       for name, document in spec.documents.items()}
        self._instance_keys = {name: self._instance_keyer(name, chain)
                               for name, chain in self.chains.items()}
        # path -> the first document that reads it whole; of those paths, the ones read
        # already; and what a document's loader gave (or raised) when its file was read
        # early for a digest, kept for the document (see digest)
        self._whole_paths: dict[str, Any] = {}
        self._read: set[str] = set()
        self._parsed_ahead: dict[str, tuple[Any, Any]] = {}

    @property
    def files(self) -> FileStore:
        """The confined file store under the root (engine/../loaders/files.py)."""
        if self._files is None:
            self._files = FileStore(self.root)
        return self._files

    def close(self) -> None:
        """The run is over: drop what was parsed ahead for a document never loaded."""
        self._parsed_ahead.clear()

    def _instance_key(self, name: str, scope: dict) -> tuple:
        return self._instance_keys[name](scope)

    @staticmethod
    def _instance_keyer(name: str, chain: tuple):
        """``scope -> (name, the indices of the iterations the document depends on)``: its
        instance's key, by a function made once per document (asked per reference read)."""
        if not chain:
            key = (name,)
            return lambda scope: key
        if len(chain) == 1:
            (only,) = chain
            return lambda scope: (name, scope[only].index)
        if len(chain) == 2:
            outer, inner = chain
            return lambda scope: (name, scope[outer].index, scope[inner].index)
        return lambda scope: (name, *[scope[it].index for it in chain])

    def _path_of(self, name: str, scope: dict) -> str | None:
        key = self._instance_key(name, scope)
        if key in self._paths:
            groups = self._path_groups.get(key)
            if groups:
                self.reporter.sink.touch(groups)
            return self._paths[key]
        group = self.reporter.sink.open_group()
        try:
            path = self.document_path(name, scope)
        finally:
            group = self.reporter.sink.close_group(group)
        if group is not None:
            self._path_groups[key] = (group,)
        self._paths[key] = path
        document = self.spec.documents[name]
        if path is not None and document.loader not in _NOT_READ_WHOLE:
            self._whole_paths.setdefault(path, document)
        return path

    def document_path(self, name: str, scope: dict) -> str | None:
        """The root-relative path of document ``name`` for ``scope`` (its template filled, or
        its ``path_from`` read), or None with the reason reported as a violation; the one
        resolution of a document's path (run time and the catalog's targets)."""
        scope = self._own_scope(name, scope)
        document = self.spec.documents[name]
        path = None
        try:
            if document.entry:
                path = self.entry_name
            elif document.path is not None:
                path = document.path.render(self._evaluation.references.filler(scope))
            else:
                matches, _ = self._evaluation.references.resolve(document.path_from, scope)
                if len(matches) != 1:
                    ref_text = self.reporter.shown_ref(document.path_from, scope)
                    self.reporter.violation(f"{document.rule_prefix}.path-unresolved", "error",
                                            f"no path for document {name!r}: {ref_text} "
                                            f"{_matched(len(matches))}", None, ref_text,
                                            scope=scope)
                elif not isinstance(matches[0].value, str):
                    file = self._evaluation.references.file_of(document.path_from, scope)
                    self.reporter.violation(f"{document.rule_prefix}.path-not-string", "error",
                                            f"the path of document {name!r} is not a string",
                                            file, matches[0].location, actual=matches[0].value,
                                            scope=scope)
                else:
                    path = matches[0].value
        except Unavailable:
            path = None
        except Unresolvable as problem:
            self.reporter.violation(f"{document.rule_prefix}.path-unresolved", "error",
                                    f"no path for document {name!r}: {problem}", None, None,
                                    scope=scope)
            path = None
        return path

    def document(self, name: str, scope: dict) -> Loaded:
        key = self._instance_keys[name](scope)
        loaded = self._documents.get(key)
        if loaded is None:
            loaded = self._documents[key] = self._load(name, scope, key)
        elif loaded.groups:
            self.reporter.sink.touch(loaded.groups)
        if loaded.failed:
            raise Unavailable(name)
        if loaded.released:
            self._reload(loaded)
        return loaded

    def _own_scope(self, name: str, scope: dict) -> dict:
        """The bindings a document instance depends on (not those of the rule that asked)."""
        return {key: scope[key] for key in self.chains[name]}

    def _load(self, name: str, scope: dict, key: tuple) -> Loaded:
        """Load a document instance, its violations filed as one group (engine/sink.py)."""
        group = self.reporter.sink.open_group()
        try:
            loaded = self._loaded(name, scope)
        finally:
            group = self.reporter.sink.close_group(group)
        loaded.name = name
        loaded.groups = self._path_groups.get(key, ()) + ((group,) if group else ())
        return loaded

    def _loaded(self, name: str, scope: dict) -> Loaded:
        document = self.spec.documents[name]
        scope = self._own_scope(name, scope)
        if document.from_ref is not None:
            return self._from_string(document, scope)
        path = self._path_of(name, scope)
        if path is None:
            return Loaded(None, None, failed=True)
        try:
            if document.loader == "directory":
                self.files.resolve(path, kind="dir")
                return Loaded({}, path)
            if document.loader == "bytes":
                head = document.options.get(HEAD_BYTES.name, HEAD_BYTES.default)
                return Loaded(load_bytes_head(self.files, path, head), path)
            value, lines = self._parsed(document, path)
            loaded = Loaded(value, path, loader=document.loader, lines=lines)
            self._by_path.setdefault(path, loaded)
            if document.shape is not None and self._check_shapes \
                    and not self._has_shape(document, loaded, scope):
                loaded.failed = True  # as a failed load: the rules needing it are skipped
            return loaded
        except LoadError as error:
            location = ", ".join(part for part in (
                f"line {error.line}" if error.line else None, error.location) if part) or None
            self.reporter.violation(f"{document.rule_prefix}.{error.code}", "error",
                                    error.message, path, location,
                                    scope=scope, line=error.line or None)
        except OSError as error:
            self.reporter.violation(f"{document.rule_prefix}.unreadable", "error",
                                    f"cannot read ({error.strerror or error})", path, None,
                                    scope=scope)
        return Loaded(None, path, failed=True)

    def _has_shape(self, document, loaded: Loaded, scope: dict) -> bool:
        """Check a loaded document against its declared shape (engine/shapes.py); report
        every problem under the shape's rule. False when the shape does not hold."""
        rule = document.shape.rule
        try:
            problems = document.shape.problems(loaded.value)
        except Exception as bug:  # a checker bug must reject, never pass
            self.reporter.violation(INTERNAL_ERROR, "error",
                                    f"internal error checking the shape of {document.name!r}: "
                                    f"{type(bug).__name__}: {bug}", loaded.path, None,
                                    scope=scope)
            return False
        for problem in problems:
            if self.reporter.keeps(rule, "error"):
                location = _within(loaded.base, problem.location)
                self.reporter.add(rule, "error", problem.message, loaded.path, location,
                                  scope=scope, expected=problem.expected, actual=problem.actual,
                                  line=self.reporter.line_of(loaded.path, location))
        return not problems

    def _parsed(self, document, path: str) -> tuple:
        """The document's (value, lines): parsed now, or when its file was read early for a
        digest (then whatever the loader raised is raised now, where the document is loaded,
        so violations keep their order)."""
        ahead = self._parsed_ahead.get(path)
        if ahead is not None and ahead[0] is document:
            del self._parsed_ahead[path]
            if isinstance(ahead[1], Exception):
                raise ahead[1]
            return ahead[1]
        self._read.add(path)
        return _parse(document, self.files.read_bytes(path, document_limit(document.options)))

    def load_all(self, done=frozenset()) -> None:
        """Touch every document instance so that none escapes unchecked (those of the
        documents ``done`` were, element by element: ``load_element``), then
        record every loaded file's digest, in document and instance order."""
        for number, (name, document) in enumerate(self.spec.documents.items()):
            if name not in done:
                self._touch_instances(number, name, self._every_instance(document), 0)
        for name, document in self.spec.documents.items():
            if document.loader == "directory" or document.from_ref is not None:
                continue  # no file, or its container's (bound by that one's digest)
            keyer = self._instance_keys[name]
            for scope in self._every_instance(document):
                loaded = self._documents.get(keyer(scope))
                if loaded is not None and not loaded.failed and loaded.path:
                    digest = self.digest(loaded.path)
                    if digest:
                        self.reporter.outcome.files[loaded.path] = digest

    def _every_instance(self, document) -> list[dict]:
        return self._evaluation.bindings.scopes(document.each, everywhere=True) if document.each else [{}]

    def load_element(self, names, offsets: dict[str, int]) -> None:
        """Touch every instance of the named documents under the streamed element now
        bound, filed where the final load would file it (``offsets``: the instances of
        each document under earlier elements)."""
        for number, (name, document) in enumerate(self.spec.documents.items()):
            if name in names:
                instances = self._evaluation.bindings.scopes(document.each)
                self._touch_instances(number, name, instances, offsets.get(name, 0))
                offsets[name] = offsets.get(name, 0) + len(instances)

    def _touch_instances(self, number: int, name: str, instances, first: int) -> None:
        """Ask for each instance of the document (``number`` in spec order), filed at the
        final load's position of that document and instance (engine/sink.py); instances
        are counted from ``first``."""
        for ordinal, scope in enumerate(instances, first):
            self.reporter.sink.at(self.final_position + (number, ordinal))
            try:
                self.document(name, scope)
            except Unavailable:
                continue

    def release_element(self, names) -> None:
        """Let go of the parsed values of the named documents under the streamed element
        now bound: its rules are done (engine/schedule.py)."""
        for name in names:
            keyer = self._instance_keys[name]
            for scope in self._evaluation.bindings.scopes(self.spec.documents[name].each):
                loaded = self._documents.get(keyer(scope))
                if loaded is not None and loaded.loader is not None and not loaded.failed:
                    loaded.value, loaded.released = None, True

    def loader_of(self, path: str) -> str | None:
        """The loader of the first document loaded from the file ``path`` (None: none is)."""
        loaded = self._by_path.get(path)
        return None if loaded is None else loaded.loader

    def lines_of(self, path: str) -> tuple[Any, Any]:
        """(value, lines) of the first document loaded from ``path``, for a line lookup: a
        document released once its element's rules were done is read again, unless its
        format's lines were kept beside the value (jsonl, csv)."""
        loaded = self._by_path[path]
        if loaded.released and loaded.lines is None:
            self._reload(loaded)
        return loaded.value, loaded.lines

    def _reload(self, loaded: Loaded) -> None:
        """Read a released document again for a late reader. Its bytes must have the
        digest its first reading gave (the receipt binds that digest): a file that changed
        meanwhile is a violation and the document unavailable from then on."""
        document = self.spec.documents[loaded.name]
        try:
            if document.from_ref is not None:
                loaded.value = self._string_again(document, loaded)
            else:
                data = self.files.read_bytes(loaded.path, document_limit(document.options))
                if hashlib.sha256(data).hexdigest() != self.files.sha256(loaded.path):
                    raise ValueError("its bytes differ from the ones validated first")
                loaded.value, loaded.lines = _parse(document, data)
            loaded.released = False
            self._reloaded.append(loaded)
            if len(self._reloaded) > _RELOADED_KEPT:
                oldest = self._reloaded.popleft()
                if not oldest.failed:
                    oldest.value, oldest.released = None, True
        except (LoadError, OSError, ValueError) as problem:
            loaded.failed, loaded.released = True, False
            self.reporter.violation(f"{document.rule_prefix}.changed", "error",
                                    f"the file changed while it was validated: read again, "
                                    f"{problem}", loaded.path, None)
            raise Unavailable(loaded.name) from None

    def document_paths(self, names, *, complete: bool = False) -> set[str]:
        """The paths of every instance of the named documents that can be found. With
        ``complete``, raises Unavailable when an iteration they depend on could not be
        walked (a document it runs over failed, already reported): the set would lack the
        instances of the missing elements, and a check that every entry names one of them
        would report their entries as extra. Without it, the paths that are known."""
        paths = set()
        for name in names:
            document = self.spec.documents[name]
            if document.from_ref is not None:
                continue  # no file of its own (compiler/compile.py refuses it in a manifest kind)
            each = document.each
            for scope in self._every_instance(document):
                path = self._path_of(name, scope)
                if path is not None:
                    paths.add(path)
            if complete and each and \
                    self._evaluation.bindings.incomplete.intersection(self.spec.iterations[each].chain):
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
                outcome = _parse(document, self.files.read_bytes(
                    path, document_limit(document.options)))
            except Exception as problem:  # raised again where the document is loaded
                outcome = problem
            self._parsed_ahead[path] = (document, outcome)
        try:
            return self.files.sha256(path)
        except (LoadError, OSError):
            return None


    # ------------------------------------------------------------------ from a string
    def _from_string(self, document, scope: dict) -> Loaded:
        """A ``from`` document: the string its reference selects here, parsed by its loader
        and checked against its shape. What cannot be read is one violation in the
        container's file at the member's place, and the document is unavailable."""
        found = self._selected_string(document, scope)
        if found is None:
            return Loaded(None, None, failed=True)
        text, file, base = found
        try:
            value = _parse(document, _utf8(text))[0]
        except LoadError as error:
            where = f" (line {error.line} of the string)" if error.line else ""
            self._string_problem(f"{document.rule_prefix}.{error.code}",
                                 f"the string at {base}, read as {document.loader}{where}: "
                                 f"{error.message}", file, _within(base, error.location),
                                 scope)
            return Loaded(None, file, failed=True)
        loaded = Loaded(value, file, loader=document.loader, base=base, scope=scope)
        if document.shape is not None and self._check_shapes \
                and not self._has_shape(document, loaded, scope):
            loaded.failed = True
        return loaded

    def _selected_string(self, document, scope: dict) -> tuple | None:
        """(the string, its file, its location) that the document's ``from`` selects here;
        None after a violation, or when what it reads is unavailable (reported there)."""
        ref, prefix, name = document.from_ref, document.rule_prefix, document.name
        try:
            matches, file = self._evaluation.references.resolve(ref, scope)
        except Unavailable:
            return None
        except Unresolvable as problem:
            self._string_problem(f"{prefix}.from-unresolved", f"no string for document "
                                 f"{name!r}: {problem}", None, None, scope)
            return None
        if len(matches) != 1:
            shown = self.reporter.shown_ref(ref, scope)
            self._string_problem(f"{prefix}.from-unresolved", f"no string for document "
                                 f"{name!r}: {shown} {_matched(len(matches))}", file, shown,
                                 scope)
            return None
        match = matches[0]
        if not isinstance(match.value, str):
            self._string_problem(f"{prefix}.from-not-string", f"document {name!r} is parsed "
                                 f"from a string, but this is {json_type(match.value)}", file,
                                 match.location, scope, expected="string",
                                 actual=json_type(match.value))
            return None
        return match.value, file, match.location

    def _string_problem(self, rule_id, message, file, location, scope, **values) -> None:
        """A violation in the container's file, with its line where its loader tells."""
        if self.reporter.keeps(rule_id, "error"):
            self.reporter.add(rule_id, "error", message, file, location, scope=scope,
                              line=self.reporter.line_of(file, location), **values)

    def _string_again(self, document, loaded: Loaded):
        """A released ``from`` document's value, parsed again from its string (its
        container read again, and checked against its digest, if released too)."""
        try:
            matches, _ = self._evaluation.references.resolve(document.from_ref, loaded.scope)
        except Unavailable:  # its container changed: reported there
            loaded.failed, loaded.released = True, False
            raise
        if len(matches) != 1 or not isinstance(matches[0].value, str):
            raise ValueError("its string is no longer there")
        return _parse(document, _utf8(matches[0].value))[0]

    def root_location(self, target: str, scope: dict) -> str:
        """The location of a document's root: ``$``, or where a ``from`` document's string
        is (what a pointer into it continues)."""
        document = self.spec.documents.get(target)
        if document is None or document.from_ref is None:
            return "$"
        try:
            return self.document(target, scope).base
        except Unavailable:
            return "$"


def _within(base: str, location: str | None) -> str:
    """A location inside a document as a location of its file: a ``from`` document's
    continues its string member's (``$.a`` inside ``$.records[0].raw`` is
    ``$.records[0].raw.a``); a file's root is ``$``, so its locations stay as they are."""
    if base == "$":
        return location
    if not location:
        return base
    return base + location[1:] if location.startswith("$") else location


def _utf8(text: str) -> bytes:
    """A string's UTF-8 bytes, what a loader reads. A lone surrogate (JSON's ``"\\ud800"``)
    has none: the string is not text a loader can read."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise LoadError("invalid-utf8", f"the string holds a lone surrogate "
                                        f"(U+{ord(text[error.start]):04X} at character "
                                        f"{error.start}), which has no UTF-8 form",
                        line=text.count("\n", 0, error.start) + 1) from None


def _parse(document, data: bytes) -> tuple:
    """(value, lines) of a document's bytes by its loader (loaders.load_document), which
    reads the declared shape when its format takes one (csv: the columns of numbers)."""
    shape = document.shape.node if document.shape is not None else None
    return load_document(document.loader, data, document.options, shape)
