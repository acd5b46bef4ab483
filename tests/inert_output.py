"""What issue 23 requires of anything flarespec prints where packet text may appear: no
raw control character (the renderer's own line feed aside), no line a CI runner reads as
a command unless the github renderer wrote it, text encodable as UTF-8 (strictly)."""

from __future__ import annotations

import re

# controls but the line feed, DEL, C1, line/paragraph separators, bidi controls, lone
# surrogates, U+FFFE/U+FFFF: none may reach a terminal or a log raw
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                 "\ud800-\udfff\ufffe\uffff]")
LEGACY_COMMAND = re.compile(r"##[A-Za-z]*\[")  # GitHub's ##[cmd], Azure's ##vso[, TeamCity's
RENDERER_COMMAND = re.compile(r"::(?:error|warning|notice) ")


def check_inert(fmt: str, out: str) -> None:
    """``out`` as printed in format ``fmt`` (``text`` for a summary or a message line)."""
    out.encode("utf-8")
    assert not RAW.search(out), (fmt, RAW.search(out))
    for line in out.split("\n"):
        assert not LEGACY_COMMAND.search(line), (fmt, line)
        if fmt == "github" and line:
            assert RENDERER_COMMAND.match(line), line  # every line is the renderer's command
            # as the runner parses it: the command, then properties split at ","
            properties = line[2:].split("::", 1)[0].partition(" ")[2]
            keys = [item.split("=", 1)[0] for item in properties.split(",") if item]
            assert set(keys) <= {"file", "line", "col", "title"}, line
            assert len(keys) == len(set(keys)), line
        else:
            assert not line.lstrip().startswith(":"), (fmt, line)
