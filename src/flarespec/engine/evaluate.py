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
from pathlib import Path

from flarespec.engine.arguments import References, placeholder_ref
from flarespec.engine.describe import Reporter
from flarespec.engine.documents import DocumentStore
from flarespec.engine.hooks import HOOKS
from flarespec.engine.kinds import Failure
from flarespec.engine.paths import Match
from flarespec.engine.passes import Element, Passes
from flarespec.engine.problems import (  # noqa: F401 (re-exported)
    INTERNAL_ERROR,
    METRIC_UNAVAILABLE,
    ArgumentUnresolved,
    Unavailable,
    Unresolvable,
)
from flarespec.engine.refs import Condition, Ref
from flarespec.engine.outcome import Outcome
from flarespec.engine.schedule import schedule
from flarespec.engine.scopes import Binding, Bindings, binding_key, scope_label
from flarespec.loaders.limits import gc_paused


class Evaluation:
    def __init__(self, spec, entry_path: str | Path, *, pass_checks: bool = True,
                 shapes: bool = True, streaming: bool = True):
        """``pass_checks=False`` runs every check on the reporting path alone (the tests
        compare both ways; see passes.py). ``shapes=False`` loads documents without checking
        their shapes: only for choosing a spec by ``applies_to``, where the packet may be of
        another revision whose documents have other shapes (it is then validated in full).
        ``streaming=False`` runs the rules one by one over every binding, all documents
        held to the end, instead of by the spec's schedule (engine/schedule.py; the tests
        compare both ways: the reports are the same)."""
        entry_path = Path(entry_path)
        self.spec = spec
        self.reporter = Reporter(Outcome(spec.id), self)
        self.references = References(self)
        # where the sink files what follows the rules (engine/sink.py): the final load of
        # each document instance, then the identities, then the metric
        self.documents = DocumentStore(spec, entry_path, self.reporter, self, shapes=shapes,
                                       final_position=(len(spec.rules),))
        self._metric_position = (len(spec.rules) + 1,)
        self._passes = Passes(self) if pass_checks else None
        self._schedule = schedule(spec) if streaming else None
        self.bindings = Bindings(self, self._schedule)
        self._samples: list | None = None  # the metric's, when read element by element
        self._samples_problem: Exception | None = None
        # requires: the binding keys where a required rule failed or could not run
        self._failed_at: dict[str, set[tuple]] = {
            rule_id: set() for rule in spec.rules for rule_id in rule.requires}
        self._depth = {rule.id: len(spec.iterations[rule.for_each].chain)
                       if rule.for_each else 0 for rule in spec.rules}

    @property
    def outcome(self) -> Outcome:
        """What this evaluation has found so far (all of it once ``run`` returned it)."""
        return self.reporter.outcome

    @gc_paused
    def run(self) -> Outcome:
        """Apply every rule, then compute identities and (on a clean report) the metric.

        The rules run by the spec's schedule (engine/schedule.py) or one by one; the sink
        (engine/sink.py) gives the report its violations in rule order either way.

        The cyclic garbage collector is paused meanwhile, as for a parse: a run allocates a
        few objects per element (matches, scopes, bindings) next to the millions the loaded
        documents hold, and every collection those allocations trigger walks them all (a
        third of a run over a million-event stream). A run makes no cyclic garbage per
        element: what it discards is freed by reference counting."""
        sink, rules = self.reporter.sink, self.spec.rules
        sink.buffered = True
        if self._schedule is None:
            self._apply_rules(range(len(rules)))
            self.documents.load_all()
        else:
            self._run_scheduled(self._schedule)
        sink.at(self.documents.final_position + (len(self.spec.documents),))
        self.reporter.outcome.identities = self._identities()
        sink.flush(before=self._metric_position)
        if self.reporter.outcome.ok and self.spec.metric is not None:
            sink.at(self._metric_position)
            self._compute_metric()
            sink.flush()
        sink.discard()  # what the metric's reading emitted when there is no metric
        sink.buffered = False
        self.bindings.close()  # bindings refer back to this evaluation: free them now
        self._passes = None  # so do the pass functions
        self.references.close()  # and the accessors
        self.documents.close()
        return self.reporter.outcome

    def _apply_rules(self, numbers) -> None:
        """The rules ``numbers``, in order. The rules of one pass (engine/passes.py) are
        tested together when the first of them is due, binding by binding."""
        rules, sink = self.spec.rules, self.reporter.sink
        groups = self._passes.groups(numbers) if self._passes is not None else {}
        for number in numbers:
            sink.at((number,))
            group = groups.get(number)
            if group is None:
                self._apply(rules[number])
            elif number == group.numbers[0]:
                self._run_pass(group)

    def _run_pass(self, group) -> None:
        """The pass's rules over their bindings: each binding not known to pass for a rule
        takes the reporting path at once, in that rule's turn (engine/sink.py puts what it
        reports in rule order), before the pass goes on, unless a rule it requires failed
        there (skipped, as alone); so every rule reads and reports binding by binding in
        the order it always did."""
        rules, sink = [self.spec.rules[number] for number in group.numbers], self.reporter.sink
        positions = [(number,) for number in group.numbers]
        check = group.check
        if not group.element:
            for scope in self.bindings.rule_scopes(group.iteration) if group.iteration else [{}]:
                for position in check(scope):
                    sink.at(positions[position])
                    rule = rules[position]
                    if not (rule.requires and self.required_failed(rule, scope)):
                        self._apply_once(rule, scope)
                sink.at(positions[0])  # the next bindings are made in the first rule's turn
            return
        iteration = self.spec.iterations[group.iteration]
        for parent in self.bindings.scopes(iteration.parent) if iteration.parent else [{}]:
            sink.at(positions[0])
            values = self.bindings.elements(iteration, parent, self.references.values)
            if values is None:
                continue  # no elements: their cause is already reported
            children = _Children(self, iteration, parent)
            for position, index in check(Element(parent, iteration.name), values):
                sink.at(positions[position])
                rule = rules[position]
                if not (rule.requires and self.required_failed(rule, parent)):
                    self._apply_once(rule, children.scope(index))

    def _run_scheduled(self, schedule) -> None:
        """The rules before the stream, the streamed rules element by element (each
        element's documents then loaded if no rule read them, the metric's samples read,
        and the documents released), the rules after it, the final load."""
        self._apply_rules(schedule.before)
        self.reporter.sink.at((schedule.streamed[0],))
        offsets: dict[str, int] = {}
        if schedule.metric:
            self._samples = []
        bindings = self.bindings
        for element in bindings.scopes(schedule.stream):
            bindings.enter(element)
            try:
                self._apply_rules(schedule.streamed)
                self.documents.load_element(schedule.documents, offsets)
                if schedule.metric:
                    self.reporter.sink.at(self._metric_position)
                    self._read_samples(bindings.scopes(self.spec.metric.for_each))
                self.documents.release_element(schedule.documents)
            finally:
                bindings.leave()
        self._apply_rules(schedule.after)
        self.documents.load_all(done=schedule.documents)

    def holds(self, condition: Condition, scope: dict) -> bool:
        """True when the condition's selection is not empty (unless its kind accepts an
        empty one) and its kind's verdict holds for it. The condition's pass test (passes.py)
        reads the values (engine/passes.py); when it cannot (or raises), the general
        resolver reads them. Either way the verdict is the kind's one function."""
        decide = self._passes.condition(condition) if self._passes is not None else None
        if decide is not None:
            try:
                return bool(decide(scope))
            except Exception:  # not known (or a problem): the general path decides
                pass
        matches, _ = self.references.resolve(condition.given, scope)
        if not matches and not condition.kind.accepts_empty:
            return False
        arg = self.references.materialize(condition.arg, scope)
        return condition.kind.holds_for(RuleContext(self, scope), [m.value for m in matches],
                                        arg)

    def _apply(self, rule) -> None:
        tracked = rule.id in self._failed_at  # another rule requires this one
        if not tracked and self._by_element(rule):
            return
        plan = self._passes.alone(rule) if self._passes is not None else None
        scopes = self.bindings.rule_scopes(rule.for_each) if rule.for_each else [{}]
        if plan is not None and not tracked and not rule.requires:
            for scope in scopes:  # nothing to record per binding: passed, or reported
                if not _known_to_pass(plan, scope):
                    self._apply_once(rule, scope)
            return
        for scope in scopes:
            if rule.requires and self.required_failed(rule, scope):
                passed = False  # skipped: its cause is already reported
            else:
                before = self.reporter.emitted
                passed = (_known_to_pass(plan, scope) or self._apply_once(rule, scope)) \
                    and self.reporter.emitted == before
            if tracked and not passed:
                self._failed_at[rule.id].add(binding_key(scope))

    def _by_element(self, rule) -> bool:
        """Run a rule over a leaf iteration by its element pass (engine/passes.py), when it
        has one and needs nothing per element but its verdict: no other rule requires it,
        and what it requires lies in an enclosing iteration (so it is decided per parent).
        An element that is not known to pass gets its scope and the reporting path, as
        always. False when the rule is not run this way."""
        passes = self._passes
        if passes is None or rule.for_each not in self.bindings.leaves \
                or not passes.element_form(rule):
            return False
        group = passes.alone(rule, element=True)
        if group is None:
            return False
        check = group.check
        iteration = self.spec.iterations[rule.for_each]
        position = self.reporter.sink.position
        for parent in self.bindings.scopes(iteration.parent) if iteration.parent else [{}]:
            values = self.bindings.elements(iteration, parent, self.references.values)
            if values is None or rule.requires and self.required_failed(rule, parent):
                continue  # no elements, or all skipped: their cause is already reported
            children = _Children(self, iteration, parent)
            for _, index in check(Element(parent, iteration.name), values):
                self.reporter.sink.at(position)  # not known to pass: reported
                self._apply_once(rule, children.scope(index))
        return True

    def required_failed(self, rule, scope: dict) -> bool:
        """True when a rule this one requires failed (or could not run) for this binding
        or an enclosing one; compile checked that each runs over an enclosing iteration."""
        key = binding_key(scope)
        return any(key[:self._depth[required]] in self._failed_at[required]
                   for required in rule.requires)

    def requires_enclosing(self, rule) -> bool:
        """True when every rule this one requires runs over an iteration enclosing its own
        (so whether one failed is known per parent: the element form may test it)."""
        return all(self._depth[required] < self._depth[rule.id] for required in rule.requires)

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
            if self.reporter.keeps(rule.id, rule.severity):
                ref_text = self.reporter.shown_ref(problem.ref, scope)
                self.reporter.add(rule.id, rule.severity, f"cannot evaluate: {ref_text} matched "
                                  f"{problem.found} places, expected exactly one", None, ref_text,
                                  scope=scope)
        except (ValueError, TypeError) as problem:
            self.reporter.violation(rule.id, rule.severity, f"cannot evaluate: {problem}",
                                    None, None, scope=scope)
        except Exception as bug:  # an engine or hook bug must reject, never pass
            self.reporter.violation(INTERNAL_ERROR, "error",
                                    f"internal error in rule {rule.id}: "
                                    f"{type(bug).__name__}: {bug}", None, None, scope=scope)
        return True

    def _apply_assertion(self, rule, scope: dict) -> None:
        matches, file = self.references.resolve(rule.given, scope)
        kind = rule.kind
        if not matches and not kind.accepts_empty:
            if not rule.optional and self.reporter.keeps(rule.id, rule.severity):
                ref_text = self.reporter.shown_ref(rule.given, scope)
                failure = Failure(f"nothing found at {ref_text}", "present")
                reporter = self.reporter
                reporter.sink.add(reporter.described(rule, scope, failure, file, ref_text, None))
            return
        arg = self.references.materialize(rule.arg, scope)
        # read here: checked as the spec's own was at load
        if not self.references.is_static(rule.arg):
            kind.read_argument(arg)
        context = RuleContext(self, scope)
        if kind.collective:
            values = [match.value for match in matches]
            for failure in kind.function(context, values, arg, _Locations(matches)):
                self.reporter.report_failure(rule, scope, failure, file, None)
            return
        function = kind.function
        for match in matches:
            for failure in function(context, match.value, arg, match.location):
                self.reporter.report_failure(rule, scope, failure, file, match)

    def context(self, scope: dict) -> "RuleContext":
        """What a kind or hook may ask of the engine for the binding ``scope``."""
        return RuleContext(self, scope)

    def _apply_hook(self, rule, scope: dict) -> None:
        args = self.references.materialize(rule.arg, scope)
        for failure in HOOKS[rule.hook].function(RuleContext(self, scope), args):
            if self.reporter.keeps(rule.id, rule.severity):
                file, location = self.reporter.hook_place(rule, scope, failure)
                reporter = self.reporter
                reporter.sink.add(reporter.described(rule, scope, failure, file, location, None))

    def _identities(self) -> dict:
        identities = {}
        for name, arg in self.spec.identities.items():
            try:
                identities[name] = self.references.materialize(arg, {})
            except (Unavailable, Unresolvable, ArgumentUnresolved):
                identities[name] = None
        return identities

    def _read_samples(self, scopes) -> None:
        """Add the metric's samples under these bindings to ``_samples``; a problem is
        kept (the first) and stops the reading, to be reported when the metric is due."""
        if self._samples_problem is not None:
            return
        metric = self.spec.metric
        try:
            for scope in scopes:
                if metric.when is not None and not self.holds(metric.when, scope):
                    continue
                matches, _ = self.references.resolve(metric.given, scope)
                label = metric.label.render(self.references.filler(scope)) if metric.label else \
                    scope_label(scope)
                self._samples.append((label, [m.value for m in matches]))
        except Exception as problem:  # no metric unless it was computed cleanly
            self._samples_problem = problem

    def _compute_metric(self) -> None:
        metric = self.spec.metric
        if self._samples is None:  # not read element by element: read them now
            self._samples = []
            self._read_samples(self.bindings.scopes(metric.for_each) if metric.for_each else [{}])
        samples = self._samples
        try:
            if self._samples_problem is not None:
                raise self._samples_problem
            if not samples:
                raise ValueError("no samples were selected")
            result = HOOKS[metric.hook].function(RuleContext(self, {}), samples,
                                                 self.references.materialize(metric.args, {}))
            value = result.value
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise ValueError(f"the metric hook returned {value!r}, not a finite number")
        except Exception as problem:  # no metric unless it was computed cleanly
            self.reporter.violation(METRIC_UNAVAILABLE, "error",
                                    f"metric {metric.key} not computed: {problem}", None, None)
            return
        self.reporter.outcome.metric = {"key": metric.key, "unit": metric.unit, "value": value,
                              "contract": metric.contract, "samples": result.samples,
                              "details": result.details}


