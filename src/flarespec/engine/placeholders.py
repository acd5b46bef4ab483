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
from typing import Any

from flarespec.engine.jsonpath import PathSyntaxError
from flarespec.engine.values import member_at

# what ``{name@meta}`` (and a reference ``name:@meta``) reads of an iteration's element
BINDING_METADATA = ("index", "label")

FORMS = ("{name}", "{name.member}", *(f"{{name@{meta}}}" for meta in BINDING_METADATA),
         "{target:selector}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NOT_KNOWN = object()  # an index or label ``Placeholder.read`` is not told (returned as read)


class UnknownMetadata(PathSyntaxError):
    """``{name@meta}`` with a meta no element has; ``meta`` is what was written."""

    def __init__(self, message: str, meta: str):
        super().__init__(message)
        self.meta = meta


class Placeholder(str):
    """A placeholder's inner text (stripped), parsed: the one value every reader of it uses
    (the compiler's checks, the accessors and fillers at run time, the fixture writer,
    lint), made once by ``parse_placeholder`` when its template is compiled and immutable
    after (it is shared by every binding and kept in the compiled spec's cache).

    It is its text, so a filler keyed by the text, a message showing it, and a comparison
    with its spelling need nothing more, and it has its parts:

    * ``reference``: True for ``{target:selector}`` (its text is the reference), and then
      ``name`` is None;
    * ``name``: the iteration (or message field) read;
    * ``members``: the member path below it (``()`` for none);
    * ``meta``: ``"index"``, ``"label"`` or None.

    What a placeholder reads of an element is ``read`` (and ``member_of`` for a member
    path alone): the one place the grammar's meaning lives ("a member of ASCII digits
    indexes a list", "a meta reads the element, not a member")."""

    name: str | None
    members: tuple[str, ...]
    meta: str | None

    def __new__(cls, text: str, name: str | None, members: tuple[str, ...] = (),
                meta: str | None = None):
        placeholder = str.__new__(cls, text)
        parts = placeholder.__dict__
        parts["name"], parts["members"], parts["meta"] = name, tuple(members), meta
        return placeholder

    def __setattr__(self, key, value):
        raise AttributeError(f"placeholder {{{self}}} is immutable: it is parsed once and "
                             f"shared by every reader")

    def __delattr__(self, key):
        self.__setattr__(key, None)

    def __reduce__(self):
        """Pickled (the compiled spec's cache, compiler/cache.py) as its parts: not parsed
        again when the cache is read."""
        return Placeholder, (self.text, self.name, self.members, self.meta)

    def __repr__(self) -> str:
        return f"Placeholder({self.text!r})"

    @property
    def text(self) -> str:
        return str.__str__(self)

    @property
    def reference(self) -> bool:
        return self.name is None

    @property
    def written(self) -> str:
        """The inner text written back from the parts (``name.m1.m2@meta``, or the
        reference): the grammar has one spelling per placeholder, so it is ``text``."""
        if self.name is None:
            return self.text
        return ".".join((self.name, *self.members)) + (f"@{self.meta}" if self.meta else "")

    def member_of(self, value: Any) -> tuple[bool, Any]:
        """(found, the member) that the member path reaches in ``value`` (``value`` itself
        for none); a member of ASCII digits indexes a list."""
        return member_at(value, self.members, digits_index=True)

    def read(self, value: Any, index: Any = NOT_KNOWN, label: Any = NOT_KNOWN
             ) -> tuple[bool, Any]:
        """(found, what this binding placeholder reads) of an element ``value`` at position
        ``index`` with label ``label``: the meta, else the member path. ``label`` may be a
        function of no arguments giving it, called only when this reads the label (a
        rendered label costs a template fill). A caller that does not know the index or
        label (the fixture writer knows no label) leaves it out and gets ``NOT_KNOWN`` back
        as the value."""
        meta = self.meta
        if meta == "index":
            return True, index
        if meta == "label":
            return True, label() if callable(label) else label
        return member_at(value, self.members, digits_index=True)


def parse_placeholder(inner: str) -> Placeholder:
    """The placeholder whose braces hold ``inner``; PathSyntaxError (UnknownMetadata for
    an unknown ``@meta``) naming the forms that exist when it is none of them."""
    text = inner.strip()
    if ":" in text:  # a reference: its selector is compiled by engine/refs.py
        return Placeholder(text, None)
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
    return Placeholder(text, name, tuple(members), meta or None)


def _refuse(shown: str, why: str):
    raise PathSyntaxError(f"placeholder {shown}: {why}; the forms are {', '.join(FORMS)}")
