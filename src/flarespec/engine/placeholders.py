"""Placeholders: the one grammar of a ``{…}`` inside a template or a pointer segment.

A placeholder is parsed once, where its template is compiled (engine/paths.py), into what
every reader of it uses (the compiler's checks, the accessors, the fillers, lint, the
fixture writer): nobody splits its text again. The forms:

==========================  ====================================================
``{target:selector}``        a reference (engine/refs.py) selecting exactly one place
``{name}``                   the bound element of iteration ``name`` (in a rule's
                             ``message``, also a message field: ``{detail}``, ``{actual}``…)
``{name.m1.m2}``             a member of it (a member of ASCII digits indexes a list)
``{name@index}``             the element's position in its iteration
``{name@label}``             the element's label
==========================  ====================================================

Anything else is refused when the template is compiled (a spec error at load, lint's
file:line:column): an empty placeholder, a name that is not one (``{0}``), an empty member
(``{a..b}``, ``{a.}``), an unknown ``@meta`` (``{a@idx}``), and a member with a meta
(``{a.b@index}``): the meta reads the element, not a member, so the member would be
ignored silently.
"""

from __future__ import annotations

import re

from flarespec.engine.jsonpath import PathSyntaxError

# what ``{name@meta}`` (and a reference ``name:@meta``) reads of an iteration's element
BINDING_METADATA = ("index", "label")

FORMS = ("{name}", "{name.member}", *(f"{{name@{meta}}}" for meta in BINDING_METADATA),
         "{target:selector}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class UnknownMetadata(PathSyntaxError):
    """``{name@meta}`` with a meta no element has; ``meta`` is what was written."""

    def __init__(self, message: str, meta: str):
        super().__init__(message)
        self.meta = meta


class Placeholder(str):
    """A placeholder's inner text (stripped), parsed. It is its text (so a filler keyed by
    the text, a message showing it, and a comparison with its spelling need nothing
    more), with its parts:

    * ``reference``: True for ``{target:selector}`` (its text is the reference), and then
      ``name`` is None;
    * ``name``: the iteration (or message field) read;
    * ``members``: the member path below it (``()`` for none);
    * ``meta``: ``"index"``, ``"label"`` or None."""

    name: str | None
    members: tuple[str, ...]
    meta: str | None

    @property
    def text(self) -> str:
        return str.__str__(self)

    @property
    def reference(self) -> bool:
        return self.name is None


def parse_placeholder(inner: str) -> Placeholder:
    """The placeholder whose braces hold ``inner``; PathSyntaxError (UnknownMetadata for
    an unknown ``@meta``) naming the forms that exist when it is none of them."""
    text = inner.strip()
    placeholder = Placeholder(text)
    if ":" in text:  # a reference: its selector is compiled by engine/refs.py
        placeholder.name, placeholder.members, placeholder.meta = None, (), None
        return placeholder
    head, at, meta = text.partition("@")
    name, *members = head.split(".")
    shown = "{" + text + "}"
    if not _NAME.fullmatch(name):
        _refuse(shown, f"{name!r} is not a name" if name else "it names nothing")
    if "" in members:
        _refuse(shown, "a member name is empty")
    if at:
        if meta not in BINDING_METADATA:
            raise UnknownMetadata(f"placeholder {shown}: an iteration has no @{meta}; known: "
                                  f"{', '.join('@' + m for m in BINDING_METADATA)}", meta)
        if members:
            _refuse(shown, f"@{meta} reads the element of {name!r}, not a member of it, so "
                    f"the member would be ignored; write {{{name}@{meta}}} or "
                    f"{{{'.'.join([name, *members])}}}")
    placeholder.name, placeholder.members, placeholder.meta = name, tuple(members), meta or None
    return placeholder


def _refuse(shown: str, why: str):
    raise PathSyntaxError(f"placeholder {shown}: {why}; the forms are {', '.join(FORMS)}")