def _known_to_pass(group, scope: dict) -> bool:
    """True when the rule's pass alone (engine/passes.py) says it passes here. Anything
    else (a failure, no pass for its kind) is "not known": the caller runs the rule on the
    reporting path, which repeats what it needs (documents already loaded or reported
    stay as they are) and words every violation. So this may only ever say "passes"."""
    if group is None:
        return False
    for _ in group.check(scope):
        return False
    return True


class _Children:
    """The scopes of a leaf iteration's elements under one parent, made only for the
    elements reported: the elements' places resolved once, when the first is needed."""

    __slots__ = ("_evaluation", "_iteration", "_parent", "_found")

    def __init__(self, evaluation, iteration, parent: dict):
        self._evaluation, self._iteration, self._parent = evaluation, iteration, parent
        self._found = None

    def scope(self, index: int) -> dict:
        evaluation = self._evaluation
        if self._found is None:
            self._found = evaluation.references.resolve(self._iteration.over, self._parent)
        matches, file = self._found
        return evaluation.bindings.child(self._iteration, self._parent, index, matches[index], file)


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
        ref = ref if isinstance(ref, Ref) else placeholder_ref(ref)
        try:
            scope = self.scope if scope is None else scope
            return self._evaluation.references.resolve(ref, scope)[0]
        except Unavailable:
            return []

    def scopes(self, iteration: str) -> list[dict]:
        return self._evaluation.bindings.scopes(iteration, everywhere=True)

    def document_paths(self, names, *, complete: bool = False) -> set[str]:
        return self._evaluation.documents.document_paths(names, complete=complete)

    def digest(self, path: str) -> str | None:
        return self._evaluation.documents.digest(path)


def evaluate(spec, entry_path: str | Path) -> Outcome:
    """Apply ``spec`` to the documents whose entry file is ``entry_path``."""
    return Evaluation(spec, entry_path).run()

