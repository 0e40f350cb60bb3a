"""Approval conditions: a tiny language over a tool call's arguments, parsed and evaluated safely.

An agent tool whose policy is ``ask_when`` asks a person only when its condition holds for
the call's arguments. The condition is parsed once by a small recursive-descent parser into
a tree of plain tuples and evaluated by walking it: no ``eval``, no attribute access, no calls,
nothing but the arguments and literals is ever read.

Grammar (keywords are lower case; README "Approval policies" has examples)::

    condition  := or
    or         := and ("or" and)*
    and        := not ("and" not)*
    not        := "not" not | primary
    primary    := "(" or ")" | comparison
    comparison := operand [operator operand]
    operator   := "==" | "!=" | "<" | "<=" | ">" | ">=" | "startswith" | "endswith" | "contains" | "in"
    operand    := literal | path | list
    literal    := number | 'text' | "text" | true | false | null
    list       := "[" [literal ("," literal)*] "]"
    path       := name ("." (name | digits))*     # an argument, then keys of objects / indexes of lists

A comparison needs operands of one kind (numbers with numbers, text with text…); a bare operand
must be a boolean. A condition that cannot be evaluated for a call (a missing argument, a kind
mismatch) raises ``ConditionUnevaluable``: the engine then asks, so a broken rule never lets a
call through unseen.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_CONDITION_CHARS = 1000
MAX_DEPTH = 32

OPERATORS = ("==", "!=", "<=", ">=", "<", ">", "startswith", "endswith", "contains", "in")
_KEYWORDS = {"and", "or", "not", "true", "false", "null", "startswith", "endswith", "contains", "in"}
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<op>==|!=|<=|>=|<|>)
  | (?P<punct>[()\[\],.])
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    """,
    re.VERBOSE,
)
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "n": "\n", "t": "\t"}


class ConditionError(ValueError):
    """The condition is not valid in the grammar; the message says where."""


class ConditionUnevaluable(ValueError):
    """The condition cannot be decided for these arguments (missing argument, kind mismatch)."""


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    position: int


