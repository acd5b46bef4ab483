"""A second evaluation in one process (``measure``'s pair with ``FLARESPEC_JOBS=1``,
``validate-pair``) runs the code the first generated: every generated text is the same
again, so engine/readers.py compiles none of it twice."""

from __future__ import annotations

from flarespec.adapter.select import bundled_specs
from flarespec.engine import readers
from flarespec.engine.evaluate import evaluate
from flarespec.fixtures.writers import write_packet


def test_a_second_evaluation_compiles_nothing(tmp_path):
    spec = next(s for s in bundled_specs() if s.id == "flare/bce032c0")
    first = write_packet(tmp_path / "first", spec, repetitions=1)
    second = write_packet(tmp_path / "second", spec, repetitions=1)
    readers._code.cache_clear()
    assert evaluate(spec, first).ok
    compiled = readers._code.cache_info()
    assert compiled.misses > 0 and compiled.currsize == compiled.misses
    assert evaluate(spec, second).ok
    again = readers._code.cache_info()
    assert again.misses == compiled.misses  # the same texts: no compile
    assert again.hits > compiled.hits
