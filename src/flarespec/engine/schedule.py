"""The schedule: which rules run element by element of one iteration, so that each element's
documents can be released once its rules are done.

A spec whose documents are per element of an iteration (one response per request) would
otherwise hold every element's documents for the whole run, since each rule runs over all
bindings before the next rule starts: memory grows with the packet. The schedule picks the
*streamed* iteration (the one most documents are per element of) and splits the rules:

* **streamed**: rules over the streamed iteration or one below it whose every reference
  reads only what that element fixes (the constants, its own and its ancestors' bindings,
  documents per element of it or of an ancestor, unpinned at it or above, and documents
  of no element). They run element by element, in rule order within each element; then
  the element's documents are loaded if no rule read them, and released.
* **before**: every other rule that reads nothing per element of the streamed iteration,
  run first, in rule order.
* **after**: the rules left (a kind that asks the engine for more than values, such as a
  manifest's digests; a reference to another element's documents; a rule requiring one of
  these or a streamed rule), run last, in rule order. A released document that one of them
  reads is read again and must have the digest it had (engine/documents.py).

The order of the work changes, never the report's: engine/sink.py puts every violation
back where a rule-by-rule run places it. When a streamed rule would require a rule that
runs after the stream, there is no schedule (the rules run one by one as always).
"""

from __future__ import annotations

from dataclasses import dataclass

from flarespec.engine.refs import Ref, refs_in


@dataclass(frozen=True)
class Schedule:
    stream: str                   # the streamed iteration
    subtree: frozenset            # it and every iteration below it
    documents: frozenset          # the documents per element of the subtree
    before: tuple[int, ...]       # rule numbers, in rule order
    streamed: tuple[int, ...]
    after: tuple[int, ...]
    metric: bool                  # the metric's samples are read element by element


def schedule(spec) -> Schedule | None:
    """The spec's schedule, or None when nothing would be streamed."""
    stream = _streamed_iteration(spec)
    if stream is None:
        return None
    subtree = frozenset(name for name, iteration in spec.iterations.items()
                        if stream in iteration.chain)
    documents = frozenset(name for name, document in spec.documents.items()
                          if document.each in subtree)
    reach = _Reach(spec, stream, subtree, documents)
    rules = spec.rules
    streamed = {number for number, rule in enumerate(rules)
                if rule.for_each in subtree and reach.local(_rule_refs(rule), rule.for_each)}
    if not streamed:
        return None
    numbers = {rule.id: number for number, rule in enumerate(rules)}
    after: set[int] = set()
    changed = True
    while changed:  # a rule requiring one that runs later runs later too
        changed = False
        for number, rule in enumerate(rules):
            if number in streamed or number in after:
                continue
            if rule.kind is not None and rule.kind.context or \
                    any(reach.per_element(ref) for ref in _rule_refs(rule)) or \
                    any(numbers[required] in streamed or numbers[required] in after
                        for required in rule.requires):
                after.add(number)
                changed = True
    if any(numbers[required] in after for number in streamed
           for required in rules[number].requires):
        return None
    metric = spec.metric
    return Schedule(
        stream, subtree, documents,
        before=tuple(n for n in range(len(rules)) if n not in streamed and n not in after),
        streamed=tuple(sorted(streamed)), after=tuple(sorted(after)),
        metric=metric is not None and metric.for_each in subtree and reach.local(
            list(refs_in([metric.given, metric.when, metric.args, metric.label])),
            metric.for_each))


def placements(spec) -> dict[str, str]:
    """Rule id -> where it runs, in words for a spec author (``spec show``): ``per
    <iteration>``, ``before the <iteration> elements``, ``after the <iteration> elements``
    (it re-reads released documents), or ``in order`` when there is no schedule."""
    plan = schedule(spec)
    if plan is None:
        return {rule.id: "in order" for rule in spec.rules}
    words = {}
    for numbers, text in ((plan.before, f"before the {plan.stream} elements"),
                          (plan.streamed, f"per {plan.stream}"),
                          (plan.after, f"after the {plan.stream} elements")):
        for number in numbers:
            words[spec.rules[number].id] = text
    return words


def _streamed_iteration(spec) -> str | None:
    """The iteration the most documents are per element of (the first of equals)."""
    counts: dict[str, int] = {}
    for document in spec.documents.values():
        if document.each:
            counts[document.each] = counts.get(document.each, 0) + 1
    return max(counts, key=counts.get) if counts else None


def _rule_refs(rule) -> list[Ref]:
    return list(refs_in([rule.given, rule.when, rule.arg, rule.message]))


class _Reach:
    """What a reference reads, measured against the streamed iteration."""

    def __init__(self, spec, stream: str, subtree: frozenset, documents: frozenset):
        self._spec = spec
        self._subtree = subtree
        self._documents = documents
        self._above = frozenset(spec.iterations[stream].chain)  # the stream and its ancestors

    def per_element(self, ref: Ref) -> bool:
        """The reference reads something that differs from element to element."""
        return ref.target in self._documents or ref.target in self._subtree

    def local(self, refs: list[Ref], for_each: str) -> bool:
        """Every reference reads only what one element of ``for_each`` fixes."""
        chain = set(self._spec.iterations[for_each].chain)
        for ref in refs:
            if not self.per_element(ref):
                continue
            if ref.target in self._documents:
                each = self._spec.documents[ref.target].each
                own = self._spec.iterations[each].chain
            else:
                own = self._spec.iterations[ref.target].chain
            if not set(own) <= chain or self._above.intersection(ref.pinned):
                return False
        return True