def _tokens(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise ConditionError(f"unexpected character {source[position]!r} at position {position + 1}")
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(_Token(kind, match.group(), position))
        position = match.end()
    tokens.append(_Token("end", "", len(source)))
    return tokens


def _unquote(text: str) -> str:
    body, out, index = text[1:-1], [], 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            out.append(_ESCAPES.get(body[index + 1], body[index + 1]))
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


# A parsed condition is a tree of tuples:
#   ("or" | "and", left, right), ("not", operand), ("cmp", operator, left, right),
#   ("value", literal), ("path", (segments…)), ("truth", operand).
Node = tuple[Any, ...]


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens = _tokens(source)
        self.index = 0
        self.depth = 0

    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def _is(self, kind: str, text: str | None = None) -> bool:
        token = self.current
        return token.kind == kind and (text is None or token.text == text)

    def _take(self) -> _Token:
        token = self.current
        self.index += 1
        return token

    def _expect(self, kind: str, text: str) -> None:
        if not self._is(kind, text):
            raise self._unexpected(f"expected {text!r}")
        self._take()

    def _unexpected(self, wanted: str) -> ConditionError:
        token = self.current
        found = "the end of the condition" if token.kind == "end" else repr(token.text)
        return ConditionError(f"{wanted}, found {found} at position {token.position + 1}")

    def parse(self) -> Node:
        if self._is("end"):
            raise ConditionError("the condition is empty")
        tree = self._or()
        if not self._is("end"):
            raise self._unexpected("expected 'and', 'or' or the end")
        return tree

    def _nested(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ConditionError(f"the condition nests deeper than {MAX_DEPTH} levels")

    def _or(self) -> Node:
        return self._chain("or", self._and)

    def _and(self) -> Node:
        return self._chain("and", self._not)

    def _chain(self, word: str, operand: Callable[[], Node]) -> Node:
        """``operand (word operand)*``, grouped from the left."""
        node = operand()
        while self._is("name", word):
            self._take()
            node = (word, node, operand())
        return node

    def _not(self) -> Node:
        if self._is("name", "not"):
            self._take()
            self._nested()
            node = ("not", self._not())
            self.depth -= 1
            return node
        if self._is("punct", "("):
            self._take()
            self._nested()
            node = self._or()
            self._expect("punct", ")")
            self.depth -= 1
            return node
        return self._comparison()

    def _comparison(self) -> Node:
        left = self._operand()
        token = self.current
        if token.kind == "op" or (token.kind == "name" and token.text in OPERATORS):
            self._take()
            return ("cmp", token.text, left, self._operand())
        return ("truth", left)

    def _operand(self) -> Node:
        token = self.current
        if token.kind == "number":
            self._take()
            return ("value", float(token.text) if any(c in token.text for c in ".eE") else int(token.text))
        if token.kind == "string":
            self._take()
            return ("value", _unquote(token.text))
        if token.kind == "punct" and token.text == "[":
            return ("value", self._list())
        if token.kind == "name":
            literal = {"true": True, "false": False, "null": None}
            if token.text in literal:
                self._take()
                return ("value", literal[token.text])
            if token.text in _KEYWORDS:
                raise self._unexpected("expected an argument name or a value")
            return self._path()
        raise self._unexpected("expected an argument name or a value")

    def _list(self) -> list[Any]:
        self._expect("punct", "[")
        items: list[Any] = []
        while not self._is("punct", "]"):
            if items:
                self._expect("punct", ",")
            operand = self._operand()
            if operand[0] != "value" or isinstance(operand[1], list):
                raise ConditionError("a list holds only numbers, text, true, false or null")
            items.append(operand[1])
        self._take()
        return items

    def _path(self) -> Node:
        segments = [self._take().text]
        while True:
            if self._is("number") and re.fullmatch(r"\.\d+", self.current.text):
                segments.append(self._take().text[1:])  # ``items.0`` reads ``.0`` as one token
                continue
            if not self._is("punct", "."):
                break
            self._take()
            token = self.current
            if token.kind == "name" or (token.kind == "number" and token.text.isdigit()):
                segments.append(self._take().text)
            else:
                raise self._unexpected("expected a key or an index after '.'")
        return ("path", tuple(segments))


def parse_condition(source: str) -> Node:
    """The parsed condition; raises ``ConditionError`` with a message a person can act on."""
    if len(source) > MAX_CONDITION_CHARS:
        raise ConditionError(f"the condition is longer than {MAX_CONDITION_CHARS} characters")
    return _Parser(source).parse()


def argument_names(tree: Node) -> set[str]:
    """The top-level argument names a parsed condition reads."""
    if tree[0] == "path":
        return {tree[1][0]}
    names: set[str] = set()
    for child in tree[1:]:
        if isinstance(child, tuple):
            names |= argument_names(child)
    return names


def check_condition(source: str, parameters: dict[str, Any] | None = None) -> None:
    """Refuse a condition that does not parse, or that reads an argument the tool does not declare."""
    tree = parse_condition(source)
    declared = set((parameters or {}).get("properties") or {})
    unknown = sorted(argument_names(tree) - declared) if declared else []
    if unknown:
        raise ConditionError(f"the tool has no argument {unknown[0]!r} (its arguments: {', '.join(sorted(declared))})")


def condition_holds(source: str, arguments: dict[str, Any]) -> bool:
    """Whether the condition holds for ``arguments``; raises ``ConditionError`` or ``ConditionUnevaluable``."""
    return _truth(_evaluate(parse_condition(source), arguments))


def _truth(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConditionUnevaluable(f"expected true or false, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _evaluate(node: Node, arguments: dict[str, Any]) -> Any:
    kind = node[0]
    if kind == "value":
        return node[1]
    if kind == "path":
        return _lookup(node[1], arguments)
    if kind == "truth":
        return _truth(_evaluate(node[1], arguments))
    if kind == "not":
        return not _truth(_evaluate(node[1], arguments))
    if kind == "and":
        return _truth(_evaluate(node[1], arguments)) and _truth(_evaluate(node[2], arguments))
    if kind == "or":
        return _truth(_evaluate(node[1], arguments)) or _truth(_evaluate(node[2], arguments))
    _, operator, left, right = node
    return _compare(operator, _evaluate(left, arguments), _evaluate(right, arguments))


def _lookup(segments: tuple[str, ...], arguments: dict[str, Any]) -> Any:
    value: Any = arguments
    for depth, segment in enumerate(segments):
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            raise ConditionUnevaluable(f"the call has no argument {'.'.join(segments[: depth + 1])!r}")
    return value


def _same_kind(left: Any, right: Any) -> bool:
    return _kind(left) == _kind(right)


def _compare(operator: str, left: Any, right: Any) -> bool:
    if operator in ("==", "!="):
        if left is not None and right is not None and not _same_kind(left, right):
            raise ConditionUnevaluable(f"cannot compare {_kind(left)} with {_kind(right)}")
        return (left == right) is (operator == "==")
    if operator in ("<", "<=", ">", ">="):
        if not (_same_kind(left, right) and isinstance(left, int | float | str) and not isinstance(left, bool)):
            raise ConditionUnevaluable(f"cannot order {_kind(left)} and {_kind(right)}")
        ordered: dict[str, bool] = {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}
        return ordered[operator]
    if operator in ("startswith", "endswith"):
        if not (isinstance(left, str) and isinstance(right, str)):
            raise ConditionUnevaluable(f"{operator} needs text on both sides, got {_kind(left)} and {_kind(right)}")
        return left.startswith(right) if operator == "startswith" else left.endswith(right)
    container, item = (left, right) if operator == "contains" else (right, left)
    if isinstance(container, list):
        return any(_equal(element, item) for element in container)
    if isinstance(container, str) and isinstance(item, str):
        return item in container
    raise ConditionUnevaluable(f"{operator} needs a list or text, got {_kind(container)} and {_kind(item)}")


def _equal(left: Any, right: Any) -> bool:
    return _same_kind(left, right) and left == right
