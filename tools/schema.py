"""Derive a tool's JSON schema from Python source, without importing or running it.

The source must define exactly one public top-level function (private ``_helpers``,
classes, imports and constants may sit beside it). Its name becomes the tool name, the
Google-style docstring gives the description (the text before ``Args:``/``Returns:``)
and the per-argument descriptions, and the signature gives types and ``required``.

Type mapping (annotations are read as syntax, never evaluated):

- ``str`` → string, ``int`` → integer, ``float`` → number, ``bool`` → boolean
- ``list[X]`` / ``List[X]`` / ``tuple[X, ...]`` → array of X; bare ``list`` → array
- ``dict[str, X]`` / ``Dict[str, X]`` → object with X values; bare ``dict`` → object
- ``Literal["a", "b"]`` → enum; ``Any`` → no constraint; ``Annotated[X, "text"]`` → X
  (the text is the description when the docstring has none)
- ``Optional[X]`` / ``X | None``: with a default, just X (Letta's shape; a ``null``
  argument then means "use the default"); without a default, X or null
- ``A | B`` / ``Union[A, B]`` → ``anyOf``
- no annotation: the docstring's ``name (type):`` when it maps to one of the above,
  otherwise string (models pass text, and the function receives ``str``)

Anything else (classes, ``set``, ``Callable``…) is rejected, as are ``*args``,
``**kwargs``, positional-only parameters and Letta's injected ``agent_state``.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import docstring_parser

SUPPORTED_TYPES_HINT = (
    "use str, int, float, bool, list[...], dict[str, ...], Literal[...], Any, Optional[...] or a union of these"
)

# OpenAI's and Anthropic's rule for function names.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SCALARS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
_LISTS = {"list", "List", "Sequence", "tuple", "Tuple"}
_DICTS = {"dict", "Dict", "Mapping"}


class ToolSourceError(ValueError):
    """The source cannot become a tool; ``line`` is the 1-based line at fault, when known."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(f"{message} (line {line})" if line else message)


def derive_tool_schema(source_code: str, *, function_name: str | None = None) -> dict[str, Any]:
    """Letta's ``json_schema`` for the one public function in ``source_code``.

    ``function_name`` picks the function when the source defines several public ones.
    Raises ``ToolSourceError`` naming the problem and its line.
    """
    function = _find_function(_parse(source_code), function_name)
    docstring = docstring_parser.parse(ast.get_docstring(function) or "", style=docstring_parser.DocstringStyle.GOOGLE)
    doc_params = {param.arg_name: param for param in docstring.params}

    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, default in _parameters(function):
        doc_param = doc_params.get(arg.arg)
        schema, annotated_description = _parameter_schema(arg, doc_param, has_default=default is not None)
        description = (doc_param.description if doc_param else None) or annotated_description
        if description:
            schema["description"] = description
        properties[arg.arg] = schema
        if default is None:
            required.append(arg.arg)

    return {
        "name": function.name,
        "description": _description(docstring),
        "parameters": {"type": "object", "properties": properties, "required": required},
    }


def _parse(source_code: str) -> ast.Module:
    if not source_code.strip():
        raise ToolSourceError("the source code is empty; define one public function")
    try:
        return ast.parse(source_code)
    except SyntaxError as exc:
        raise ToolSourceError(f"syntax error: {exc.msg}", line=exc.lineno) from exc
    except ValueError as exc:  # null bytes
        raise ToolSourceError(f"the source code cannot be parsed: {exc}") from exc


def _find_function(module: ast.Module, function_name: str | None) -> ast.FunctionDef | ast.AsyncFunctionDef:
    candidates = [
        node
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_")
    ]
    if function_name is not None:
        candidates = [node for node in candidates if node.name == function_name]
        if not candidates:
            raise ToolSourceError(f"no public top-level function named {function_name!r}")
    if not candidates:
        raise ToolSourceError(
            "no public function found: define one top-level function whose name does not start with '_'"
        )
    if len(candidates) > 1:
        listed = ", ".join(f"{node.name!r} (line {node.lineno})" for node in candidates)
        raise ToolSourceError(
            f"several public functions could be the tool: {listed}; keep one and prefix helpers with '_'",
            line=candidates[1].lineno,
        )
    function = candidates[0]
    if not TOOL_NAME.match(function.name):
        raise ToolSourceError(
            f"the function name {function.name!r} cannot be a tool name: model providers accept "
            "1 to 64 ASCII letters, digits, '_' or '-'",
            line=function.lineno,
        )
    return function


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr | None]]:
    """(parameter, default) pairs in signature order; rejects what keyword calls cannot fill."""
    args = function.args
    if args.posonlyargs:
        arg = args.posonlyargs[0]
        raise ToolSourceError(
            f"parameter {arg.arg!r} is positional-only; tools are called with keyword arguments", line=arg.lineno
        )
    if args.vararg:
        raise ToolSourceError(f"*{args.vararg.arg} is not supported; declare each parameter", line=args.vararg.lineno)
    if args.kwarg:
        raise ToolSourceError(f"**{args.kwarg.arg} is not supported; declare each parameter", line=args.kwarg.lineno)

    defaults: list[ast.expr | None] = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(args.args, defaults, strict=True)) + list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    for arg, _ in pairs:
        if arg.arg == "agent_state":
            raise ToolSourceError(
                "tools that take Letta's injected 'agent_state' are not supported on this server", line=arg.lineno
            )
    return pairs


