"""``${…}`` constants: the one grammar of compile-time substitution, for specs and catalogs.

A token is ``${NAME}``, ``${NAME.PATH}`` or either with a filter, ``${NAME.PATH|FILTER}``:

* NAME is an identifier (letters, digits and ``_``, not starting with a digit): a constant
  of the spec, or a name of a fixture catalog's ``names:`` block;
* PATH is dot-separated members, each letters, digits, ``_`` and ``-`` (``kinds.0`` indexes
  a list, ``labels.ttl-s`` names a member with a hyphen);
* FILTER is ``pointer`` or ``jsonpath``: the value, a dotted key (``a.b``), becomes the
  pointer ``/a/b`` or the JSONPath ``$.a.b``.

A string that is exactly one token becomes the value itself (any type); inside longer text
a string is spelled as it is and a number as its digits, while a boolean, null, list or
mapping is refused (only a whole string may be replaced by it). A ``${`` that does not open
a token of this grammar (``${}``, ``${a b}``, ``${1x}``, ``${a.}``, an unclosed ``${a``) is
refused too: nothing is left unsubstituted by accident. ``spec.resolve`` (specs),
``review.diff`` (which constants a rule spells), ``authoring.lint`` and ``authoring.scaffold``
(the constants a text spells) and ``fixtures.catalog`` (cases) all read tokens here
(docs/spec-language.md, constants).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

OPENING = "${"
_TOKEN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)(?:\|([A-Za-z_]+))?\}")
# A dotted key: member names joined by dots, each safe unquoted in a JSONPath and a pointer.
DOTTED_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
PATH_FILTERS: dict[str, Callable[[str], str]] = {
    "pointer": lambda dotted: "/" + dotted.replace(".", "/"),
    "jsonpath": lambda dotted: "$." + dotted,
}


class TokenError(ValueError):
    """A ``${…}`` that cannot be substituted; ``code`` says why (``syntax``, ``type``,
    ``filter``); an unknown name is the lookup's own error."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Token:
    text: str            # as written: ``${a.b|pointer}``
    name: str            # the dotted name: ``a.b``
    filter: str | None   # ``pointer``, or None
    start: int           # where it stands in the text
    end: int

    @property
    def head(self) -> str:
        """The first name (``a`` of ``${a.b}``): the constant or catalog name."""
        return self.name.split(".", 1)[0]


def scan(text: str) -> list[Token]:
    """Every token of ``text``, in order; TokenError (``syntax``) at a ``${`` that opens none."""
    tokens, position = [], 0
    while (start := text.find(OPENING, position)) >= 0:
        found = _TOKEN.match(text, start)
        if found is None:
            raise TokenError(_syntax_message(text, start), "syntax")
        tokens.append(Token(found.group(0), found.group(1), found.group(2), start, found.end()))
        position = found.end()
    return tokens


def find_tokens(text: str) -> Iterator[Token]:
    """The well-formed tokens of ``text``, a malformed ``${`` skipped: for readers of text
    that resolution already substituted or refused (spec diff, lint's blame of a message)."""
    for found in _TOKEN.finditer(text):
        yield Token(found.group(0), found.group(1), found.group(2), found.start(), found.end())


def spelled_names(text: str) -> Iterator[str]:
    """The first names of the well-formed tokens of ``text`` (see ``find_tokens``)."""
    for token in find_tokens(text):
        yield token.head


def substitute(text: str, lookup: Callable[[str], Any]) -> Any:
    """``text`` with its tokens replaced by their values; ``lookup(dotted name)`` gives a
    value (and raises its own error for an unknown name). Text without ``${`` is returned
    as it is."""
    if OPENING not in text:
        return text
    tokens = scan(text)
    if len(tokens) == 1 and tokens[0].text == text:
        return value_of(tokens[0], lookup)
    parts, position = [], 0
    for token in tokens:
        parts += [text[position:token.start], _spelled(token, value_of(token, lookup))]
        position = token.end
    parts.append(text[position:])
    return "".join(parts)


def value_of(token: Token, lookup: Callable[[str], Any]) -> Any:
    """The value a token names, passed through its filter."""
    value = lookup(token.name)
    if token.filter is None:
        return value
    if token.filter not in PATH_FILTERS:
        raise TokenError(f"unknown filter |{token.filter} in {token.text}; known: "
                         f"{', '.join('|' + f for f in PATH_FILTERS)}", "filter")
    if not isinstance(value, str) or not DOTTED_KEY.fullmatch(value):
        raise TokenError(f"{token.text} needs a dotted key such as 'a.b_c' (names of letters, "
                         f"digits and _ joined by dots), got {value!r}", "filter")
    return PATH_FILTERS[token.filter](value)


def lookup_constant(constants: dict, dotted: str):
    """The value at a dotted name of ``constants`` (a digit indexes a list); KeyError(dotted)
    when there is none."""
    value = constants
    for part in dotted.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(dotted)
    return value


def _spelled(token: Token, value: Any) -> str:
    """A value as it is spelled inside longer text: a string as it is, a number as digits."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, (dict, list)):
        what = "a structure"
    elif isinstance(value, bool) or value is None:
        what = f"{'null' if value is None else str(value).lower()}, not a string or a number"
    else:
        what = f"a {type(value).__name__}, not a string or a number"
    raise TokenError(f"constant {token.text} is {what}; only a whole string may be replaced "
                     f"by it", "type")


def _syntax_message(text: str, start: int) -> str:
    close = text.find("}", start)
    written = text[start:close + 1] if close >= 0 else text[start:]
    return (f"{written!r} is not a constant: write ${{NAME}}, ${{NAME.member.0}} or "
            f"${{NAME.member|pointer}} (NAME: letters, digits and _, not starting with a digit)"
            + ("" if close >= 0 else "; the '}' is missing"))
