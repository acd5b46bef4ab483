"""Issue 23, item 10: a long literal path compiled into generated Python source.

A 471 KiB spec (under the 512 KiB limit) whose one path had 160k ``[0]`` segments cost
15-19 s and 2.5 GB in ``validate-pair`` (50k segments: 5 s, 796 MB): the fixed reader
(engine/readers.py) wrote three lines of source per step and compiled them. A query (and a
pointer) now has at most ``MAX_SEGMENTS`` segments, refused at spec load as
``spec.path-syntax`` at the path's file:line:column, its message repeating only the ends of
the path; and the code generator declines beyond ``MAX_GENERATED_STEPS`` steps whatever
its caller (a fixed reader then walks the steps, an element loop is not made).
"""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner
from hostile import run_argv_bounded, run_bounded

from flarespec.cli import main
from flarespec.engine.jsonpath import MAX_SEGMENTS, CompiledJsonPath, PathSyntaxError
from flarespec.engine.paths import compile_pointer
from flarespec.engine.readers import MAX_GENERATED_STEPS, fixed_reader, walk_steps
from flarespec.fixtures.writers import write_packet

SECONDS_AT_MOST = 5.0  # the hostile-spec tests' bounds (test_hostile_specs.py)
RSS_AT_MOST = 300 << 20
CODE = "spec.path-syntax"

CHILD = """\
flarespec: 1
id: hostile/long-path
title: A spec with one very long literal path
extends: flare/bce032c0
rules:
  - id: hostile.long
    description: A literal path of very many segments.
    given: "{given}"
    optional: true
    assert: {{absent: true}}
"""
GIVEN = {  # one segment more than allowed, in each form a selector takes
    "jsonpath": "packet:$" + "[0]" * (MAX_SEGMENTS + 1),
    "pointer": "packet:" + "/0" * (MAX_SEGMENTS + 1),
    "filter-query": "packet:$[?@" + ".a" * (MAX_SEGMENTS + 1) + "]",
}


def child_spec(tmp_path, given: str):
    spec = tmp_path / "long.yaml"
    spec.write_text(CHILD.format(given=given))
    return spec


@pytest.mark.parametrize("form", GIVEN)
def test_a_path_of_too_many_segments_is_refused_at_its_place(tmp_path, form):
    spec = child_spec(tmp_path, GIVEN[form])
    result = CliRunner().invoke(main, ["spec", "lint", str(spec)], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    [line] = [line for line in result.output.splitlines() if line.endswith(f"[{CODE}]")]
    assert line.startswith(f"{spec.resolve()}:8:5: "), line
    assert f"at most {MAX_SEGMENTS} segments" in line
    assert len(line) < 400, line  # the path's ends, not its whole text


@pytest.mark.parametrize("make", [
    lambda count: CompiledJsonPath("$" + "[0]" * count),
    lambda count: CompiledJsonPath("$" + ".a" * (count - 1) + "..b"),
    lambda count: CompiledJsonPath("$[?@" + "[0]" * count + "]"),
    lambda count: compile_pointer("/x" * count),
])
def test_the_bound_is_exactly_max_segments(make):
    make(MAX_SEGMENTS)
    with pytest.raises(PathSyntaxError, match=f"at most {MAX_SEGMENTS} segments"):
        make(MAX_SEGMENTS + 1)


def test_validate_pair_with_a_50k_segment_path_ends_quickly_with_a_spec_error(tmp_path,
                                                                               flare_spec):
    """The issue's reproducer (50k segments: 5 s and 796 MB before), through the command
    line, bounded as the hostile-spec tests are."""
    entry = write_packet(tmp_path / "p", flare_spec)
    spec = child_spec(tmp_path, "packet:$" + "[0]" * 50_000)
    output = tmp_path / "r.json"
    run = run_bounded(["validate-pair", "--baseline", str(entry), "--candidate", str(entry),
                       "--output", str(output), "--spec", str(spec), "--quiet"])
    assert run.exit_code == 2, run
    assert run.wall_s < SECONDS_AT_MOST and run.max_rss_bytes < RSS_AT_MOST, run
    assert "Traceback" not in run.stderr
    [violation] = json.loads(output.read_text())["violations"]
    assert violation["rule"] == "spec.invalid"
    assert violation["message"].startswith(f"{spec.resolve()}:8:5: ")
    assert violation["message"].endswith(f"[{CODE}]")
    assert f"at most {MAX_SEGMENTS} segments" in violation["message"]


def test_the_code_generator_declines_a_long_path_whatever_its_caller():
    """Defence in depth: a fixed reader of 50k steps asked for directly (no spec, no parser)
    walks them instead of compiling 150k lines of source (5 s and 800 MB before)."""
    script = ("from flarespec.engine.readers import fixed_reader\n"
              "deep = 'x'\n"
              "for _ in range(50_000):\n"
              "    deep = [deep]\n"
              "print(fixed_reader(((None, 0),) * 50_000)(deep))\n")
    run = run_argv_bounded([sys.executable, "-c", script])
    assert run.exit_code == 0, run
    assert run.stdout == "['x']\n"
    assert run.wall_s < SECONDS_AT_MOST and run.max_rss_bytes < RSS_AT_MOST, run


@pytest.mark.parametrize("document", [
    {"a": [{"b": 1}]}, {"a": {"0": {"b": 2}}}, [[{"b": 3}]], {"a": [{"c": 1}]}, {"a": 5}, None])
@pytest.mark.parametrize("extra", [0, MAX_GENERATED_STEPS])
def test_walked_steps_read_what_generated_steps_read(document, extra):
    """``walk_steps`` (beyond the bound) is ``step_lines`` (within it): a name reads only
    an object's member, an index only a list's element, a pointer's segment either."""
    padding = ((None, 0),) * extra
    for steps in [(("a", None), (None, 0), ("b", None)), (("a", 0), ("0", 0), ("b", None)),
                  ((None, 0), (None, -1), ("b", None)), (("a", None), (None, 1))]:
        wrapped = document
        for _ in range(extra):
            wrapped = [wrapped]
        expected = fixed_reader(steps)(document)
        assert walk_steps(steps, document) == expected
        assert fixed_reader(padding + steps)(wrapped) == expected
