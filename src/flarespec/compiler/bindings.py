"""The bindings iterations over the constants make in every run, bounded when a spec compiles.

An iteration over the constants (``over: "constants:$.phases[*]"``) has the same elements
under every parent, and one over such an iteration's element (``over: "phase:$.steps[*]"``)
the same elements under each of its; nested, they multiply. Their product along a chain of
iterations is the least number of bindings every run makes (an iteration over the
evidence counting one element per parent: with none, nothing at all runs). Past the
engine's bound (engine/scopes.py ``MAX_BINDINGS``, which the run enforces for what grows
with the evidence) the spec is refused here, at the iteration's ``over``: two iterations
over a 15,000-element constant linted clean and then ran for hours.
"""

from __future__ import annotations

from typing import Any

from flarespec.engine.scopes import MAX_BINDINGS


def binding_problems(iterations: dict, constants: Any) -> dict[str, str]:
    """Iteration name -> why it makes more than ``MAX_BINDINGS`` bindings in every run, for
    the outermost such iteration of each chain (``iterations``: the compiled ones)."""
    least: dict[str, int] = {}  # the least bindings a run makes
    # for an iteration of static elements: (their values under one binding of the nearest
    # iteration over the evidence, how many times a run makes them)
    static: dict[str, tuple[list, int]] = {}
    problems: dict[str, str] = {}
    for name in _parents_first(iterations):
        iteration = iterations[name]
        parent = iteration.parent if iteration.parent in least else None
        above = least[parent] if parent else 1
        values = _static_values(iteration, constants, static.get(parent) if parent else None)
        if values is None:
            least[name] = above
            continue
        repeats = static[parent][1] if parent in static and iteration.over.target == parent \
            else above
        static[name] = (values, repeats)
        least[name] = repeats * len(values)
        if least[name] > MAX_BINDINGS and above <= MAX_BINDINGS:
            problems[name] = (
                f"iteration {name!r} makes at least {least[name]:,} bindings in every run "
                f"({len(values):,} elements" + (f" under each of {repeats:,} bindings"
                                                if repeats > 1 else "")
                + f"): more than the {MAX_BINDINGS:,} the engine runs (engine/scopes.py "
                f"MAX_BINDINGS); iterate over fewer constants or nest fewer iterations")
    return problems


def _parents_first(iterations: dict) -> list[str]:
    return sorted(iterations, key=lambda name: len(iterations[name].chain))


def _static_values(iteration, constants, parent_static) -> list | None:
    """The values of the iteration's elements when they do not depend on the evidence: over
    the constants, or over the parent's element when the parent's are static (all of
    them, concatenated: at most one past the bound); None otherwise."""
    over = iteration.over
    if over.metadata or over.pinned or over.placeholders:
        return None
    if over.target == "constants":
        sources = [constants]
    elif parent_static is not None and over.target == iteration.parent:
        sources = parent_static[0]
    else:
        return None
    values: list = []
    try:
        for source in sources:
            if over.jsonpath is None and over.pointer is None:
                return None  # a JSONPath filled per binding: counted at run time
            values.extend(over.jsonpath.values(source) if over.jsonpath is not None
                          else over.pointer.values(source, None))
            if len(values) > MAX_BINDINGS:
                break
    except Exception:  # noqa: BLE001 - an unusual selection is judged at run time
        return None
    return values
