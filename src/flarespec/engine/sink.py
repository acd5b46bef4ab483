"""The sink: violations in the order a rule-by-rule run gives, whatever order the work is done in.

A report lists violations rule by rule, each rule's in the order of its bindings, and a
document's load problems (or a path's, or an iteration's that cannot be walked) where the
document was first needed: inside the first rule, in rule order, that asked for it, at
the binding that asked. The engine does not always work in that order: it may run the
rules of one element of an iteration together and release that element's documents before
the next (engine/schedule.py). So, while a run is buffered, the sink files every
violation under an *anchor* and puts them back in anchor order at the end:

* the work in progress has a *position*: ``(rule number,)`` for a rule, ``(rules, document
  number, instance number)`` for the final load of a document no rule read,
  ``(rules, documents)`` for the identities, ``(rules + 1,)`` for the metric; each position
  counts its steps, and an anchor is ``position + (step,)``;
* a rule's violations go into segments anchored where they were emitted (a rule runs over
  its bindings in their order, whichever element of the streamed iteration is current);
* the violations emitted while loading one document instance (resolving a path, walking
  an iteration) form a ``Group``, anchored at its first violation and moved, whenever any
  later work *touches* it (asks for that document, path or iteration again), to that
  work's anchor if it is earlier: the group ends up where the first rule in rule order
  that needed it would have loaded it.

A cache that answers without asking again (an iteration's bindings, a path) replays the
touches it recorded when it was filled (``recording``/``touch``).

The cap on violations kept per rule (outcome.MAX_KEPT_PER_RULE) is applied twice: per rule
position (or group) while buffering, so a broken stream still builds only a hundred of
them per rule, and by the report at the merge, in the final order. The first hundred of a
rule in the merged order are among the first hundred of each position's, so the report
keeps exactly the violations an unbuffered run keeps, and counts the rest in the same
order of first suppression.

Unbuffered (outside ``Evaluation.run``), the sink passes everything straight to the
report.
"""

from __future__ import annotations

from flarespec.engine.outcome import Outcome, Violation, counted_in, under_cap


class _Segment:
    """Violations (and suppression counts, as ``[rule, severity, count]`` markers placed
    at their first suppression) under one anchor."""

    __slots__ = ("anchor", "items", "kept", "markers")

    def __init__(self, anchor: tuple | None, kept: dict, markers: dict):
        self.anchor, self.items, self.kept, self.markers = anchor, [], kept, markers


class Group(_Segment):
    """The violations first emitted while one document instance (or path, or iteration
    under one parent) was loaded: anchored at its first violation, moved earlier by any
    earlier touch."""

    __slots__ = ()

    def __init__(self):
        super().__init__(None, {}, {})


class Sink:
    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        self.buffered = False
        self._position: tuple = (0,)
        self._steps: dict[tuple, int] = {}
        self._segments: list[_Segment] = []
        self._open: _Segment | None = None  # the current position's segment, while open
        self._groups: list[Group] = []  # groups being filled, innermost last
        self._kept: dict[tuple, dict] = {}  # position -> (rule, is error) -> kept
        self._markers: dict[tuple, dict] = {}  # position -> (rule, severity) -> marker
        self._recorders: list[list[Group]] = []

    # ------------------------------------------------------------------ where work is
    @property
    def position(self) -> tuple:
        """Where work belongs now (the last ``at``)."""
        return self._position

    def at(self, position: tuple) -> None:
        """Work from here on belongs to ``position``."""
        if position != self._position:
            self._position, self._open = position, None

    def _anchor(self) -> tuple:
        step = self._steps.get(self._position, 0)
        self._steps[self._position] = step + 1
        self._open = None  # what the position emits next lies after this step
        return self._position + (step,)

    def _target(self) -> _Segment:
        if self._groups:
            group = self._groups[-1]
            if group.anchor is None:  # its first violation: anchored here
                group.anchor = self._anchor()
                self._segments.append(group)
                self._record(group)
            return group
        if self._open is None:
            position = self._position
            self._open = _Segment(self._anchor(), self._kept.setdefault(position, {}),
                                  self._markers.setdefault(position, {}))
            self._segments.append(self._open)
        return self._open

    # ------------------------------------------------------------------ emitting
    def accepts(self, rule_id: str, severity: str) -> bool:
        if not self.buffered:
            return self.outcome.accepts(rule_id, severity)
        return under_cap(self._target().kept, rule_id, severity)

    def add(self, violation: Violation) -> None:
        if not self.buffered:
            self.outcome.add(violation)
            return
        target = self._target()
        if not counted_in(target.kept, violation):
            self.suppress(violation.rule, violation.severity)
            return
        target.items.append(violation)

    def suppress(self, rule_id: str, severity: str, count: int = 1) -> None:
        if not self.buffered:
            self.outcome.suppress(rule_id, severity, count)
            return
        target = self._target()
        marker = target.markers.get((rule_id, severity))
        if marker is None:
            marker = target.markers[(rule_id, severity)] = [rule_id, severity, 0]
            target.items.append(marker)
        marker[2] += count

    # ------------------------------------------------------------------ groups
    def open_group(self) -> Group | None:
        """Start filing emissions under a new group (None when unbuffered)."""
        if not self.buffered:
            return None
        group = Group()
        self._groups.append(group)
        return group

    def close_group(self, group: Group | None) -> Group | None:
        """Stop filling ``group``; it, when it holds a violation, else None."""
        if group is None:
            return None
        self._groups.remove(group)
        return group if group.items else None

    def touch(self, groups) -> None:
        """The work in progress needed what these groups were emitted for: each moves to
        this anchor when it is earlier than its own."""
        if not self.buffered:
            return
        for group in groups:
            self._record(group)
            step = self._steps.get(self._position, 0)
            if group.anchor is not None and self._position + (step,) < group.anchor:
                group.anchor = self._anchor()

    def recording(self) -> list[Group]:
        """Start recording the groups touched or filled (nested recordings are passed up
        by ``recorded``)."""
        found: list[Group] = []
        self._recorders.append(found)
        return found

    def recorded(self, found: list[Group]) -> tuple[Group, ...]:
        """Stop the innermost recording, ``found`` (recordings nest strictly: every caller
        stops its own in a ``finally``), and pass what it found to the one around it."""
        if not self._recorders or self._recorders.pop() is not found:
            raise RuntimeError("recordings stopped out of order")  # an engine bug
        if self._recorders:
            self._recorders[-1].extend(found)
        return tuple(found)

    def _record(self, group: Group) -> None:
        if self._recorders:
            self._recorders[-1].append(group)

    # ------------------------------------------------------------------ the end
    def flush(self, before: tuple | None = None) -> None:
        """Hand the outcome what was buffered, in anchor order: all of it, or only what is
        anchored before ``before`` (the rest is kept for a later flush)."""
        due = [segment for segment in self._segments
               if before is None or segment.anchor < before]
        self._segments = [segment for segment in self._segments
                          if before is not None and segment.anchor >= before]
        due.sort(key=lambda segment: segment.anchor)
        outcome = self.outcome
        for segment in due:
            for item in segment.items:
                if type(item) is list:
                    outcome.suppress(item[0], item[1], item[2])
                else:
                    outcome.add(item)

    def discard(self) -> None:
        """Forget what is still buffered (work whose violations do not count)."""
        self._segments.clear()
