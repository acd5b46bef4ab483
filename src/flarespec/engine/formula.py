"""Safe arithmetic formulas for rule assertions.

A formula is compiled once (at spec load) into a small tree of frozen dataclasses
and evaluated many times. It is parsed by hand -- never Python ``eval`` or ``ast`` --
so it can only do what this grammar allows::

    formula   := condition
    condition := conjunct ( "or" conjunct )*
    conjunct  := negated ( "and" negated )*
    negated   := "not" negated | relation
    relation  := expr ( COMPARE expr )?       at most one comparison, no chaining
    COMPARE   := "==" | "!=" | "<" | "<=" | ">" | ">="
    expr      := term ( ("+" | "-") term )*
    term      := unary ( ("*" | "/") unary )*
    unary     := "-" unary | primary
    primary   := NUMBER | FIELD | "@" NAME | FUNC "(" expr ( "," expr )* ")" | "(" condition ")"
    FUNC      := abs | count | len | max | mean | median | min | pstdev | quantile | sqrt
               | stdev | sum

Rules worth knowing when writing specs:

* NUMBER is a JSON number (``12``, ``0.5``, ``1e9``); ``12`` stays an int, anything
  with a fraction or exponent is a float, exactly as ``json.loads`` returns it.
* FIELD is ``$`` (the current value) or a name, followed by ``.segment`` parts that
  walk dicts and lists: ``a.b.0.c``, ``$.0``. An all-digit segment indexes a list
  (or looks up that key in a dict). ``*`` fans out over a list, flattening what it
  reaches, and is allowed only inside a list argument (below): ``sum(events.*.n)``,
  ``count(events.*.token_ids.*)``, ``mean(records.*.icl.*)``.
* Names may contain hyphens *between* name characters, so ``max-tokens`` and also
  ``n-1`` are single field names. Write subtraction with spaces: ``a - b``.
* Names starting with ``__`` are rejected, so the formula cannot even look like
  Python attribute tricks. ``and``, ``or`` and ``not`` are words of the grammar; a
  member of that name is read as ``$.and``.
* Types are static: arithmetic, function arguments and the two sides of a comparison
  are numbers; ``and``, ``or`` and ``not`` join comparisons (``a < b and not c == 0``,
  parenthesised as needed). ``and`` binds tighter than ``or``; both short-circuit as in
  Python, so ``len(xs) > 0 and mean(xs) > 1`` never takes the mean of an empty list.
* Arithmetic uses plain Python numbers in the written order, so ``a * 1e9 / b`` is
  bit-for-bit the Python expression. ``/`` is true division. ``bool`` is not a number.
* Every computed number (an operator's or a function's result) must be finite and, if an
  integer, below 2**1024 in magnitude (the float range): an overflow to infinity, a NaN
  (``inf - inf``) or a runaway integer is an EvaluationError ("cannot evaluate"), never a
  comparison. A field or @name read as it is (``x > 1e308``) compares as Python does.
* Comparisons are numeric, not JSON-type-strict: ``12.0 == 12`` is true. ``==`` and
  ``!=`` honour ``rel_tol``/``abs_tol`` (via ``math.isclose``) when either is non-zero;
  ordering operators ignore tolerances. A comparison involving NaN is an EvaluationError
  (NaN is not comparable), ``!=`` included.

Functions. ``count``, ``len``, ``max``, ``mean``, ``median``, ``min``, ``pstdev``,
``quantile``, ``stdev`` and ``sum`` take a *list argument*: a field or @name holding a
list (a wildcard path yields one), or any expression over such lists, computed element
by element (``mean(@end - @start)``, ``max(abs(xs - mean(xs)))``): a number is applied
to every element, and two lists must be of one length (else an EvaluationError naming
both). ``abs`` and ``sqrt`` take a number, or element by element a list where one is
allowed. ``quantile(xs, p)`` takes ``p`` in [0, 1] as its second argument. Items must be
finite numbers; an empty list is an EvaluationError for all but ``count``, ``len`` and
``sum``, and ``stdev`` needs two items.

* ``len`` of a list, string or object; ``count`` of a list, counting the items of each
  item that is a list (one level flattened); ``sum`` adds left to right (plain floats,
  as written); ``min``/``max`` as Python's.
* The statistics are Python's ``statistics`` module's, exact: ``mean`` sums exactly
  (``statistics.mean``); ``median`` and ``quantile`` interpolate exactly between the
  closest ranks (Hyndman & Fan's method 7, numpy's default: for sorted x of n items,
  h = (n - 1) p, x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h])), ``median``
  being ``quantile(xs, 0.5)``; a float ``p`` is taken as the decimal it is written as
  (``0.9`` is 9/10, not the binary float below it). A result that falls on an item is
  that item; otherwise a statistic of integers is an integer when its exact value is
  one, else the float nearest the exact value (rounded once). ``stdev`` (sample, n - 1)
  and ``pstdev`` (population) are ``statistics.stdev``/``pstdev``: the correctly rounded
  square root of the exact variance, always a float; ``sqrt`` likewise of its number.
"""

