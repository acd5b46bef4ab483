"""The hook registry: entry-point discovery, names only (never module paths), check and metric
hooks through the engine. The hooks here are toy hooks in a module written by the test."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sys
import textwrap
import uuid

import pytest

from flarespec.engine import hooks
from flarespec.engine.evaluate import evaluate
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

TOY_HOOKS = '''
from flarespec.engine.hooks import Failure, MetricResult, check_hook, metric_hook

CALLS = []


@check_hook("toy.even")
def even(ctx, args):
    """Every listed number is even."""
    CALLS.append(args)
    for index, number in enumerate(args["numbers"]):
        if number % 2:
            yield Failure(f"{number} is odd", "even", number,
                          location=f"$.numbers[{index}]", file=args.get("file"))


@check_hook("toy.even_in")
def even_in(ctx, args):
    """Every listed number is even; a failure says which argument the number came from."""
    for index, number in enumerate(args["numbers"]):
        if number % 2:
            yield Failure(f"{number} is odd", "even", number, location=f"$[{index}]",
                          source="numbers")


@check_hook("toy.broken")
def broken(ctx, args):
    """A hook with a bug."""
    raise KeyError("oops")
    yield


@metric_hook("toy.total")
def total(ctx, samples, args):
    """The sum of every sample, times a factor."""
    values = [value for _, found in samples for value in found]
    return MetricResult(sum(values) * args.get("factor", 1), values, {"samples": len(samples)})


@metric_hook("toy.nan")
def nan(ctx, samples, args):
    """Not a number."""
    return MetricResult(float("nan"), [], {})
'''

HEAD = """\
flarespec: 1
id: toy/case
title: Toy case
documents:
  doc: {loader: json, entry: true, rule: toy.doc}
iterations:
  shelf: {over: "doc:$.shelves[*]"}
"""


@pytest.fixture
def toy_hooks(tmp_path, monkeypatch):
    """A toy hook module, registered through a (fake) flarespec.hooks entry point."""
    name = f"toy_hooks_{uuid.uuid4().hex}"
    module_dir = tmp_path / "modules"
    module_dir.mkdir()
    (module_dir / f"{name}.py").write_text(TOY_HOOKS)
    monkeypatch.syspath_prepend(str(module_dir))
    real_entry_points = importlib.metadata.entry_points
    toy_entry = importlib.metadata.EntryPoint(name="toy", value=name, group="flarespec.hooks")

    def entry_points(**selection):
        found = list(real_entry_points(**selection))
        return found + [toy_entry] if selection.get("group") == "flarespec.hooks" else found
    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(hooks, "_discovered", False)
    saved = dict(hooks.HOOKS)
    yield name
    hooks.HOOKS.clear()
    hooks.HOOKS.update(saved)
    sys.modules.pop(name, None)
    hooks.discover()


def compile_case(tmp_path, text: str):
    directory = tmp_path / "spec"
    directory.mkdir(exist_ok=True)
    (directory / "case.yaml").write_text(HEAD + textwrap.dedent(text))
    library = SpecLibrary([directory])
    return compile_spec(resolve(library.get("toy/case"), library))


def run(tmp_path, spec, doc):
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    return evaluate(spec, tmp_path / "doc.json")


# --------------------------------------------------------------------------- discovery

def test_installed_entry_points_are_discovered():
    entries = list(importlib.metadata.entry_points(group="flarespec.hooks"))
    assert entries, "the package declares at least one flarespec.hooks entry point"
    registry = hooks.discover()
    for entry in entries:
        assert entry.value in sys.modules
        assert any(hook.module == entry.value for hook in registry.values())
    assert all(hook.role in ("check", "metric") for hook in registry.values())


def test_a_hook_module_is_found_through_its_entry_point(toy_hooks):
    assert toy_hooks not in sys.modules
    registry = hooks.discover()
    assert toy_hooks in sys.modules
    assert {name: (hook.role, hook.module, hook.doc) for name, hook in registry.items()
            if name.startswith("toy.")} == {
        "toy.even": ("check", toy_hooks, "Every listed number is even."),
        "toy.even_in": ("check", toy_hooks, "Every listed number is even; a failure says "
                                            "which argument the number came from."),
        "toy.broken": ("check", toy_hooks, "A hook with a bug."),
        "toy.total": ("metric", toy_hooks, "The sum of every sample, times a factor."),
        "toy.nan": ("metric", toy_hooks, "Not a number."),
    }


def test_discovery_loads_entry_points_once(toy_hooks, monkeypatch):
    calls = []
    entry_points = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: calls.append(kw) or entry_points(**kw))
    hooks.discover()
    hooks.discover()
    assert calls == [{"group": "flarespec.hooks"}]


def test_module_digest_binds_the_hook_source(toy_hooks, tmp_path):
    hooks.discover()
    expected = hashlib.sha256((tmp_path / "modules" / f"{toy_hooks}.py").read_bytes()).hexdigest()
    assert hooks.module_digest(toy_hooks) == expected


# --------------------------------------------------------------------------- names, not paths

CHECK_RULE = """\
rules:
  - id: toy.numbers.even
    description: The numbers are even.
    hook: {hook}
    args:
      numbers: {{ref: "doc:$.numbers"}}
      file: doc.json
