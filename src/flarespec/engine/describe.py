"""The reporter: every violation of one evaluation counted, kept or only counted, described.

An object of ``Evaluation`` (engine/evaluate.py), owning the outcome, its sink
(engine/sink.py: rule order) and the count of violations emitted. A failure becomes a
``Violation`` with its file, location, line, the place its expected value was read from,
and its message with references filled in, worked out only for a violation the outcome
keeps: passing paths and counted-only violations pay nothing. Values are read through the
evaluation's public readers (resolve, filler, pin, root_location, lines_of), never its
state.
"""

from __future__ import annotations

import weakref
from typing import Any

from flarespec.engine.kinds import Failure
from flarespec.engine.paths import Match
from flarespec.engine.problems import Unavailable, Unresolvable
from flarespec.engine.refs import (
    BINDING_METADATA,
    MESSAGE_FIELDS,
    ArgRef,
    Ref,
    expected_ref,
    relative_location,
    shown_ref,
)
from flarespec.engine.outcome import Outcome, Violation, shown
from flarespec.engine.scopes import scope_label
from flarespec.engine.sink import Sink
from flarespec.engine.values import member_at, strict_equal
from flarespec.loaders import locate_line, locates_lines
from flarespec.loaders.locations import child_location, location_keys


_VALUES = ("expected", "actual")  # message placeholders shown as JSON values


def _value_at(value: Any, suffix: str) -> tuple[bool, Any]:
    """(found, value) at a relative location (``.a[0]``) inside ``value``."""
    try:
        keys = location_keys("$" + suffix)
    except ValueError:
        return False, None
    return member_at(value, keys)


def _is_expected(value: Any, expected: Any) -> bool:
    """The value read at a place is the failure's expected value (or one of its bounds:
    ``range`` reports ``{"max": 2}``)."""
    if strict_equal(value, expected):
        return True
    return isinstance(expected, dict) and any(strict_equal(value, v) for v in expected.values())


class Reporter:
    """The violations of one evaluation, into ``outcome`` through its sink; ``reader``
    (the evaluation) reads what a description needs."""

    def __init__(self, outcome: Outcome, reader):
        self.outcome = outcome
        self.sink = Sink(outcome)
        self.emitted = 0  # violations emitted so far, kept or only counted
        self._reader = weakref.proxy(reader)  # it holds this reporter: no reference cycle

    def report_failure(self, rule, scope, failure: Failure, file, match: Match | None) -> None:
        if not self.keeps(rule.id, rule.severity):
            return
        location = failure.location or (match.location if match is not None
                                        else self.shown_ref(rule.given, scope))
        origin = self._expected_origin(rule, scope, failure, match, location)
        self.sink.add(self.described(rule, scope, failure, failure.file or file, location,
                                       origin))

    def hook_place(self, rule, scope: dict, failure: Failure) -> tuple[str | None, str | None]:
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

    def keeps(self, rule_id: str, severity: str) -> bool:
        """Count one violation; True when the report keeps it, so it is worth describing.
        A violation past the report's cap is counted only: nothing is rendered for it."""
        self.emitted += 1
        if self.sink.accepts(rule_id, severity):
            return True
        self.sink.suppress(rule_id, severity)
        return False

    def violation(self, rule_id, severity, message, file, location, *, scope=None,
                   expected=None, actual=None, line=None) -> None:
        if self.keeps(rule_id, severity):
            self.add(rule_id, severity, message, file, location, scope=scope,
                      expected=expected, actual=actual, line=line)

    def add(self, rule_id, severity, message, file, location, *, scope=None, expected=None,
             actual=None, line=None) -> None:
        """Add a violation already counted by ``keeps``."""
        self.sink.add(Violation(rule_id, severity, message, file, location, expected, actual,
                                 scope_label(scope), line))

    def described(self, rule, scope, failure: Failure, file, location, origin) -> Violation:
        line = self.line_of(file, location)
        message = self._message(rule, scope, failure, file, location, line, origin)
        return Violation(rule.id, rule.severity, message, file, location, failure.expected,
                         failure.actual, scope_label(scope), line, origin)

    def line_of(self, file: str | None, location: str | None) -> int | None:
        """The 1-based line of a JSONPath location in a loaded file, when its loader can
        tell. Only a courtesy to the reader: not finding it never changes a verdict."""
        if not file or not location:  # locate_line places what it can (a ref's `[*]` too)
            return None
        loader = self._reader.documents.loader_of(file)
        if loader is None or not locates_lines(loader):
            return None
        try:
            value, lines = self._reader.documents.lines_of(file)
            line = locate_line(loader, value, location, lines)
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
            matches, file = self._reader.references.resolve(ref, scope)
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
        return self._reader.bindings.pin(scope, ref.pinned) if ref.pinned else scope

    def _pointer_location(self, ref: Ref, scope: dict) -> str | None:
        """The JSONPath a pointer names, whether or not anything is there (no ``[k=v]``)."""
        scope = self._pinned(ref, scope)
        binding = scope.get(ref.target)
        location = binding.location if binding is not None \
            else self._reader.documents.root_location(ref.target, scope)
        fill = self._reader.references.filler(scope)
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
        line = self.line_of(file, where)
        if line is not None:
            entry["line"] = line
        return entry

    def shown_ref(self, ref: Ref, scope: dict) -> str:
        try:
            scope = self._pinned(ref, scope)
        except (Unresolvable, Unavailable):
            pass
        return shown_ref(ref, self._reader.references.filler(scope))

    def _message(self, rule, scope, failure: Failure, file, location, line, origin) -> str:
        if rule.message is None:
            return failure.message
        origin = origin or {}
        named = dict(zip(MESSAGE_FIELDS, (
            failure.message, failure.expected, failure.actual, file, location, line,
            origin.get("file"), origin.get("location"), origin.get("line"))))

        def fill(placeholder):
            head = placeholder.name  # None for a reference
            if head in named:
                present, value = placeholder.member_of(named[head])
                if not present:
                    return "{" + placeholder + "}"
                if head in _VALUES:
                    return shown(value)
                return "?" if value is None else str(value)  # file, location, line, detail
            try:
                value = self._reader.references.filler(scope)(placeholder)
            except (KeyError, Unavailable, Unresolvable):
                return "{" + placeholder + "}"
            return value if isinstance(value, str) else shown(value)
        return rule.message.render(fill)