from __future__ import annotations

import math
import operator
import re
import statistics
import sys
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction

from flarespec.engine.outcome import shown

MAX_FORMULA_LENGTH = 2000
MAX_NESTING_DEPTH = 50


class FormulaError(Exception):
    """The formula text is invalid (raised by compile_formula)."""

    def __init__(self, reason: str, source: str, column: int | None = None):
        self.reason, self.source, self.column = reason, source, column
        message = reason
        if column is not None:
            # One-for-one whitespace replacement keeps the caret aligned for multi-line YAML scalars.
            shown = re.sub(r"\s", " ", source)
            message = f"{reason} at column {column}\n  {shown}\n  {' ' * (column - 1)}^"
        super().__init__(message)


class EvaluationError(Exception):
    """The formula is valid but could not be computed for the given value and refs."""


# ---------------------------------------------------------------- syntax tree

@dataclass(frozen=True)
class NumberLiteral:
    value: int | float
    text: str = ""              # as written, e.g. "1e9"


@dataclass(frozen=True)
class FieldPath:
    path: str                   # as written, e.g. "events.*.n" or "$"
    segments: tuple[str, ...]   # the dotted parts, without a leading "$"


@dataclass(frozen=True)
class RefName:
    name: str                   # without the "@"


@dataclass(frozen=True)
class FunctionCall:
    function: str
    arguments: tuple[Node, ...]


@dataclass(frozen=True)
class Negation:
    operand: Node


@dataclass(frozen=True)
class OperatorChain:
    """``first op1 x1 op2 x2 ...`` of one precedence level, applied strictly left to right.

    Kept flat (not a nested binary tree) so a long ``1 + 1 + ...`` does not recurse deeply."""
    first: Node
    rest: tuple[tuple[str, Node], ...]


@dataclass(frozen=True)
class Comparison:
    operator: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Logic:
    """``a and b and ...`` or ``a or b or ...``: comparisons (or conditions), flat."""
    operator: str               # "and" | "or"
    operands: tuple[Truth, ...]


@dataclass(frozen=True)
class Not:
    operand: Truth


Node = NumberLiteral | FieldPath | RefName | FunctionCall | Negation | OperatorChain
Truth = Comparison | Logic | Not
_TRUTHS = (Comparison, Logic, Not)
_LEAVES = (FieldPath, RefName)


@dataclass(frozen=True)
class ComparisonResult:
    """The outcome of a formula that is one comparison, with both sides' values."""
    ok: bool
    left: int | float
    right: int | float
    operator: str

    @property
    def shown(self) -> str:
        """The comparison with its values, as a failure states it: ``3 == 4``."""
        return f"{self.left!r} {self.operator} {self.right!r}"

    @property
    def expected(self) -> int | float:
        return self.right

    @property
    def actual(self) -> int | float:
        return self.left


@dataclass(frozen=True)
class ConditionResult:
    """The outcome of a formula joined by ``and``/``or``/``not``; ``shown`` is the
    condition with the values it compared (``1 < 5 and 1 > 2``; a part short-circuited
    is ``…``), written only when it does not hold."""
    ok: bool
    operator: str               # the outermost word: "and" | "or" | "not"
    source: str
    shown: str = ""

    @property
    def expected(self) -> str:
        return self.source

    @property
    def actual(self) -> str:
        return self.shown


# ---------------------------------------------------------------- functions

@dataclass(frozen=True)
class _Function:
    signature: str              # as errors and the docs write it
    arity: int
    over_list: bool             # the first argument is a list argument (a reduction), not a number


_FUNCTIONS = {
    "abs": _Function("abs(x)", 1, False),
    "count": _Function("count(xs)", 1, True),
    "len": _Function("len(xs)", 1, True),
    "max": _Function("max(xs)", 1, True),
    "mean": _Function("mean(xs)", 1, True),
    "median": _Function("median(xs)", 1, True),
    "min": _Function("min(xs)", 1, True),
    "pstdev": _Function("pstdev(xs)", 1, True),
    "quantile": _Function("quantile(xs, p)", 2, True),
    "sqrt": _Function("sqrt(x)", 1, False),
    "stdev": _Function("stdev(xs)", 1, True),
    "sum": _Function("sum(xs)", 1, True),
}
FUNCTIONS = tuple(sorted(_FUNCTIONS))
_LIST_FUNCTIONS = "/".join(name for name in FUNCTIONS if _FUNCTIONS[name].over_list)
KEYWORDS = ("and", "or", "not")


# ---------------------------------------------------------------- tokenizer

_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*"
_SEGMENT = r"(?:[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*|\*)"
_TOKEN_PATTERN = re.compile(rf"""
    (?P<space>\s+)
  | (?P<number>(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<field>(?:\$|{_NAME})(?:\.{_SEGMENT})*)
  | (?P<ref>@{_NAME})
  | (?P<compare>==|!=|<=|>=|<|>)
  | (?P<operator>[-+*/])
  | (?P<paren>[()])
  | (?P<comma>,)
""", re.VERBOSE)
_DUNDER = re.compile(r"(?<![A-Za-z0-9_-])__")  # "__" at the start of a name or segment


