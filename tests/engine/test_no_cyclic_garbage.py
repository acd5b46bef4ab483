"""A finished evaluation leaves no reference cycle behind: once dropped, it and its
documents are freed by reference counting, not left (millions of objects, after a large
packet) to the cyclic collector's next pass over everything a run allocated while the
collector was paused."""

from __future__ import annotations

import gc

from document_files import compile_text
from test_element_plans_held import SPEC as HELD_SPEC
from test_element_plans_held import packet as held_packet
from test_pass_plans import SPEC as PLANS_SPEC
from test_pass_plans import packet as plans_packet

from flarespec.engine.evaluate import Evaluation

ENGINE_TYPES = {"Evaluation", "Accessor", "Element", "_Cursor", "Loaded", "Binding", "Passes", "Group",
                "Reporter", "Sink", "DocumentStore", "References", "Bindings"}


def _garbage_after(spec, entry) -> list[str]:
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        Evaluation(spec, entry).run()
        gc.collect()
        return sorted({type(o).__name__ for o in gc.garbage} & ENGINE_TYPES)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_a_run_with_element_and_scope_plans_leaves_no_cycle(tmp_path):
    spec = compile_text(tmp_path / "spec", PLANS_SPEC)
    assert _garbage_after(spec, plans_packet(tmp_path / "p")) == []


def test_a_run_with_held_reads_and_member_placeholders_leaves_no_cycle(tmp_path):
    spec = compile_text(tmp_path / "spec", HELD_SPEC)
    assert _garbage_after(spec, held_packet(tmp_path / "p")) == []


def test_a_run_with_violations_leaves_no_cycle(tmp_path):
    spec = compile_text(tmp_path / "spec", HELD_SPEC)
    entry = held_packet(tmp_path / "p", lambda docs: docs["tables/a.json"].update(limit=1))
    assert _garbage_after(spec, entry) == []