"""  # the hook key is on line 11, column 5


def test_unregistered_hook_is_a_compile_error(toy_hooks, tmp_path):
    with pytest.raises(SpecInvalid) as caught:
        compile_case(tmp_path, CHECK_RULE.format(hook="toy.odd"))
    [issue] = caught.value.issues
    assert (issue.mark.file, issue.mark.line, issue.mark.column, issue.code) == (
        str(tmp_path / "spec" / "case.yaml"), 11, 5, "spec.unknown-hook")
    assert issue.message.startswith("unknown check hook 'toy.odd'; registered: ")
    assert "toy.broken, " in issue.message and "toy.even" in issue.message
    assert "toy.total" not in issue.message  # a metric hook is not a check hook


@pytest.mark.parametrize("spelling", ["{module}.even", "{module}:even", "'{module}'"])
def test_a_spec_cannot_name_a_module_path(toy_hooks, tmp_path, spelling):
    victim = f"toy_victim_{uuid.uuid4().hex}"
    (tmp_path / "modules" / f"{victim}.py").write_text(
        TOY_HOOKS.replace('"toy.', '"victim.'))
    with pytest.raises(SpecInvalid) as caught:
        compile_case(tmp_path, CHECK_RULE.format(hook=spelling.format(module=victim)))
    assert [issue.code for issue in caught.value.issues] == ["spec.unknown-hook"]
    assert victim not in sys.modules  # never imported by name
    assert not any(name.startswith("victim.") for name in hooks.HOOKS)


def test_metric_and_check_roles_are_not_interchangeable(toy_hooks, tmp_path):
    with pytest.raises(SpecInvalid) as caught:
        compile_case(tmp_path, CHECK_RULE.format(hook="toy.total") + textwrap.dedent("""\
            metric:
              key: toy.metric
              unit: items
              hook: toy.even
              given: "doc:$.numbers[*]"
        """))
    assert [(i.mark.line, i.mark.column, i.code, i.message) for i in caught.value.issues] == [
        (11, 5, "spec.unknown-hook", caught.value.issues[0].message),
        (18, 3, "spec.unknown-hook", caught.value.issues[1].message)]
    assert caught.value.issues[1].message.startswith("unknown metric hook 'toy.even'")
    assert caught.value.issues[0].message.startswith("unknown check hook 'toy.total'")


# --------------------------------------------------------------------------- hooks in the engine

def test_check_hook_failures_become_violations(toy_hooks, tmp_path):
    spec = compile_case(tmp_path, CHECK_RULE.format(hook="toy.even"))
    assert spec.hook_modules == {toy_hooks}
    assert run(tmp_path, spec, {"numbers": [2, 4]}).violations == []
    report = run(tmp_path, spec, {"numbers": [2, 3, 5]})
    assert [(v.rule, v.file, v.location, v.message, v.expected, v.actual)
            for v in report.violations] == [
        ("toy.numbers.even", "doc.json", "$.numbers[1]", "3 is odd", "even", 3),
        ("toy.numbers.even", "doc.json", "$.numbers[2]", "5 is odd", "even", 5)]
    # the hook received its arguments with every {ref} resolved
    assert sys.modules[toy_hooks].CALLS[-1] == {"numbers": [2, 3, 5], "file": "doc.json"}


def test_check_hook_per_binding_with_a_custom_message(toy_hooks, tmp_path):
    spec = compile_case(tmp_path, """\
        rules:
          - id: toy.shelf.even
            description: A shelf's numbers are even.
            for_each: shelf
            severity: warning
            hook: toy.even
            args: {numbers: {ref: "shelf:$.numbers"}}
            message: "shelf {shelf.name}: {detail}"
    """)
    report = run(tmp_path, spec, {"shelves": [{"name": "s0", "numbers": [1]},
                                              {"name": "s1", "numbers": [2]}]})
    assert report.violations == []
    assert [(v.rule, v.severity, v.file, v.location, v.message, v.binding)
            for v in report.warnings] == [
        ("toy.shelf.even", "warning", None, "$.numbers[0]", "shelf s0: 1 is odd", "s0")]


def test_a_hook_failure_names_the_file_its_source_argument_was_read_from(toy_hooks, tmp_path):
    """`Failure(source=...)`: the failing value lies inside that argument, so the violation
    names the file the argument was read from and the place inside it (issue 6: a wrong
    counter named no snapshot file). Without a source, file and location stay the hook's."""
    spec = compile_case(tmp_path, """\
        rules:
          - id: toy.shelf.even
            description: A shelf's numbers are even.
            for_each: shelf
            hook: toy.even_in
            args: {numbers: {ref: "doc:/shelves/{shelf@index}/numbers"}}
          - id: toy.literal.even
            description: Literal numbers are even.
            hook: toy.even_in
            args: {numbers: [1]}
    """)
    report = run(tmp_path, spec, {"shelves": [{"name": "s0", "numbers": [2]},
                                              {"name": "s1", "numbers": [2, 3]}]})
    assert [(v.rule, v.file, v.location, v.message, v.actual) for v in report.violations] == [
        ("toy.shelf.even", "doc.json", "$.shelves[1].numbers[1]", "3 is odd", 3),
        ("toy.literal.even", None, "$[0]", "1 is odd", 1)]


