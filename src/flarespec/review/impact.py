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

from flarespec.output.model import ERROR, NONE, PASS, WARNING, Finding, Report, Rule, \
    Section, Table
from flarespec.engine.directions import LOOSENING, NEUTRAL, TIGHTENING
from flarespec.review.changes import DiffResult
from flarespec.review.diff import diff_specs


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
    from flarespec.compiler.open import open_compiled

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


# --------------------------------------------------------------------------- report

FLIP, FINDING = "impact.flip", "impact.finding"
FAIL_ON = ("flip", "finding", "any")
RULES = {
    FLIP: Rule(FLIP, "An input whose verdict the spec change flips",
               "Both specs ran over the input and disagree; the rules responsible are named "
               "(docs/spec-review.md, spec impact)."),
    FINDING: Rule(FINDING, "The diff's classes and the data disagree",
                  "A neutral change that flips a verdict, a change whose direction a flip "
                  "contradicts, or a tightening that rejects nothing it accepted before "
                  "(docs/spec-review.md, spec impact)."),
}


def _metric(verdict: Verdict) -> str:
    return "-" if verdict.metric is None else f"{verdict.metric:g}"


def _verdict_word(verdict: Verdict) -> str:
    return "pass" if verdict.ok else "fail"


def _input_finding(r: InputImpact, fails: bool) -> Finding:
    said = (f"{_verdict_word(r.old)} → {_verdict_word(r.new)}, metric {_metric(r.old)} → "
            f"{_metric(r.new)}")
    if not r.flip:
        return Finding(FLIP, f"{r.input}: {said}", NONE, PASS, file=r.input,
                       title=f"{r.input}: no flip")
    by = ", ".join(r.responsible) or "no single rule"
    return Finding(FLIP, f"{r.input}: {said} ({r.flip} by {by})", ERROR if fails else WARNING,
                   file=r.input, tag=r.flip, title=f"{r.input}: {r.flip}",
                   key=(FLIP, r.input, r.flip, tuple(r.responsible)))


def impact_report(result: ImpactResult, fail_on: str | None = None,
                  anchor: str | None = None) -> Report:
    """Each flipped input a finding at its entry file, each static/data disagreement a
    finding at ``anchor`` (the new spec file); the per-input and per-rule tables for
    people; ``fail_on`` (flip, finding, any) makes those findings errors and the report
    not ok."""
    flips = [r for r in result.inputs if r.flip]
    fail_flips, fail_findings = fail_on in ("flip", "any"), fail_on in ("finding", "any")
    inputs = Table(("input", "verdict", "metric", "flipped by"),
                   [(r.input, f"{_verdict_word(r.old)} → {_verdict_word(r.new)}",
                     f"{_metric(r.old)} → {_metric(r.new)}", ", ".join(r.responsible))
                    for r in result.inputs])
    rules = Table(("rule", "pass→fail", "fail→pass", "reasons changed"),
                  [(rule, *(str(c[k]) for k in ("pass→fail", "fail→pass", "reasons changed")))
                   for rule, c in result.per_rule().items()])
    found = [Finding(FINDING, text, ERROR if fail_findings else WARNING, tag="finding",
                     key=(FINDING, text)) for text in result.findings]
    sections = [Section("inputs", [_input_finding(r, fail_flips) for r in result.inputs],
                        table=inputs)]
    if rules.rows:
        sections.append(Section("rules", table=rules))
    if found:
        sections.append(Section("findings", found))
    title = (f"spec impact {result.diff.old} -> {result.diff.new}: {len(result.inputs)} "
             f"inputs, {len(flips)} verdicts flipped, {len(result.findings)} findings")
    ok = not ((fail_flips and flips) or (fail_findings and result.findings))
    data = {key: value for key, value in result.as_dict().items() if key != "findings"}
    return Report("spec impact", title, ok, sections, rules=dict(RULES), data=data,
                  anchor=anchor)  # the disagreements are the report's impact.finding findings
