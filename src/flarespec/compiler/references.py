"""References written in a resolved spec's text: ``group:$.kind``, ``{constants:/colours/0}``.

A reference (engine/refs.py compiles it) names a target (a document, a binding,
``constants``) and a path into it. Two readers want the references a text writes without
compiling it: ``spec diff`` (which constants a rule reads at run time, review/diff.py) and
lint's placeholder check (which fields of a binding the spec reads elsewhere,
authoring/placeholders.py). Both find them here, with one pattern.
"""

from __future__ import annotations

import re

# A reference's target and first member wherever one stands in a text: ``group:$.kind``,
# ``shelf:$['name']``, ``{constants:/colours/...}`` (a target is a whole name: ``xgroup:`` is
# not ``group:``).
_REFERENCE = re.compile(
    r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*):(?:\$\.|\$\[['\"]|/)([A-Za-z0-9_-]+)")


def referenced_members(text: str) -> list[tuple[str, str]]:
    """(target, first member) of every reference written in ``text``: what a spec reads at
    run time."""
    return _REFERENCE.findall(text)