@dataclass(frozen=True)
class _Token:
    kind: str        # number, field, keyword, ref, compare, operator, paren, comma, end
    text: str
    column: int      # 1-based


def _tokenize(source: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(source):
        column = position + 1
        match = _TOKEN_PATTERN.match(source, position)
        if match is None:
            char = source[position]
            hint = " (use '==' to compare)" if char == "=" else ""
            raise FormulaError(f"unexpected character {char!r}{hint}", source, column)
        kind, text, position = match.lastgroup, match.group(), match.end()
        if kind == "space":
            continue
        if kind == "number" and position < len(source) and (source[position].isalnum() or source[position] in "._"):
            raise FormulaError(f"malformed number starting {text!r}", source, column)
        dunder = _DUNDER.search(text) if kind in ("field", "ref") else None
        if dunder:
            raise FormulaError("names starting with '__' are not allowed", source, column + dunder.start())
        tokens.append(_Token("keyword" if kind == "field" and text in KEYWORDS else kind, text, column))
    tokens.append(_Token("end", "", len(source) + 1))
    return tokens


def _describe(token: _Token) -> str:
    return "the end of the formula" if token.kind == "end" else repr(token.text)


# ---------------------------------------------------------------- parser

class _Parser:
    def __init__(self, source: str):
        self.source = source
        self.tokens = _tokenize(source)
        self.index = 0
        self.depth = 0
        self.fields: dict[str, None] = {}   # dicts as ordered sets: first-use order, no duplicates
        self.names: dict[str, None] = {}
        self.leaves = 0                      # fields and @names read so far
        self.in_list = False                 # inside a list argument, where '*' may fan out

    def error(self, reason: str, token: _Token) -> FormulaError:
        return FormulaError(reason, self.source, token.column)

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

    def at(self, kind: str, text: str) -> bool:
        token = self.tokens[self.index]
        return token.kind == kind and token.text == text

    def expect(self, text: str) -> None:
        token = self.advance()
        if token.kind == "end" or token.text != text:
            raise self.error(f"expected {text!r}, found {_describe(token)}", token)

    @contextmanager
    def nested(self, token: _Token):
        # Bounds both parser and evaluator recursion, whatever the input.
        self.depth += 1
        if self.depth > MAX_NESTING_DEPTH:
            raise self.error(f"formula nests deeper than {MAX_NESTING_DEPTH} levels", token)
        yield
        self.depth -= 1

    def number(self, node, token: _Token, where: str):
        """``node``, which starts at ``token``, if it is a number (not a comparison)."""
        if isinstance(node, _TRUTHS):
            raise self.error(f"{where} needs a number, not a comparison", token)
        return node

    def truth(self, node, token: _Token, word: str):
        """``node``, which starts at ``token``, if it is a comparison (or a condition)."""
        if not isinstance(node, _TRUTHS):
            raise self.error(f"{word!r} joins comparisons, found a number", token)
        return node

    def parse_formula(self) -> Node | Truth:
        root = self.parse_condition()
        if self.peek().kind != "end":
            raise self.error(f"expected an operator or the end of the formula, found {_describe(self.peek())}",
                             self.peek())
        return root

    def parse_condition(self) -> Node | Truth:
        return self.parse_logic("or", self.parse_conjunct)

    def parse_conjunct(self) -> Node | Truth:
        return self.parse_logic("and", self.parse_negated)

    def parse_logic(self, word: str, parse_operand) -> Node | Truth:
        start = self.peek()
        first = parse_operand()
        if not self.at("keyword", word):
            return first
        operands = [self.truth(first, start, word)]
        while self.at("keyword", word):
            self.advance()
            start = self.peek()
            operands.append(self.truth(parse_operand(), start, word))
        return Logic(word, tuple(operands))

    def parse_negated(self) -> Node | Truth:
        token = self.peek()
        if not self.at("keyword", "not"):
            return self.parse_relation()
        self.advance()
        with self.nested(token):
            start = self.peek()
            return Not(self.truth(self.parse_negated(), start, "not"))

    def parse_relation(self) -> Node | Truth:
        start = self.peek()
        left = self.parse_expression()
        if self.peek().kind != "compare":
            return left
        symbol = self.advance().text
        self.number(left, start, f"{symbol!r}")
        start = self.peek()
        right = self.number(self.parse_expression(), start, f"{symbol!r}")
        if self.peek().kind == "compare":
            raise self.error("comparisons do not chain (write 'a < b and b < c')", self.peek())
        return Comparison(symbol, left, right)

    def parse_chain(self, symbols: str, parse_operand) -> Node:
        start = self.peek()
        first, rest = parse_operand(), []
        while self.peek().kind == "operator" and self.peek().text in symbols:
            symbol = self.advance().text
            if not rest:
                self.number(first, start, f"{symbol!r}")
            start = self.peek()
            rest.append((symbol, self.number(parse_operand(), start, f"{symbol!r}")))
        return OperatorChain(first, tuple(rest)) if rest else first

    def parse_expression(self) -> Node:
        return self.parse_chain("+-", self.parse_term)

    def parse_term(self) -> Node:
        return self.parse_chain("*/", self.parse_unary)

    def parse_unary(self) -> Node:
        token = self.peek()
        if token.kind == "operator" and token.text == "-":
            self.advance()
            with self.nested(token):
                start = self.peek()
                return Negation(self.number(self.parse_unary(), start, "'-'"))
        return self.parse_primary()

    def parse_primary(self) -> Node | Truth:
        token = self.advance()
        if token.kind == "number":
            is_float = any(marker in token.text for marker in ".eE")
            return NumberLiteral(float(token.text) if is_float else int(token.text), token.text)
        if token.kind == "ref":
            return self.ref(token)
        if token.kind == "field":
            if self.peek().text == "(":
                return self.parse_call(token)
            if "*" in token.text.split(".") and not self.in_list:
                raise FormulaError(f"wildcard '*' is only allowed inside the list argument of {_LIST_FUNCTIONS}()",
                                   self.source, token.column + token.text.index("*"))
            return self.field_path(token)
        if token.text == "(":
            with self.nested(token):
                inner = self.parse_condition()
            self.expect(")")
            return inner
        raise self.error(f"expected a number, field, @name, function or '(', found {_describe(token)}", token)

    def parse_call(self, name_token: _Token) -> FunctionCall:
        name = name_token.text
        if name not in _FUNCTIONS:
            import difflib  # only for a spec error: kept off the measure path

            close = difflib.get_close_matches(name, FUNCTIONS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise self.error(f"unknown function {name!r}{hint}; allowed: {', '.join(FUNCTIONS)}", name_token)
        function = _FUNCTIONS[name]
        self.expect("(")
        took = "1 argument" if function.arity == 1 else f"{function.arity} arguments"
        if self.peek().text == ")":
            raise self.error(f"{name}() takes {took}: {function.signature}", self.peek())
        with self.nested(name_token):
            arguments = [self.parse_argument(name, 0)]
            while self.peek().kind == "comma" and len(arguments) < function.arity:
                self.advance()
                arguments.append(self.parse_argument(name, len(arguments)))
        if len(arguments) != function.arity or self.peek().kind == "comma":
            raise self.error(f"{name}() takes {took}: {function.signature}", self.peek())
        self.expect(")")
        return FunctionCall(name, tuple(arguments))

    def parse_argument(self, name: str, position: int) -> Node:
        """One argument: a function's list argument (where '*' may fan out, which must read
        a field or @name), a number (where a list is allowed if it is allowed around the
        call: ``abs``, ``sqrt``), or quantile's p (a number; checked now if constant)."""
        start, leaves, in_list = self.peek(), self.leaves, self.in_list
        over_list = position == 0 and _FUNCTIONS[name].over_list
        if position or over_list:
            self.in_list = over_list
        node = self.number(self.parse_expression(), start, f"an argument of {name}()")
        self.in_list = in_list
        if over_list and self.leaves == leaves:
            raise self.error(f"{name}() takes a list: its argument must read a field or @name", start)
        if position and self.leaves == leaves:   # a constant p, checked once here
            try:
                _fraction_p(_evaluate(node, None, {}))
            except EvaluationError as error:
                raise self.error(str(error), start) from None
        return node

    def field_path(self, token: _Token) -> FieldPath:
        self.fields[token.text] = None
        self.leaves += 1
        parts = token.text.split(".")
        return FieldPath(token.text, tuple(parts[1:] if parts[0] == "$" else parts))

    def ref(self, token: _Token) -> RefName:
        self.names[token.text[1:]] = None
        self.leaves += 1
        return RefName(token.text[1:])


# ---------------------------------------------------------------- evaluation: values

_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
_ORDERING = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_SEQUENCES = (list, tuple)


SHOWN_IN_ERRORS = 60  # characters of an offending value quoted in an evaluation error


def _short(value: object) -> str:
    """A value in an error as JSON text, cut: bounded work however large or deep it is."""
    return shown(value, SHOWN_IN_ERRORS)


def _described(value: object) -> str:
    """``integer 3``, ``string "12"``, ``boolean true``: the JSON type and the value."""
    from flarespec.engine.values import json_type

    return f"{json_type(value)} {_short(value)}"


def _as_number(candidate: object, description: str) -> int | float:
    # bool is an int subclass; a JSON true must not silently count as 1.
    if isinstance(candidate, bool) or not isinstance(candidate, (int, float)):
        raise EvaluationError(f"{description} is not a number: {_described(candidate)}")
    return candidate


def _numbers(items, description: str) -> list:
    """The items of a list as a new list, each a finite number (an error names the first
    that is not)."""
    numbers = list(items)
    for index, item in enumerate(numbers):
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                raise EvaluationError(f"{description} item {index} is {_short(item)}, not a finite number")
        elif kind is not int:
            _as_number(item, f"{description} item {index}")
    return numbers


def _where(walked: str) -> str:
    return repr(walked) if walked else "the current value"


def _step(current: object, segment: str, walked: str, path: FieldPath) -> object:
    if _is_mapping(current):
        if segment in current:
            return current[segment]
        if segment.isdigit() and int(segment) in current:   # YAML may load `2:` as an int key
            return current[int(segment)]
        problem = f"{_where(walked)} has no key {segment!r}"
    elif isinstance(current, _SEQUENCES):
        if segment.isdigit() and int(segment) < len(current):
            return current[int(segment)]
        problem = f"{_where(walked)} is a list of length {len(current)}, which has no index {segment!r}"
    else:
        problem = f"{_where(walked)} is {_described(current)}, not an object or list"
    raise EvaluationError(f"field {path.path!r} not found: {problem}")


def _is_mapping(value: object) -> bool:
    """``isinstance(value, Mapping)``, a plain dict first: the ABC's check costs six times
    a type test, and a walk over an SSE stream's events asks it for every event."""
    return type(value) is dict or isinstance(value, Mapping)


def _resolve(root: object, path: FieldPath) -> object:
    """Follow path from root; a '*' fans out over a list and the results are flattened,
    so a wildcard path yields the list of everything it reached. The values alone are
    walked first (an object's member by its name, a list's item by its index, a list's
    items for '*'); any other step (a YAML integer key, a missing member: a failure) is left
    to the walk that also spells the places walked, for its message (``_resolve_worded``),
    from the root."""
    reached = [root]
    for segment in path.segments:
        following: list = []
        if segment == "*":
            for current in reached:
                if not isinstance(current, _SEQUENCES):
                    return _resolve_worded(root, path)
                following.extend(current)
        else:
            for current in reached:
                if _is_mapping(current) and segment in current:
                    following.append(current[segment])
                elif isinstance(current, _SEQUENCES) and segment.isdigit() \
                        and int(segment) < len(current):  # an index, as _step reads it
                    following.append(current[int(segment)])
                else:
                    return _resolve_worded(root, path)
        reached = following
    return reached if "*" in path.segments else reached[0]


def _resolve_worded(root: object, path: FieldPath) -> object:
    """``_resolve`` with the concrete path walked to each value, for the messages of
    ``_step`` and of a '*' over what is not a list."""
    reached = [(root, "")]   # (value, concrete path walked so far, for messages)
    for segment in path.segments:
        following = []
        for current, walked in reached:
            prefix = walked + "." if walked else ""
            if segment != "*":
                following.append((_step(current, segment, walked, path), prefix + segment))
            elif isinstance(current, _SEQUENCES):
                following.extend((item, f"{prefix}{index}") for index, item in enumerate(current))
            else:
                raise EvaluationError(f"field {path.path!r}: '*' needs a list, but {_where(walked)} is "
                                      f"{_described(current)}")
        reached = following
    return [value for value, _ in reached] if "*" in path.segments else reached[0][0]


def _lookup_ref(refs: Mapping[str, object], name: str) -> object:
    if name not in refs:
        raise EvaluationError(f"unknown reference @{name}; supplied: {', '.join(sorted(refs)) or 'none'}")
    return refs[name]


def _written(node: Node) -> str:
    """A node as a formula writes it (a nested chain in parentheses), for messages."""
    kind = type(node)
    if kind is NumberLiteral:
        return node.text or repr(node.value)
    if kind is FieldPath:
        return node.path
    if kind is RefName:
        return f"@{node.name}"
    if kind is FunctionCall:
        return f"{node.function}({', '.join(_written(argument) for argument in node.arguments)})"
    if kind is Negation:
        return f"-{_grouped(node.operand)}"
    return _grouped(node.first) + "".join(f" {symbol} {_grouped(operand)}" for symbol, operand in node.rest)


def _grouped(node: Node) -> str:
    return f"({_written(node)})" if type(node) is OperatorChain else _written(node)


def _words(node: Node) -> str:
    """How an error names what a node computes: ``field 'a.*'``, ``@xs``, ``'a - b'``."""
    if type(node) is FieldPath:
        return f"field {node.path!r}"
    if type(node) is RefName:
        return f"@{node.name}"
    return repr(_written(node))


# ---------------------------------------------------------------- evaluation: numbers

MAX_INTEGER_BITS = 1024   # a computed integer beyond the float range (2**1024) is an overflow
_INTEGER_LIMIT = 1 << MAX_INTEGER_BITS


def _out_of_range(number: int | float) -> bool:
    """A computed number (an operator's or a function's result) that is not a finite number
    within the float range: an infinity or a NaN is never compared, and an integer never
    grows without bound (each operand is bounded, so one step costs little)."""
    if type(number) is float:
        return not math.isfinite(number)
    return not -_INTEGER_LIMIT < number < _INTEGER_LIMIT


def _range_error(number: int | float, written: str) -> EvaluationError:
    """The error for ``_out_of_range(number)``, ``written`` the operation in words."""
    if type(number) is float and math.isnan(number):
        return EvaluationError(f"{written} is NaN (not a number)")
    if type(number) is float:
        return EvaluationError(f"arithmetic overflow: {written} is {_short(number)}, not a finite number")
    return EvaluationError(f"arithmetic overflow: {written} is an integer of {number.bit_length()} bits, "
                           f"beyond the float range (2**{MAX_INTEGER_BITS})")


def _evaluate(node: Node, value: object, refs: Mapping[str, object], many: bool = False):
    """The number ``node`` computes; with ``many`` (inside a list argument) a list of
    numbers where it reads a list."""
    kind = type(node)
    if kind is NumberLiteral:
        return node.value
    if kind is FieldPath or kind is RefName:
        found = _resolve(value, node) if kind is FieldPath else _lookup_ref(refs, node.name)
        if type(found) is int or type(found) is float:
            return found
        if many and isinstance(found, _SEQUENCES):
            return _numbers(found, _words(node))
        return _as_number(found, _words(node))
    if kind is OperatorChain:
        result = _evaluate(node.first, value, refs, many)
        for index, (symbol, operand) in enumerate(node.rest):
            right = _evaluate(operand, value, refs, many)
            if type(result) is list or type(right) is list:
                result = _elementwise(symbol, result, right, node, index)
            else:
                result = _arithmetic(symbol, result, right)
        return result
    if kind is Negation:
        operand = _evaluate(node.operand, value, refs, many)
        return [-item for item in operand] if type(operand) is list else -operand
    if kind is FunctionCall:
        return _call(node, value, refs, many)
    raise TypeError(f"not a formula node: {node!r}")


def _arithmetic(symbol: str, left: int | float, right: int | float) -> int | float:
    if symbol == "/" and right == 0:
        raise EvaluationError(f"division by zero ({_short(left)} / {_short(right)})")
    result = _ARITHMETIC[symbol](left, right)
    if _out_of_range(result):
        raise _range_error(result, f"{_short(left)} {symbol} {_short(right)}")
    return result


def _elementwise(symbol: str, left, right, chain: OperatorChain, index: int) -> list:
    """``left symbol right`` element by element, the ``index``-th step of ``chain``: two
    lists of one length pairwise, a number with every element of a list."""
    if type(left) is list and type(right) is list:
        if len(left) != len(right):
            before = OperatorChain(chain.first, chain.rest[:index]) if index else chain.first
            raise EvaluationError(f"element-wise {symbol!r} needs lists of one length, but "
                                  f"{_words(before)} has {len(left)} items and "
                                  f"{_words(chain.rest[index][1])} has {len(right)}")
        pairs = zip(left, right)
    elif type(left) is list:
        pairs = ((item, right) for item in left)
    else:
        pairs = ((left, item) for item in right)
    results = []
    for position, (first, second) in enumerate(pairs):
        try:
            results.append(_arithmetic(symbol, first, second))
        except EvaluationError as error:
            raise EvaluationError(f"item {position}: {error}") from None
    return results


# ---------------------------------------------------------------- evaluation: functions

def _call(node: FunctionCall, value: object, refs: Mapping[str, object], many: bool):
    name, first = node.function, node.arguments[0]
    if not _FUNCTIONS[name].over_list:
        operand = _evaluate(first, value, refs, many)
        if type(operand) is list:
            return [_mapped(name, item, f"{name}() of {_words(first)} item {position}")
                    for position, item in enumerate(operand)]
        return _mapped(name, operand, f"{name}({_short(operand)})")
    items = _list_argument(name, first, value, refs)
    if name == "len":
        return len(items)
    if name == "count":  # each item that is a list counts its items, any other one 1
        nested = [len(item) for item in items if isinstance(item, _SEQUENCES)]
        return len(items) - len(nested) + sum(nested)
    numbers = items if type(first) not in _LEAVES else _numbers(items, _words(first))
    if name != "sum" and len(numbers) < (2 if name == "stdev" else 1):
        raise EvaluationError(f"{name}() of an empty list ({_words(first)})" if not numbers else
                              f"{name}() needs at least two numbers, but {_words(first)} has 1")
    extra = _fraction_p(_evaluate(node.arguments[1], value, refs)) if name == "quantile" else None
    try:
        result = _REDUCTIONS[name](numbers, extra)
    except OverflowError:
        raise EvaluationError(f"arithmetic overflow: {name}() of {_words(first)} is beyond the float range") from None
    if _out_of_range(result):
        raise _range_error(result, f"{name}() of {_words(first)}")
    return result


def _list_argument(name: str, node: Node, value: object, refs: Mapping[str, object]):
    """A list argument's list: a field's or @name's value as it is (``len`` also takes a
    string or an object; ``count`` looks into items that are lists), or the numbers an
    expression computes element by element."""
    if type(node) is FieldPath:
        found = _resolve(value, node)
    elif type(node) is RefName:
        found = _lookup_ref(refs, node.name)
    else:
        found = _evaluate(node, value, refs, many=True)
    if name == "len" and isinstance(found, (str, Mapping)):
        return found
    if not isinstance(found, _SEQUENCES):
        wanted = "a list, string or object" if name == "len" else "a list"
        raise EvaluationError(f"{name}() needs {wanted}, but {_words(node)} is {_described(found)}")
    return found


def _mapped(name: str, number: int | float, written: str) -> int | float:
    """``abs`` or ``sqrt`` of one number."""
    if name == "abs":
        result = abs(number)
    elif number < 0:
        raise EvaluationError(f"sqrt() of a negative number: {_short(number)}")
    else:
        try:
            result = _sqrt(number)
        except OverflowError:
            raise EvaluationError(f"arithmetic overflow: {written} is beyond the float range") from None
    if _out_of_range(result):
        raise _range_error(result, written)
    return result


def _sqrt(number: int | float) -> float:
    """The correctly rounded square root: ``math.sqrt`` where the number is a float exactly
    (IEEE 754 rounds its square root correctly), else the exact integer's, rounded once."""
    if type(number) is float or -(1 << 53) <= number <= 1 << 53:
        return math.sqrt(number)
    return _sqrt_of_ratio(number, 1)


_SQRT_BITS = 2 * sys.float_info.mant_dig + 3


def _sqrt_of_ratio(n: int, m: int) -> float:
    """The square root of n/m (n, m > 0) as a float, correctly rounded: an integer square
    root of at least 2 * 53 + 3 bits, rounded to odd, then rounded once to a float (the
    method of CPython's statistics module, bugs.python.org/msg407078)."""
    q = (n.bit_length() - m.bit_length() - _SQRT_BITS) // 2
    if q >= 0:
        return float(_isqrt_to_odd(n, m << 2 * q) << q)
    return _isqrt_to_odd(n << -2 * q, m) / (1 << -q)


def _isqrt_to_odd(n: int, m: int) -> int:
    root = math.isqrt(n // m)
    return root | (root * root * m != n)


def _fraction_p(p: int | float) -> Fraction:
    """quantile's p, exactly: an integer as it is, a float as the decimal it is written as
    (its shortest repr: 0.9 is 9/10), which must lie in [0, 1]."""
    if not 0 <= p <= 1:
        raise EvaluationError(f"quantile() needs p in [0, 1], but p is {_short(p)}")
    return Fraction(p) if type(p) is int else Fraction(repr(p))


def _rounded(exact: Fraction, integers: bool) -> int | float:
    """An exact statistic as a number: an integer if the items were integers and it is one,
    else the float nearest to it (float(Fraction) rounds correctly)."""
    if integers and exact.denominator == 1:
        return exact.numerator
    return float(exact)


def _quantile(numbers: list, p: Fraction) -> int | float:
    """Hyndman & Fan's method 7 (numpy's default), exactly: for the sorted items x and
    h = (n - 1) p, x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h])."""
    ordered = sorted(numbers)
    h = (len(ordered) - 1) * p
    low = math.floor(h)
    fraction = h - low
    if fraction == 0:
        return ordered[low]
    below, above = Fraction(ordered[low]), Fraction(ordered[low + 1])
    return _rounded(below + fraction * (above - below), all(type(x) is int for x in ordered))


def _sum(numbers: list, _) -> int | float:
    total = 0
    for number in numbers:   # plain left-to-right addition; Python 3.12's sum() compensates and would differ
        total = total + number
    return total


_REDUCTIONS = {
    "max": lambda numbers, _: max(numbers),
    "mean": lambda numbers, _: statistics.mean(numbers),
    "median": lambda numbers, _: _quantile(numbers, Fraction(1, 2)),
    "min": lambda numbers, _: min(numbers),
    "pstdev": lambda numbers, _: statistics.pstdev(numbers),
    "quantile": _quantile,
    "stdev": lambda numbers, _: statistics.stdev(numbers),
    "sum": _sum,
}


# ---------------------------------------------------------------- evaluation: conditions

def _is_nan(number: int | float) -> bool:
    return isinstance(number, float) and math.isnan(number)


def _compare(symbol: str, left: int | float, right: int | float, rel_tol: float, abs_tol: float) -> bool:
    if _is_nan(left) or _is_nan(right):
        raise EvaluationError(f"NaN is not comparable: {_short(left)} {symbol} {_short(right)}")
    if symbol in _ORDERING:
        return _ORDERING[symbol](left, right)
    if rel_tol or abs_tol:
        equal = math.isclose(left, right, rel_tol=rel_tol, abs_tol=abs_tol)
    else:
        equal = left == right
    return equal if symbol == "==" else not equal


def _holds(node: Truth, value: object, refs: Mapping[str, object], tolerances: tuple,
           shown: list | None) -> bool:
    """Whether the condition holds, short-circuiting ``and``/``or`` as Python does; with
    ``shown``, the parts evaluated (values in place of the comparisons) appended to it."""
    kind = type(node)
    if kind is Comparison:
        left, right = _evaluate(node.left, value, refs), _evaluate(node.right, value, refs)
        if shown is not None:
            shown.append(f"{left!r} {node.operator} {right!r}")
        return _compare(node.operator, left, right, *tolerances)
    if kind is Not:
        if shown is not None:
            shown.append("not (")
        ok = not _holds(node.operand, value, refs, tolerances, shown)
        if shown is not None:
            shown.append(")")
        return ok
    deciding = node.operator == "or"          # the value that ends the evaluation early
    for index, operand in enumerate(node.operands):
        grouped = shown is not None and type(operand) is Logic
        if shown is not None:
            shown.append((f" {node.operator} " if index else "") + ("(" if grouped else ""))
        ok = _holds(operand, value, refs, tolerances, shown)
        if grouped:
            shown.append(")")
        if ok is deciding:
            if shown is not None and index < len(node.operands) - 1:
                shown.append(f" {node.operator} …")
            return ok
    return not deciding


@dataclass(frozen=True)
class Formula:
    """A compiled formula; build it with compile_formula()."""
    source: str
    fields: tuple[str, ...]     # every field path referenced, as written, in first-use order
    names: tuple[str, ...]      # every @name referenced, without the "@"
    _root: Node | Truth = field(repr=False)

    @property
    def operator(self) -> str | None:
        """The outermost comparison operator or word (``and``, ``or``, ``not``), or None if
        the formula just computes a number."""
        root = self._root
        if isinstance(root, (Comparison, Logic)):
            return root.operator
        return "not" if isinstance(root, Not) else None

    def holds(self, value: object, refs: Mapping[str, object], rel_tol: float,
              abs_tol: float) -> bool:
        """Whether the condition holds (``evaluate``'s ``ok``, without its results or its
        words), raising EvaluationError where it cannot be computed: the formula kind's
        inline pass test (engine/kinds.py), which takes a raise for "not known". Only for
        a formula that is a condition (``is_condition``)."""
        return _holds(self._root, value, refs, (rel_tol, abs_tol), None)

    @property
    def is_condition(self) -> bool:
        """True when the formula is a comparison or joins comparisons (and/or/not), False
        when it computes a number."""
        return isinstance(self._root, _TRUTHS)

    def evaluate(self, value: object, refs: Mapping[str, object] | None = None, *,
                 rel_tol: float = 0.0, abs_tol: float = 0.0) -> int | float | ComparisonResult | ConditionResult:
        """Return the number, a ComparisonResult when the formula is one comparison, or a
        ConditionResult when it joins comparisons with and/or/not."""
        if rel_tol < 0 or abs_tol < 0:
            raise ValueError("rel_tol and abs_tol must not be negative")
        refs = {} if refs is None else refs
        root = self._root
        try:
            if type(root) is Comparison:
                left, right = _evaluate(root.left, value, refs), _evaluate(root.right, value, refs)
                ok = _compare(root.operator, left, right, rel_tol, abs_tol)
                return ComparisonResult(ok, left, right, root.operator)
            if isinstance(root, _TRUTHS):
                if _holds(root, value, refs, (rel_tol, abs_tol), None):
                    return ConditionResult(True, self.operator, self.source)
                shown: list[str] = []
                _holds(root, value, refs, (rel_tol, abs_tol), shown)
                return ConditionResult(False, self.operator, self.source, "".join(shown))
            return _evaluate(root, value, refs)
        except EvaluationError as error:
            raise EvaluationError(f"{error} [formula: {self.source}]") from None
        except OverflowError as error:   # e.g. a huge int divided into a float
            raise EvaluationError(f"arithmetic overflow: {error} [formula: {self.source}]") from None


def compile_formula(source: str) -> Formula:
    """Parse source once; raises FormulaError (with column and caret) if it is invalid."""
    if not isinstance(source, str):
        raise FormulaError(f"a formula must be a string, not {type(source).__name__}", repr(source))
    if len(source) > MAX_FORMULA_LENGTH:
        raise FormulaError(f"formula is {len(source)} characters long; the limit is {MAX_FORMULA_LENGTH}", source)
    if not source.strip():
        raise FormulaError("formula is empty", source, 1)
    parser = _Parser(source)
    root = parser.parse_formula()
    return Formula(source, tuple(parser.fields), tuple(parser.names), root)


def divisors(formula: Formula) -> tuple[str, ...]:
    """What ``formula`` divides by: the right operand of every ``/``, as written (a field as
    its path: ``b.c`` of ``a * 1e9 / b.c``; anything else as the formula writes it, e.g.
    ``(b - c)``), in the order written, each once. A spec reads a divisor from its formula
    (``${NAME|divisor}``, compiler/tokens.py) instead of naming it a second time."""
    found: dict[str, None] = {}
    _collect_divisors(formula._root, found)
    return tuple(found)


def _collect_divisors(node: Node | Truth, found: dict) -> None:
    kind = type(node)
    if kind is OperatorChain:
        _collect_divisors(node.first, found)
        for symbol, operand in node.rest:
            if symbol == "/":
                found[_grouped(operand)] = None
            _collect_divisors(operand, found)
    elif kind is FunctionCall:
        for argument in node.arguments:
            _collect_divisors(argument, found)
    elif kind is Negation or kind is Not:
        _collect_divisors(node.operand, found)
    elif kind is Comparison:
        _collect_divisors(node.left, found)
        _collect_divisors(node.right, found)
    elif kind is Logic:
        for operand in node.operands:
            _collect_divisors(operand, found)