def _parameter_schema(
    arg: ast.arg, doc_param: docstring_parser.DocstringParam | None, *, has_default: bool
) -> tuple[dict[str, Any], str | None]:
    """The parameter's schema and, for ``Annotated[X, "text"]``, that text."""
    if arg.annotation is not None:
        return _Annotation(arg.arg, has_default=has_default).schema(arg.annotation)
    type_name = doc_param.type_name if doc_param else None
    if type_name:
        type_name = type_name.removesuffix(", optional").strip()
        try:
            node = ast.parse(type_name, mode="eval").body
            return _Annotation(arg.arg, has_default=has_default).schema(node)
        except (SyntaxError, ToolSourceError):
            pass  # an informal docstring type ("list of str") falls back to string
    return {"type": "string"}, None


class _Annotation:
    """Maps one parameter's annotation syntax to JSON schema."""

    def __init__(self, parameter: str, *, has_default: bool) -> None:
        self.parameter = parameter
        self.has_default = has_default

    def schema(self, node: ast.expr) -> tuple[dict[str, Any], str | None]:
        base, args = _split(node)
        if base == "Annotated" and args:
            text = next(
                (arg.value for arg in args[1:] if isinstance(arg, ast.Constant) and isinstance(arg.value, str)), None
            )
            inner, _ = self.schema(args[0])
            return inner, text
        members = _union_members(node)
        if members is not None:
            return self._union(node, members), None
        return self._single(node), None

    def _union(self, node: ast.expr, members: list[ast.expr]) -> dict[str, Any]:
        nullable = any(_is_none(member) for member in members)
        schemas = [self._single(member) for member in members if not _is_none(member)]
        if not schemas:
            raise self._unsupported(node)
        schema = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
        if not nullable or self.has_default:
            return schema
        if isinstance(schema.get("type"), str) and "enum" not in schema:
            return {**schema, "type": [schema["type"], "null"]}
        return {"anyOf": [*schema.get("anyOf", [schema]), {"type": "null"}]}

    def _single(self, node: ast.expr) -> dict[str, Any]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                raise self._unsupported(node) from None
            return self._nested(parsed)
        base, args = _split(node)
        if base in _SCALARS and not args:
            return {"type": _SCALARS[base]}
        if base == "Any" and not args:
            return {}
        if base in _LISTS:
            return self._array(node, base, args)
        if base in _DICTS:
            return self._object(node, args)
        if base == "Literal" and args:
            return self._literal(node, args)
        if base == "Annotated" and args:
            return self._single(args[0])
        if _union_members(node) is not None:
            return self._nested(node)
        raise self._unsupported(node)

    def _nested(self, node: ast.expr) -> dict[str, Any]:
        """A type inside another one: its own ``Optional`` always admits null."""
        schema, _ = _Annotation(self.parameter, has_default=False).schema(node)
        return schema

    def _array(self, node: ast.expr, base: str, args: list[ast.expr]) -> dict[str, Any]:
        if not args:
            return {"type": "array"}
        if base in {"tuple", "Tuple"}:
            if len(args) != 2 or not (isinstance(args[1], ast.Constant) and args[1].value is Ellipsis):
                raise ToolSourceError(
                    f"parameter {self.parameter!r}: only tuple[X, ...] is supported, got {ast.unparse(node)!r}",
                    line=node.lineno,
                )
        elif len(args) != 1:
            raise self._unsupported(node)
        items = self._nested(args[0])
        return {"type": "array", "items": items} if items else {"type": "array"}

    def _object(self, node: ast.expr, args: list[ast.expr]) -> dict[str, Any]:
        if not args:
            return {"type": "object"}
        if len(args) != 2 or _split(args[0]) != ("str", []):
            raise ToolSourceError(
                f"parameter {self.parameter!r}: dictionary keys must be str (JSON object keys), "
                f"got {ast.unparse(node)!r}",
                line=node.lineno,
            )
        values = self._nested(args[1])
        return {"type": "object", "additionalProperties": values} if values else {"type": "object"}

    def _literal(self, node: ast.expr, args: list[ast.expr]) -> dict[str, Any]:
        values: list[Any] = []
        for arg in args:
            if not isinstance(arg, ast.Constant) or not isinstance(arg.value, str | int | float | bool | None):
                raise ToolSourceError(
                    f"parameter {self.parameter!r}: Literal values must be constants, got {ast.unparse(arg)!r}",
                    line=arg.lineno,
                )
            values.append(arg.value)
        types = list(dict.fromkeys(_json_type(value) for value in values))
        return {"type": types[0] if len(types) == 1 else types, "enum": values}

    def _unsupported(self, node: ast.expr) -> ToolSourceError:
        return ToolSourceError(
            f"parameter {self.parameter!r} has an unsupported type annotation {ast.unparse(node)!r}; "
            f"{SUPPORTED_TYPES_HINT}",
            line=node.lineno,
        )


def _split(node: ast.expr) -> tuple[str | None, list[ast.expr]]:
    """``typing.List[int]`` → ("List", [int]); ``str`` → ("str", [])."""
    args: list[ast.expr] = []
    if isinstance(node, ast.Subscript):
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, args
    if isinstance(node, ast.Attribute):
        return node.attr, args
    return None, args


def _union_members(node: ast.expr) -> list[ast.expr] | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return [*(_union_members(node.left) or [node.left]), *(_union_members(node.right) or [node.right])]
    base, args = _split(node)
    if base == "Optional" and len(args) == 1:
        return [args[0], ast.Constant(value=None)]
    if base == "Union" and args:
        return args
    return None


def _is_none(node: ast.expr) -> bool:
    return (isinstance(node, ast.Constant) and node.value is None) or _split(node) == ("NoneType", [])


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _description(docstring: docstring_parser.Docstring) -> str:
    parts = [docstring.short_description, docstring.long_description]
    return "\n\n".join(part.strip() for part in parts if part and part.strip())