def test_a_hook_bug_rejects_as_an_internal_error(toy_hooks, tmp_path):
    spec = compile_case(tmp_path, CHECK_RULE.format(hook="toy.broken"))
    report = run(tmp_path, spec, {"numbers": []})
    assert [(v.rule, v.severity, v.message) for v in report.violations] == [
        ("engine.internal-error", "error",
         "internal error in rule toy.numbers.even: KeyError: 'oops'")]


METRIC = """\
rules:
  - id: toy.numbers.small
    description: The numbers are small.
    given: "doc:$.shelves[*].numbers[*]"
    assert: {{range: {{max: 9}}}}
metric:
  key: toy.total
  unit: items
  contract: {{unit: items}}
  for_each: shelf
  when: {{given: "shelf:$.counted", equals: true}}
  given: "shelf:$.numbers[*]"
  label: "{{shelf.name}}"
  hook: {hook}
  args: {{factor: 10}}
"""
SHELVES = {"shelves": [{"name": "s0", "counted": True, "numbers": [1, 2]},
                       {"name": "s1", "counted": False, "numbers": [4]},
                       {"name": "s2", "counted": True, "numbers": [3]}]}


def test_metric_from_a_clean_report(toy_hooks, tmp_path):
    spec = compile_case(tmp_path, METRIC.format(hook="toy.total"))
    report = run(tmp_path, spec, SHELVES)
    assert report.violations == []
    assert report.metric == {"key": "toy.total", "unit": "items", "value": 60,
                             "contract": {"unit": "items"}, "samples": [1, 2, 3],
                             "details": {"samples": 2}}


def test_no_metric_from_a_rejected_report(toy_hooks, tmp_path):
    spec = compile_case(tmp_path, METRIC.format(hook="toy.total"))
    shelves = json.loads(json.dumps(SHELVES))
    shelves["shelves"][1]["numbers"] = [40]
    report = run(tmp_path, spec, shelves)
    assert [v.rule for v in report.violations] == ["toy.numbers.small"]
    assert report.metric is None


def test_a_non_finite_metric_is_unavailable(toy_hooks, tmp_path):
    spec = compile_case(tmp_path, METRIC.format(hook="toy.nan"))
    report = run(tmp_path, spec, SHELVES)
    assert [(v.rule, v.message) for v in report.violations] == [
        ("metric.unavailable", "metric toy.total not computed: the metric hook returned nan, "
                               "not a finite number")]
    assert report.metric is None


