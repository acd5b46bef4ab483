"""What keeps a check from running: the engine's internal outcomes, and the rule ids of
its own violations."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # below every engine module (path_templates.py, jsonpath.py import it)
    from flarespec.engine.refs import Ref

INTERNAL_ERROR = "engine.internal-error"
METRIC_UNAVAILABLE = "metric.unavailable"


class Unavailable(Exception):
    """Something this check needs failed to load; that failure is already reported."""


class Unresolvable(ValueError):
    """A placeholder or pinned binding has no value here, or a selection is beyond its
    bound (jsonpath.SelectionTooLarge): a violation, never a silent skip."""


class ArgumentUnresolved(Exception):
    def __init__(self, ref: Ref, found: int):
        super().__init__(ref)
        self.ref, self.found = ref, found


class ArgumentNotSingle(Exception):
    """A pass plan's or element loop's single-valued ``{ref}`` argument found no value or
    several: not known to pass (the reporting path decides)."""


class Ineligible(Exception):
    """This form of plan (or an element loop) cannot express the rule; another form, or the
    reporting path, takes it."""
