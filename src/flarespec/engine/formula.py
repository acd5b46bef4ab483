"""Safe arithmetic formulas for rule assertions.

A formula is compiled once (at spec load) into a small tree of frozen dataclasses
and evaluated many times. It is parsed by hand -- never Python ``eval`` or ``ast`` --
so it can only do what this grammar allows::

    formula := expr ( COMPARE expr )?          at most one comparison, no chaining
    COMPARE := "==" | "!=" | "<" | "<=" | ">" | ">="
    expr    := term ( ("+" | "-") term )*
    term    := unary ( ("*" | "/") unary )*
    unary   := "-" unary | primary
    primary := NUMBER | FIELD | "@" NAME | FUNC "(" ( FIELD | "@" NAME ) ")" | "(" expr ")"
    FUNC    := len | sum | count | min | max

Rules worth knowing when writing specs:

* NUMBER is a JSON number (``12``, ``0.5``, ``1e9``); ``12`` stays an int, anything
  with a fraction or exponent is a float, exactly as ``json.loads`` returns it.
* FIELD is ``$`` (the current value) or a name, followed by ``.segment`` parts that
  walk dicts and lists: ``a.b.0.c``, ``$.0``. An all-digit segment indexes a list
  (or looks up that key in a dict). ``*`` fans out over a list and is allowed only
  inside a function argument: ``sum(events.*.n)``, ``count(events.*.token_ids.*)``.
* Names may contain hyphens *between* name characters, so ``max-tokens`` and also
  ``n-1`` are single field names. Write subtraction with spaces: ``a - b``.
* Names starting with ``__`` are rejected, so the formula cannot even look like
  Python attribute tricks.
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
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from flarespec.engine.report import shown

MAX_FORMULA_LENGTH = 2000
MAX_NESTING_DEPTH = 50
FUNCTIONS = ("count", "len", "max", "min", "sum")


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
    argument: FieldPath | RefName


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


Node = NumberLiteral | FieldPath | RefName | FunctionCall | Negation | OperatorChain


@dataclass(frozen=True)
class ComparisonResult:
    ok: bool
    left: int | float
    right: int | float
    operator: str


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
""", re.VERBOSE)
_DUNDER = re.compile(r"(?<![A-Za-z0-9_-])__")  # "__" at the start of a name or segment


@dataclass(frozen=True)
class _Token:
    kind: str        # number, field, ref, compare, operator, paren, end
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
        tokens.append(_Token(kind, text, column))
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

    def error(self, reason: str, token: _Token) -> FormulaError:
        return FormulaError(reason, self.source, token.column)

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

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

    def parse_formula(self) -> Node | Comparison:
        root = self.parse_expression()
        if self.peek().kind == "compare":
            symbol = self.advance().text
            root = Comparison(symbol, root, self.parse_expression())
            if self.peek().kind == "compare":
                raise self.error("a formula holds at most one comparison (no chaining)", self.peek())
        if self.peek().kind != "end":
            raise self.error(f"expected an operator or the end of the formula, found {_describe(self.peek())}",
                             self.peek())
        return root

    def parse_chain(self, symbols: str, parse_operand) -> Node:
        first, rest = parse_operand(), []
        while self.peek().kind == "operator" and self.peek().text in symbols:
            symbol = self.advance().text
            rest.append((symbol, parse_operand()))
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
                return Negation(self.parse_unary())
        return self.parse_primary()

    def parse_primary(self) -> Node:
        token = self.advance()
        if token.kind == "number":
            is_float = any(marker in token.text for marker in ".eE")
            return NumberLiteral(float(token.text) if is_float else int(token.text))
        if token.kind == "ref":
            return self.ref(token)
        if token.kind == "field":
            if self.peek().text == "(":
                return self.parse_call(token)
            if "*" in token.text.split("."):
                raise FormulaError("wildcard '*' is only allowed inside " + "/".join(FUNCTIONS) + "()",
                                   self.source, token.column + token.text.index("*"))
            return self.field_path(token)
        if token.text == "(":
            with self.nested(token):
                inner = self.parse_expression()
            self.expect(")")
            return inner
        raise self.error(f"expected a number, field, @name, function or '(', found {_describe(token)}", token)

    def parse_call(self, name_token: _Token) -> FunctionCall:
        function = name_token.text
        if function not in FUNCTIONS:
            raise self.error(f"unknown function {function!r}; allowed: {', '.join(FUNCTIONS)}", name_token)
        self.expect("(")
        token = self.advance()
        if token.kind == "field":
            argument = self.field_path(token)
        elif token.kind == "ref":
            argument = self.ref(token)
        else:
            raise self.error(f"{function}() takes a field path or @name, found {_describe(token)}", token)
        self.expect(")")
        return FunctionCall(function, argument)

    def field_path(self, token: _Token) -> FieldPath:
        self.fields[token.text] = None
        parts = token.text.split(".")
        return FieldPath(token.text, tuple(parts[1:] if parts[0] == "$" else parts))

    def ref(self, token: _Token) -> RefName:
        self.names[token.text[1:]] = None
        return RefName(token.text[1:])


