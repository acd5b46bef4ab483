"""``spec impact``: a spec change replayed over stored inputs — whose verdict flips, and why.

Both specs run over every given input (in parallel, one process per core); per input the
verdict and metric old -> new and the rules responsible for a flip; per rule how many inputs
it newly rejects, newly accepts, or rejects for other reasons. The static classes of
``spec diff`` are then checked against the data: a change classed neutral that flips a
verdict, a change whose direction the flips contradict, and a tightening that flips nothing
on the inputs given are reported as findings.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from flarespec.review.diff import LOOSENING, NEUTRAL, TIGHTENING, DiffResult, diff_specs


@dataclass
class Verdict:
    """What one spec said about one input: plain data, so it crosses process boundaries."""
    ok: bool
    metric: float | None
    errors: dict[str, list[str]]     # rule id -> its error messages (file location message)


@dataclass
class InputImpact:
    input: str
    old: Verdict
    new: Verdict
    renamed: dict[str, str] = field(default_factory=dict)  # old rule id -> new id

    def _old_errors(self) -> dict[str, list[str]]:
        return {self.renamed.get(rule, rule): found for rule, found in self.old.errors.items()}

    @property
    def newly_failing(self) -> list[str]:
        return sorted(set(self.new.errors) - set(self._old_errors()))

    @property
    def newly_passing(self) -> list[str]:
        return sorted(set(self._old_errors()) - set(self.new.errors))

    @property
    def reasons_changed(self) -> list[str]:
        old = self._old_errors()
        return sorted(rule for rule in set(old) & set(self.new.errors)
                      if sorted(old[rule]) != sorted(self.new.errors[rule]))

    @property
    def flip(self) -> str | None:
        if self.old.ok == self.new.ok:
            return None
        return "pass→fail" if self.old.ok else "fail→pass"

    @property
    def responsible(self) -> list[str]:
        """The rules that make the flip: newly failing ones for pass→fail, newly passing
        ones for fail→pass."""
        return {"pass→fail": self.newly_failing, "fail→pass": self.newly_passing}.get(
            self.flip, [])

    def as_dict(self) -> dict:
        return {"input": self.input, "old": {"ok": self.old.ok, "metric": self.old.metric},
                "new": {"ok": self.new.ok, "metric": self.new.metric}, "flip": self.flip,
                "responsible": self.responsible, "newly_failing": self.newly_failing,
                "newly_passing": self.newly_passing, "reasons_changed": self.reasons_changed}


@dataclass
class ImpactResult:
    diff: DiffResult
    inputs: list[InputImpact]
    findings: list[str]

    def per_rule(self) -> dict[str, dict[str, int]]:
        rules: dict[str, dict[str, int]] = {}
        for impact in self.inputs:
            for key, found in (("pass→fail", impact.newly_failing),
                               ("fail→pass", impact.newly_passing),
                               ("reasons changed", impact.reasons_changed)):
                for rule in found:
                    counts = rules.setdefault(rule, {"pass→fail": 0, "fail→pass": 0,
                                                     "reasons changed": 0})
                    counts[key] += 1
        return dict(sorted(rules.items()))

    def as_dict(self) -> dict:
        return {"old": self.diff.old, "new": self.diff.new,
                "inputs": [impact.as_dict() for impact in self.inputs],
                "rules": self.per_rule(), "findings": self.findings}


def entries(paths: list[str], entry_name: str | None) -> list[Path]:
    """The input entry files: each file as given; each directory searched for files named
    ``entry_name`` (required for directories)."""
    found: list[Path] = []
    for given in map(Path, paths):
        if given.is_dir():
            if not entry_name:
                raise ValueError(f"{given} is a directory: say which files in it are inputs "
                                 f"with --entry NAME")
            found.extend(sorted(given.rglob(entry_name)))
        else:
            found.append(given)
    return found


def _verdict(spec_ref: str, entry: str) -> Verdict:
    from flarespec.engine.evaluate import evaluate
    from flarespec.spec.open import open_compiled

    report = evaluate(open_compiled(spec_ref), entry)
    errors: dict[str, list[str]] = {}
    for violation in report.violations:
        errors.setdefault(violation.rule, []).append(
            f"{violation.file or ''} {violation.location or ''} {violation.message}".strip())
    return Verdict(report.ok, (report.metric or {}).get("value"), errors)


def _both(job: tuple[str, str, str]) -> tuple[Verdict, Verdict]:
    old_ref, new_ref, entry = job
    return _verdict(old_ref, entry), _verdict(new_ref, entry)


def _arrived(inputs: list[Path], verdicts: Iterable[tuple[Verdict, Verdict]],
             renamed: dict[str, str],
             on_input: Callable[[InputImpact], None] | None) -> list[InputImpact]:
    """Each input's impact, in the order of ``inputs`` (``map`` yields in order, each pair
    as soon as it and those before it are done), told to ``on_input`` as it arrives."""
    results = []
    for entry, (old, new) in zip(inputs, verdicts):
        results.append(InputImpact(str(entry), old, new, renamed))
        if on_input is not None:
            on_input(results[-1])
    return results


def impact(old_ref: str, new_ref: str, inputs: list[Path], workers: int | None = None, *,
           on_input: Callable[[InputImpact], None] | None = None) -> ImpactResult:
    """Run both specs over every input (in parallel when there are several) and compare.
    ``on_input`` is called with each input's impact as its verdict pair arrives, in the
    order of ``inputs`` (the result's order): a progress hook."""
    from flarespec.review.git import linted

    diff = diff_specs(linted(old_ref), linted(new_ref))
    renamed = {change.old: change.new for change in diff.changes if change.path == "id"}
    jobs = [(str(old_ref), str(new_ref), str(entry)) for entry in inputs]
    workers = min(workers or os.cpu_count() or 1, len(jobs))
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = _arrived(inputs, pool.map(_both, jobs), renamed, on_input)
    else:
        results = _arrived(inputs, map(_both, jobs), renamed, on_input)
    return ImpactResult(diff, results, findings(diff, results))


def _classes_by_rule(diff: DiffResult) -> dict[str, set[str]]:
    """rule id -> the classes of the changes that reach it (its own, and its constants')."""
    found: dict[str, set[str]] = {}
    for change in diff.changes:
        subjects = [change.subject] + change.rules
        for subject in subjects:
            if subject.startswith("rule "):
                found.setdefault(subject[len("rule "):], set()).add(change.cls)
    return found


def findings(diff: DiffResult, results: list[InputImpact]) -> list[str]:
    """Where the static classes and the data disagree."""
    classes = _classes_by_rule(diff)
    out = []
    for result in results:
        for rule in result.responsible:
            seen = classes.get(rule, set()) - {NEUTRAL}
            if not seen:
                out.append(f"{result.input}: {result.flip} by rule {rule}, whose changes the "
                           f"diff classed neutral (or found none)")
            elif seen == {LOOSENING if result.flip == "pass→fail" else TIGHTENING}:
                out.append(f"{result.input}: {result.flip} by rule {rule}, whose changes the "
                           f"diff classed {next(iter(seen))}")
    for change in diff.changes:
        reached = [s[len("rule "):] for s in [change.subject] + change.rules
                   if s.startswith("rule ")]
        if change.cls == TIGHTENING and reached and \
                not any(r in res.newly_failing for res in results for r in reached):
            out.append(f"tightening {change.subject} {change.path}".rstrip() +
                       f" ({change.what}) rejects no input given that was accepted before")
    return out


# --------------------------------------------------------------------------- output

IMPACT_FORMATS = ("text", "markdown", "json")


def render_impact(result: ImpactResult, fmt: str) -> str:
    import json

    if fmt == "json":
        return json.dumps(result.as_dict(), indent=2, ensure_ascii=False)
    flips = sum(1 for r in result.inputs if r.flip)
    head = (f"spec impact {result.diff.old} -> {result.diff.new}: {len(result.inputs)} inputs, "
            f"{flips} verdicts flipped, {len(result.findings)} findings")
    return _markdown(result, head) if fmt == "markdown" else _text(result, head)


def _metric(verdict: Verdict) -> str:
    return "-" if verdict.metric is None else f"{verdict.metric:g}"


def _verdict_word(verdict: Verdict) -> str:
    return "pass" if verdict.ok else "fail"


def _text(result: ImpactResult, head: str) -> str:
    lines = [head]
    for r in result.inputs:
        line = (f"  {r.input}: {_verdict_word(r.old)} → {_verdict_word(r.new)}, metric "
                f"{_metric(r.old)} → {_metric(r.new)}")
        if r.flip:
            line += f"  ({r.flip} by {', '.join(r.responsible) or 'no single rule'})"
        lines.append(line)
    for rule, counts in result.per_rule().items():
        lines.append(f"  rule {rule}: " + ", ".join(f"{n} {what}" for what, n in counts.items()
                                                  if n))
    lines.extend(f"  finding: {finding}" for finding in result.findings)
    return "\n".join(lines)


def _markdown(result: ImpactResult, head: str) -> str:
    lines = [f"### {head}", "", "| input | verdict | metric | flipped by |", "|---|---|---|---|"]
    for r in result.inputs:
        lines.append(f"| `{r.input}` | {_verdict_word(r.old)} → {_verdict_word(r.new)} | "
                     f"{_metric(r.old)} → {_metric(r.new)} | {', '.join(r.responsible)} |")
    rules = result.per_rule()
    if rules:
        lines += ["", "| rule | pass→fail | fail→pass | reasons changed |", "|---|---|---|---|"]
        lines += [f"| `{rule}` | {c['pass→fail']} | {c['fail→pass']} | {c['reasons changed']} |"
                  for rule, c in rules.items()]
    if result.findings:
        lines += ["", "**Findings**", ""] + [f"- {finding}" for finding in result.findings]
    return "\n".join(lines)
