"""``${…}`` constants: the one grammar of compile-time substitution, for specs and catalogs.

A token is a name, ``${NAME}`` or ``${NAME.PATH}``, either with filters,
``${NAME.PATH|FILTER|FILTER…}``, or an expression of names, ``${NAME.PATH + 16}``:

* NAME is an identifier (letters, digits and ``_``, not starting with a digit): a constant
  of the spec, or a name of a fixture catalog's ``names:`` block;
* PATH is dot-separated members, each letters, digits, ``_`` and ``-`` (``kinds.0`` indexes
  a list, ``labels.ttl-s`` names a member with a hyphen);
* FILTER is ``pointer`` or ``jsonpath`` (the value, a dotted key ``a.b``, becomes the
  pointer ``/a/b`` or the JSONPath ``$.a.b``) or ``divisor`` (the value, a formula, gives
  what it divides by: ``a * 1e9 / b.c`` gives ``b.c``); filters apply left to right
  (``${f.formula|divisor|pointer}`` is ``/b/c``);
* an expression is a formula of engine/formula.py (the one formula language) whose fields
  are names (``${base.size + extra}``, ``${sum(matrix.*.count)}``): it computes a
  number from their values. It reads at least one name and no ``$`` or ``@name``, and
  compares nothing.

A string that is exactly one token becomes the value itself (any type; an expression's
number keeps its type, ``40 + 2`` is the integer 42); inside longer text a string is
spelled as it is and a number as its digits, while a boolean, null, list or mapping is
refused (only a whole string may be replaced by it). A ``${`` that does not open a token of
this grammar (``${}``, ``${a b}``, ``${1x}``, ``${a.}``, an unclosed ``${a``) is refused
too: nothing is left unsubstituted by accident. ``spec.resolve`` (specs, constants
included: a constant may be computed from others), ``review.diff`` (which constants a rule
spells), ``authoring.lint`` and ``authoring.scaffold`` (the constants a text spells) and
``fixtures.catalog`` (cases) all read tokens here (docs/spec-language.md, constants).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

OPENING = "${"
_TOKEN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)((?:\|[A-Za-z_]+)*)\}")
# an expression token: what its braces hold is the formula's to parse (a formula has no braces)
_BRACED = re.compile(r"\$\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A dotted key: member names joined by dots, each safe unquoted in a JSONPath and a pointer.
DOTTED_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
PATH_FILTERS: dict[str, Callable[[str], str]] = {
    "pointer": lambda dotted: "/" + dotted.replace(".", "/"),
    "jsonpath": lambda dotted: "$." + dotted,
}
# filters over a formula (text): what it divides by (engine/formula.py's ``divisors``)
FORMULA_FILTERS = ("divisor",)
FILTERS = (*PATH_FILTERS, *FORMULA_FILTERS)


class TokenError(ValueError):
    """A ``${…}`` that cannot be substituted; ``code`` says why (``syntax``, ``type``,
    ``filter``, ``expression``: an expression that cannot be computed); an unknown name is
    the lookup's own error."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Token:
    text: str            # as written: ``${a.b|pointer}``
    name: str            # the dotted name: ``a.b`` (an expression: the first name it reads)
    filter: str | None   # the filters as written, ``pointer`` or ``divisor|pointer``, or None
    start: int           # where it stands in the text
    end: int
    expression: Any = None  # an expression's compiled formula (engine/formula.py), or None

    @property
    def head(self) -> str:
        """The first name (``a`` of ``${a.b}``): the constant or catalog name."""
        return self.name.split(".", 1)[0]

    @property
    def filters(self) -> tuple[str, ...]:
        return tuple(self.filter.split("|")) if self.filter else ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every dotted name the token reads: its name, or each field of its expression (a
        wildcard path up to its first ``*``: ``m.*.n`` reads ``m``)."""
        if self.expression is None:
            return (self.name,)
        return tuple(dict.fromkeys(_read_name(field) for field in self.expression.fields))


def scan(text: str) -> list[Token]:
    """Every token of ``text``, in order; TokenError (``syntax``) at a ``${`` that opens none."""
    return list(_tokens(text, strict=True))


def find_tokens(text: str) -> Iterator[Token]:
    """The well-formed tokens of ``text``, a malformed ``${`` skipped: for readers of text
    that resolution already substituted or refused (spec diff, lint's blame of a message)."""
    return _tokens(text, strict=False)


def _tokens(text: str, strict: bool) -> Iterator[Token]:
    position = 0
    while (start := text.find(OPENING, position)) >= 0:
        found = _TOKEN.match(text, start)
        if found is not None:
            yield Token(found.group(0), found.group(1), found.group(2)[1:] or None, start,
                        found.end())
            position = found.end()
            continue
        try:
            token = _expression(text, start)
        except TokenError:
            if strict:
                raise
            position = start + len(OPENING)
            continue
        yield token
        position = token.end


def _expression(text: str, start: int) -> Token:
    """The expression token at ``start`` (no name token stands there), or TokenError."""
    from flarespec.engine.formula import FormulaError, compile_formula

    braced = _BRACED.match(text, start)
    if braced is None or not braced.group(1).strip():
        raise TokenError(_syntax_message(text, start), "syntax")
    inner = braced.group(1)
    try:
        formula = compile_formula(inner)
    except FormulaError as bad:
        at = f" (column {bad.column})" if bad.column is not None else ""
        raise TokenError(f"{_syntax_message(text, start)}; as an expression: {bad.reason}{at}",
                         "syntax") from None
    why = _not_an_expression(formula)
    if why:
        raise TokenError(f"{_syntax_message(text, start)}; as an expression: {why}", "syntax")
    return Token(braced.group(0), _read_name(formula.fields[0]), None, start, braced.end(),
                 formula)


def _not_an_expression(formula) -> str | None:
    """Why a formula is no expression of names (None if it is one)."""
    if formula.names:
        return f"@{formula.names[0]} is no name (an expression reads names, not @names)"
    if formula.operator is not None:
        return f"it compares ({formula.operator}); an expression computes a number"
    for field in formula.fields:
        head = field.split(".", 1)[0]
        if not _NAME.fullmatch(head):
            return (f"{head!r} is no NAME (a hyphen belongs to members, never to a NAME: "
                    f"write 'a - b' to subtract)" if head != "$" else
                    "$ is no name (an expression reads names only)")
    if not formula.fields:
        return "it reads no name (write the number itself)"
    return None


def _read_name(field: str) -> str:
    parts = field.split(".")
    return ".".join(parts[:parts.index("*")] if "*" in parts else parts)


def spelled_names(text: str) -> Iterator[str]:
    """The first names of every dotted name the well-formed tokens of ``text`` read (see
    ``find_tokens``)."""
    for token in find_tokens(text):
        yield from dict.fromkeys(name.split(".", 1)[0] for name in token.names)


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
    """The value a token names, passed through its filters, or the number its expression
    computes from the values it reads."""
    if token.expression is not None:
        return _computed(token, lookup)
    value = lookup(token.name)
    for name in token.filters:
        value = _filtered(token, name, value)
    return value


def _filtered(token: Token, name: str, value: Any) -> Any:
    if name in PATH_FILTERS:
        if not isinstance(value, str) or not DOTTED_KEY.fullmatch(value):
            raise TokenError(f"{token.text} needs a dotted key such as 'a.b_c' (names of "
                             f"letters, digits and _ joined by dots), got {value!r}", "filter")
        return PATH_FILTERS[name](value)
    if name == "divisor":
        return _divisor(token, value)
    raise TokenError(f"unknown filter |{name} in {token.text}; known: "
                     f"{', '.join('|' + f for f in FILTERS)}", "filter")


def _divisor(token: Token, value: Any) -> str:
    """``|divisor``: the one field a formula divides by, as a dotted key."""
    from flarespec.engine.formula import FormulaError, compile_formula, divisors

    try:
        found = divisors(compile_formula(value))
    except FormulaError as bad:
        raise TokenError(f"{token.text} needs a formula, got {value!r} ({bad.reason})",
                         "filter") from None
    if len(found) != 1 or not DOTTED_KEY.fullmatch(found[0]):
        raise TokenError(f"{token.text} needs a formula that divides by one field (a dotted "
                         f"key such as 'a.b_c'), but {value!r} divides by "
                         f"{', '.join(map(repr, found)) or 'nothing'}", "filter")
    return found[0]


class _Reads(dict):
    """The part of the names an expression reads, built from ``lookup``: a mapping a
    formula's fields walk (``a.0`` reads member ``"0"`` of it as a list's index 0)."""


def _computed(token: Token, lookup: Callable[[str], Any]) -> int | float:
    from flarespec.engine.formula import EvaluationError

    root = _Reads()
    for dotted in sorted(token.names, key=lambda name: name.count(".")):
        *parents, last = dotted.split(".")
        holder = root
        for part in parents:
            holder = holder.setdefault(part, _Reads())
            if not isinstance(holder, _Reads):
                break  # a shorter name read already holds this one's value
        else:
            holder[last] = lookup(dotted)
    try:
        return token.expression.evaluate(root)
    except EvaluationError as bad:
        raise TokenError(f"{token.text} cannot be computed: {bad}", "expression") from None


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
    return (f"{written!r} is not a constant: write ${{NAME}}, ${{NAME.member.0}}, "
            f"${{NAME.member|pointer}} or an expression such as ${{NAME.member + 1}} (NAME: "
            f"letters, digits and _, not starting with a digit)"
            + ("" if close >= 0 else "; the '}' is missing"))