# ---------------------------------------------------------------- evaluation

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


def _where(walked: str) -> str:
    return repr(walked) if walked else "the current value"


def _step(current: object, segment: str, walked: str, path: FieldPath) -> object:
    if isinstance(current, Mapping):
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


def _resolve(root: object, path: FieldPath) -> object:
    """Follow path from root; a '*' fans out over a list and the results are flattened,
    so a wildcard path yields the list of everything it reached. The values alone are
    walked first (an object's member by its name, a list's items for '*'); any other step
    (an index, a YAML integer key, a missing member: a failure) is left to the walk that
    also spells the places walked, for its message (``_resolve_worded``), from the root."""
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
                if not (isinstance(current, Mapping) and segment in current):
                    return _resolve_worded(root, path)
                following.append(current[segment])
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


def _call(function: str, argument: object, description: str) -> int | float:
    if function == "len":
        if not isinstance(argument, (*_SEQUENCES, str, Mapping)):
            raise EvaluationError(f"len() needs a list, string or object, but {description} is "
                                  f"{_described(argument)}")
        return len(argument)
    if not isinstance(argument, _SEQUENCES):
        raise EvaluationError(f"{function}() needs a list, but {description} is "
                              f"{_described(argument)}")
    if function == "count":
        return sum(len(item) if isinstance(item, _SEQUENCES) else 1 for item in argument)
    numbers = [_as_number(item, f"{description} item {index}") for index, item in enumerate(argument)]
    if function == "sum":
        total = 0
        for number in numbers:   # plain left-to-right addition; Python 3.12's sum() compensates and would differ
            total = total + number
        return total
    if not numbers:
        raise EvaluationError(f"{function}() of an empty list ({description})")
    for index, number in enumerate(numbers):   # builtin min/max results with NaN depend on element order
        if _is_nan(number):
            raise EvaluationError(f"{function}() of a list holding NaN ({description} item {index})")
    return min(numbers) if function == "min" else max(numbers)


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


def _evaluate(node: Node, value: object, refs: Mapping[str, object]) -> int | float:
    if isinstance(node, NumberLiteral):
        return node.value
    if isinstance(node, FieldPath):
        return _as_number(_resolve(value, node), f"field {node.path!r}")
    if isinstance(node, RefName):
        return _as_number(_lookup_ref(refs, node.name), f"@{node.name}")
    if isinstance(node, Negation):
        return -_evaluate(node.operand, value, refs)
    if isinstance(node, FunctionCall):
        argument = node.argument
        if isinstance(argument, FieldPath):
            described, items = f"field {argument.path!r}", _resolve(value, argument)
        else:
            described, items = f"@{argument.name}", _lookup_ref(refs, argument.name)
        result = _call(node.function, items, described)
        if _out_of_range(result):
            raise _range_error(result, f"{node.function}() of {described}")
        return result
    if isinstance(node, OperatorChain):
        result = _evaluate(node.first, value, refs)
        for symbol, operand in node.rest:
            right = _evaluate(operand, value, refs)
            if symbol == "/" and right == 0:
                raise EvaluationError(f"division by zero ({_short(result)} / {_short(right)})")
            left, result = result, _ARITHMETIC[symbol](result, right)
            if _out_of_range(result):
                raise _range_error(result, f"{_short(left)} {symbol} {_short(right)}")
        return result
    raise TypeError(f"not a formula node: {node!r}")


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


@dataclass(frozen=True)
class Formula:
    """A compiled formula; build it with compile_formula()."""
    source: str
    fields: tuple[str, ...]     # every field path referenced, as written, in first-use order
    names: tuple[str, ...]      # every @name referenced, without the "@"
    _root: Node | Comparison = field(repr=False)

    @property
    def operator(self) -> str | None:
        """The comparison operator, or None if the formula just computes a number."""
        return self._root.operator if isinstance(self._root, Comparison) else None

    def evaluate(self, value: object, refs: Mapping[str, object] | None = None, *,
                 rel_tol: float = 0.0, abs_tol: float = 0.0) -> int | float | ComparisonResult:
        """Return the number, or a ComparisonResult when the formula has a comparison."""
        if rel_tol < 0 or abs_tol < 0:
            raise ValueError("rel_tol and abs_tol must not be negative")
        refs = {} if refs is None else refs
        try:
            if not isinstance(self._root, Comparison):
                return _evaluate(self._root, value, refs)
            left = _evaluate(self._root.left, value, refs)
            right = _evaluate(self._root.right, value, refs)
            ok = _compare(self._root.operator, left, right, rel_tol, abs_tol)
            return ComparisonResult(ok, left, right, self._root.operator)
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
