"""The JSONPath Compliance Test Suite (RFC 9535), every case, as data.

``tests/data/jsonpath-compliance/cts.json`` is the suite's ``cts.json`` at commit 7be7c1f
(BSD-2, see the README and LICENSE beside it). For each case:

* ``invalid_selector``: compiling the selector is refused (PathSyntaxError);
* a valid selector: flarespec's values equal the RFC answer (``result``, or one of
  ``results`` where member order is free), ``find`` gives the same values in the same order,
  and its locations are the RFC normalized paths (``result_paths``) written in flarespec's
  location format (``$['a'][0]`` is ``$.a[0]``);
* unless the selector uses a construct flarespec refuses on purpose (``REFUSED``, with the
  reason): then compiling is refused with a message naming that construct. The figures are
  pinned (``test_the_figures``), so a new deviation, or a refusal of something else, fails.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from flarespec.engine.jsonpath import CompiledJsonPath, PathSyntaxError
from flarespec.loaders.locations import child_location

SUITE = Path(__file__).resolve().parents[1] / "data" / "jsonpath-compliance" / "cts.json"
CASES = json.loads(SUITE.read_text(encoding="utf-8"))["tests"]

# The constructs of RFC 9535 that flarespec's JSONPath refuses, and why (reviewed).
REFUSED = {
    "match()": "runs an I-Regexp on the evidence; flarespec never runs a regex from a path "
               "(issue 13): select the values and check them with the RE2 `regex` assertion",
    "search()": "the same as match(): a regex run on the evidence",
}
FIGURES = {"valid and equal": 406, "refused by the subset": 50, "invalid and refused": 247}


def refused_construct(selector: str) -> str | None:
    found = re.search(r"\b(match|search)\(", selector)
    return f"{found.group(1)}()" if found else None


def location(normalized: str) -> str:
    """An RFC normalized path (``$['a'][0]``) in flarespec's location format (``$.a[0]``)."""
    path = CompiledJsonPath(normalized)
    keys = path.steps
    assert keys is not None and all(type(key) in (str, int) for key in keys), normalized
    written = "$"
    for key in keys:
        written = child_location(written, key)
    return written


def canonical(values: list) -> str:
    # JSON text keeps true apart from 1 (Python's True == 1 would not)
    return json.dumps(values, sort_keys=True, ensure_ascii=False)


def outcome(case: dict) -> str:
    if case.get("invalid_selector"):
        with pytest.raises(PathSyntaxError):
            CompiledJsonPath(case["selector"])
        return "invalid and refused"
    construct = refused_construct(case["selector"])
    if construct is not None:
        with pytest.raises(PathSyntaxError) as refusal:
            CompiledJsonPath(case["selector"])
        message = str(refusal.value)
        assert f"function extension {construct} is not supported by flarespec's JSONPath" \
            in message, message
        return "refused by the subset"
    path = CompiledJsonPath(case["selector"])
    document = case["document"]
    values = path.values(document)
    matches = path.find(document)
    assert canonical([match.value for match in matches]) == canonical(values)
    locations = [match.location for match in matches]
    answers = [case["result"]] if "result" in case else case["results"]
    paths = [case.get("result_paths")] if "result" in case else case.get(
        "results_paths", [None] * len(answers))
    for answer, answer_paths in zip(answers, paths):
        if canonical(values) == canonical(answer) and (
                answer_paths is None or locations == [location(p) for p in answer_paths]):
            return "valid and equal"
    pytest.fail(f"{case['selector']}: got {values} at {locations}, RFC 9535: "
                f"{answers} at {paths}")


@pytest.mark.parametrize("case", CASES, ids=[f"{n}:{c['name']}" for n, c in enumerate(CASES)])
def test_case(case):
    outcome(case)


def test_the_figures():
    counts: dict = {}
    for case in CASES:
        result = outcome(case)
        counts[result] = counts.get(result, 0) + 1
    assert counts == FIGURES
    assert len(CASES) == sum(FIGURES.values()) == 703


def test_every_refused_construct_has_a_reason_and_a_case():
    used = {refused_construct(case["selector"]) for case in CASES
            if not case.get("invalid_selector")} - {None}
    assert used == set(REFUSED)
    assert all(len(reason) > 20 for reason in REFUSED.values())


@pytest.mark.parametrize("normalized, written", [
    ("$", "$"), ("$['a']", "$.a"), ("$[0]['b c']", "$[0]['b c']"), ("$['it\\'s']", "$['it\\'s']"),
    ("$['\\u000b']", "$['\x0b']"), ("$['1a']", "$['1a']")])
def test_normalized_paths_are_translated(normalized, written):
    assert location(normalized) == written