def test_a_metric_with_no_samples_is_unavailable(toy_hooks, tmp_path):
    spec = compile_case(tmp_path, METRIC.format(hook="toy.total"))
    shelves = {"shelves": [{"name": "s0", "counted": False, "numbers": [1]}]}
    report = run(tmp_path, spec, shelves)
    assert [(v.rule, v.message) for v in report.violations] == [
        ("metric.unavailable", "metric toy.total not computed: no samples were selected")]


def test_the_hook_examples_of_the_language_reference(toy_hooks, tmp_path):
    """docs/spec-language.md's hook rule and metric examples, run with the toy hooks."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "spec-language.md").read_text()
    blocks = re.findall(r"^```yaml\n(.*?)^```$", doc, re.S | re.M)
    [rule] = [b for b in blocks if "hook: toy.even" in b]
    [metric] = [b for b in blocks if b.startswith("metric:") and "hook: toy.total" in b]
    python = re.findall(r"^```python\n(.*?)^```$", doc, re.S | re.M)
    assert any('@check_hook("toy.even")' in b and '@metric_hook("toy.total")' in b
               for b in python)
    spec = compile_case(tmp_path, rule + metric)
    doc_value = {"numbers": [2, 4], **SHELVES}
    report = run(tmp_path, spec, doc_value)
    assert report.violations == []
    assert (report.metric["key"], report.metric["value"]) == ("toy.total", 60)
    report = run(tmp_path, spec, {**doc_value, "numbers": [3]})
    assert [(v.rule, v.location, v.message) for v in report.violations] == [
        ("toy.numbers.even", "$.numbers[0]", "3 is odd")]
    assert report.metric is None


def test_a_check_hook_runs_in_its_iterations_pass(toy_hooks, tmp_path, monkeypatch):
    """A check hook runs in the pass of its iteration: its verdict (``Hook.holds``) on the
    arguments read there; a binding where it fails, or raises, takes the reporting path,
    which lists the failures (or the internal error). The reports are the reporting path's
    alone, and a passing binding never reaches it."""
    from flarespec.engine import evaluate as evaluate_module
    from flarespec.engine.evaluate import Evaluation

    spec = compile_case(tmp_path, """\
        rules:
          - id: toy.shelf.named
            description: A shelf has a name.
            for_each: shelf
            given: "shelf:$.name"
            assert: {type: string}
          - id: toy.shelf.even
            description: A shelf's numbers are even.
            for_each: shelf
            hook: toy.even_in
            args: {numbers: {ref: "doc:/shelves/{shelf@index}/numbers"}}
    """)
    (tmp_path / "doc.json").write_text(json.dumps({"shelves": [
        {"name": "s0", "numbers": [2]}, {"name": "s1", "numbers": [2, 3]},
        {"name": "s2", "numbers": ["x"]}, {"name": "s3"}]}))
    entry = tmp_path / "doc.json"
    evaluation = Evaluation(spec, entry)
    groups = evaluation._passes.groups(range(len(spec.rules)))
    assert set(groups) == {0, 1} and not groups[1].element  # the hook: the scope form
    reached = []
    original = evaluate_module.Evaluation._apply_once
    monkeypatch.setattr(evaluate_module.Evaluation, "_apply_once", lambda self, rule, scope: (
        reached.append((rule.id, scope["shelf"].index)) or original(self, rule, scope)))

    def described(report):
        return [(v.rule, v.file, v.location, v.message, v.binding) for v in report.violations]
    with_passes = described(Evaluation(spec, entry).run())
    assert reached == [("toy.shelf.even", 1), ("toy.shelf.even", 2), ("toy.shelf.even", 3)]
    assert with_passes == described(Evaluation(spec, entry, pass_checks=False).run())
    assert [(rule, location, binding) for rule, _, location, _, binding in with_passes] == [
        ("toy.shelf.even", "$.shelves[1].numbers[1]", "s1"),  # fails
        ("toy.shelf.even", None, "s2"),  # raises (cannot evaluate)
        ("toy.shelf.even", "doc:/shelves/3/numbers", "s3")]  # its argument is not there
