"""The engine, loaders, spec machinery, adapter, command line and generic fixture machinery
contain no Flare names, paths or numbers: Flare lives in specs/, hooks/ and flare/ only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "flarespec"
GENERIC_ROOMS = ("engine", "loaders", "spec", "adapter", "cli", "fixtures", "output")
FLARE_WORDS = re.compile(
    r"(?i)\bflare(?!spec)|ttft|sm12[01]|bce032c0|\[DONE\]|observation|measurements|"
    r"prefill|corpus|snapshot|kv_page|\b4096\b|\b512\b|\b65536\b")


@pytest.mark.parametrize("room", GENERIC_ROOMS)
def test_generic_room_names_nothing_of_flare(room):
    offending = []
    for path in sorted((SOURCE / room).rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if FLARE_WORDS.search(line):
                offending.append(f"{path.relative_to(SOURCE)}:{number}: {line.strip()}")
    assert offending == []


def test_flare_writer_lives_outside_the_generic_rooms():
    """The writer is found by name through the flarespec.writers entry point, never imported
    by a generic room."""
    assert not (SOURCE / "fixtures" / "writer.py").exists()
    offending = [f"{path.relative_to(SOURCE)}:{number}"
                 for room in GENERIC_ROOMS for path in sorted((SOURCE / room).rglob("*.py"))
                 for number, line in enumerate(path.read_text().splitlines(), start=1)
                 if re.search(r"(from|import) flarespec\.(flare|hooks)\b", line)]
    assert offending == []
