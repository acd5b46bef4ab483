"""JSONPaths with placeholders: a member name read from a binding (``$.records.{metric}.avg``).

A rule that iterates a list of names (metrics × statistics, from the constants or from a
document) reads, for each binding, the member the binding names. A JSONPath may therefore
hold ``.{placeholder}`` segments (engine/placeholders.py's forms, outside string literals):

* ``records:$[*].metrics.{metric}.value``  the member named by the bound ``metric``
* ``aggregate:$.records.{metric}.{stat.name}``  two of them
* ``records:$[?@.metrics.{metric}].metrics.{metric}.value``  inside a filter too

Per binding each placeholder's value is inserted as a *name selector*, never as path text:
a string becomes ``['…']`` (escaped), an integer ``[n]`` (an index); anything else, or a
value that is no JSONPath name, cannot be evaluated (a violation, never a crash). So a value
read from evidence cannot inject path syntax. The filled path is compiled once per distinct
text (kept up to ``MAX_CACHED`` texts per template); the template itself is parsed at spec
load with a probe name in each place, so a syntax error is a spec error there, and lint
follows the probe (a placeholder step is "a key filled per binding").
"""

from __future__ import annotations

from typing import Any, Callable

from flarespec.engine.jsonpath import CompiledJsonPath, PathSyntaxError
from flarespec.engine.placeholders import Placeholder, parse_placeholder
from flarespec.engine.problems import Unresolvable

MAX_CACHED = 1 << 12  # compiled fillings kept per template (a name list is usually tens)
# the name a probe path holds in place of placeholder i: private-use characters, so that no
# spec spells it and lint can tell a placeholder step from a literal name
PROBE = "\ue000{}\ue001"


def has_placeholders(selector: str) -> bool:
    """Whether a JSONPath selector holds a ``{`` outside its string literals."""
    return any(part is not None for part in _pieces(selector)[1::2])


def _pieces(selector: str) -> list:
    """``selector`` split into literal texts and the inner texts of ``.{…}`` placeholders,
    alternating (a placeholder piece is None when there is none between two texts). A brace
    outside a string literal that is not such a segment is a PathSyntaxError."""
    pieces, text, position, quote = [], [], 0, None
    while position < len(selector):
        char = selector[position]
        if quote is not None:
            text.append(char)
            if char == "\\" and position + 1 < len(selector):
                text.append(selector[position + 1])
                position += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
            text.append(char)
        elif char == "{":
            end = selector.find("}", position)
            if not text or text[-1] != "." or end < 0 or "{" in selector[position + 1:end]:
                raise PathSyntaxError(
                    f"a placeholder in a JSONPath names one member, as a segment "
                    f".{{name}} or .{{name.member}}: {selector!r}")
            text.pop()  # the dot: the filled name is a bracketed selector
            pieces += ["".join(text), selector[position + 1:end]]
            text, position = [], end
        elif char == "}":
            raise PathSyntaxError(f"unbalanced braces in JSONPath {selector!r}")
        else:
            text.append(char)
        position += 1
    pieces.append("".join(text))
    return pieces


def _name_selector(value: Any, placeholder: Placeholder) -> str:
    """The bracketed selector that names ``value``'s member or index, or Unresolvable."""
    if type(value) is int:
        return f"[{value}]"
    if type(value) is not str:
        kind = "null" if value is None else type(value).__name__
        raise Unresolvable(f"{{{placeholder}}} is {kind} here; a name in a JSONPath is a "
                           f"string (a member) or an integer (an index)")
    escaped = []
    for char in value:
        if char in "\\'":
            escaped.append("\\" + char)
        elif ord(char) < 0x20 or 0xD800 <= ord(char) <= 0xDFFF:
            escaped.append(f"\\u{ord(char):04x}")
        else:
            escaped.append(char)
    return "['" + "".join(escaped) + "']"


class JsonPathTemplate:
    """A JSONPath with ``.{placeholder}`` segments: parsed at load (its probe), compiled
    once per distinct filling."""

    __slots__ = ("source", "parts", "placeholders", "probe", "_compiled")

    def __init__(self, source: str):
        self.source = source
        pieces = _pieces(source)
        self.placeholders = tuple(parse_placeholder(inner) for inner in pieces[1::2])
        self.parts = tuple(pieces)
        self.probe = CompiledJsonPath(self._join(
            ["['" + PROBE.format(i) + "']" for i in range(len(self.placeholders))]))
        self._compiled: dict[str, CompiledJsonPath] = {}

    def __getstate__(self):
        """Pickled (the compiled spec's cache) as what load made of it: the placeholders
        and the probe are not parsed again when the cache is read; the fillings are not
        kept."""
        return self.source, self.parts, self.placeholders, self.probe

    def __setstate__(self, state):
        self.source, self.parts, self.placeholders, self.probe = state
        self._compiled = {}

    def _join(self, names: list[str]) -> str:
        texts = list(self.parts[0::2])
        return texts[0] + "".join(name + text for name, text in zip(names, texts[1:]))

    def compiled(self, fill: Callable[[Placeholder], Any]) -> CompiledJsonPath:
        """The path with every placeholder filled for the current binding."""
        text = self._join([_name_selector(fill(p), p) for p in self.placeholders])
        found = self._compiled.get(text)
        if found is None:
            try:
                found = CompiledJsonPath(text)
            except PathSyntaxError as problem:
                raise Unresolvable(f"{self.source} cannot be filled here: {problem}") from None
            if len(self._compiled) < MAX_CACHED:
                self._compiled[text] = found
        return found

    @staticmethod
    def probe_step(selector) -> int | None:
        """The placeholder a probe path's name selector stands for, or None."""
        if type(selector) is str and selector.startswith("\ue000") and selector.endswith(
                "\ue001") and selector[1:-1].isdigit():
            return int(selector[1:-1])
        return None
