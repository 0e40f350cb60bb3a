"""Check a model's tool-call arguments against the tool's parameter schema.

Models often send ``"6"`` for an integer or a JSON-encoded list for an array. Those
are converted when nothing can be lost: ``"6"`` → 6, ``6`` → 6.0 for a number, ``6.0``
→ 6 for an integer, ``"true"`` → True, ``7`` → ``"7"`` for a string, a JSON string
holding an array or object → that array or object. ``6.5`` never becomes an integer,
and ``1`` never becomes a boolean. A ``null`` for an optional argument that does not
admit null means "use the default", so it is dropped. Arguments the schema does not
declare are rejected unless it sets ``additionalProperties``.

Regular expressions in a schema (``pattern``, ``patternProperties``, ``format: regex``)
run on RE2, which matches in linear time: a pattern like ``^(a+)+$`` cannot pin a CPU
(Python's ``re`` backtracks exponentially on it and holds the GIL while it does). A
pattern RE2 cannot compile (look-around, back-references) is refused when the tool is
saved (``check_patterns``) and fails the call if an older tool still holds one.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from typing import Any

import re2
from jsonschema import Draft202012Validator, FormatChecker, validators
from jsonschema.exceptions import SchemaError, ValidationError, best_match

_INTEGER = re.compile(r"^[+-]?\d{1,300}$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_MAX_EXACT_FLOAT_INT = 2**53


class ArgumentError(ValueError):
    """The call's arguments do not fit the tool's schema; the message names the argument."""


class UnsupportedPattern(ValueError):
    """A schema holds a regular expression RE2 cannot run; the message names where."""


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, _RE2_OPTIONS)


def _search(pattern: str, text: str) -> bool:
    """``re.search`` in linear time; a pattern RE2 refuses raises ``UnsupportedPattern``."""
    try:
        compiled = _compiled(pattern)
    except re2.error as exc:
        raise UnsupportedPattern(f"the pattern {pattern!r} is not supported ({_re2_reason(exc)})") from exc
    return compiled.search(text) is not None


def _re2_reason(exc: Exception) -> str:
    reason = exc.args[0] if exc.args else exc
    return reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key for key in instance if key not in properties and not any(_search(pattern, key) for pattern in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        unexpected = ", ".join(repr(extra) for extra in sorted(extras, key=str))
        yield ValidationError(f"Additional properties are not allowed ({unexpected} unexpected)")


def _regex_format(instance: object) -> bool:
    if isinstance(instance, str):
        try:
            _compiled(instance)
        except re2.error:
            return False
    return True


_FORMATS = FormatChecker()
for _name, _check in Draft202012Validator.FORMAT_CHECKER.checkers.items():
    _FORMATS.checkers[_name] = _check
_FORMATS.checkers["regex"] = (_regex_format, ())

#: Draft 2020-12 with every regular expression on RE2.
LinearTimeValidator = validators.extend(  # type: ignore[no-untyped-call]  # untyped in types-jsonschema
    Draft202012Validator,
    {"pattern": _pattern, "patternProperties": _pattern_properties, "additionalProperties": _additional_properties},
)
LinearTimeValidator.FORMAT_CHECKER = _FORMATS


def check_parameter_schema(schema: dict[str, Any]) -> None:
    """A tool's parameter schema is valid Draft 2020-12 and RE2 can run its patterns.

    Raises ``SchemaError`` or ``UnsupportedPattern``.
    """
    check_patterns(schema)
    LinearTimeValidator.check_schema(schema, format_checker=_FORMATS)


def check_patterns(schema: Any, where: str = "parameters") -> None:
    """Refuse a schema whose regular expressions RE2 cannot run; ``UnsupportedPattern`` names the spot.

    ``unevaluatedProperties`` next to ``patternProperties`` is refused too: jsonschema
    evaluates that pair with Python's backtracking ``re``.
    """
    if _has_keyword(schema, "patternProperties") and _has_keyword(schema, "unevaluatedProperties"):
        raise UnsupportedPattern(f"{where}: unevaluatedProperties cannot be combined with patternProperties")
    for path, pattern in _patterns(schema, where):
        try:
            _compiled(pattern)
        except (re2.error, TypeError) as exc:
            raise UnsupportedPattern(
                f"{path}: the regular expression {pattern!r} is not supported ({_re2_reason(exc)}); "
                "use RE2 syntax (no look-around or back-references)"
            ) from exc


def _patterns(schema: Any, path: str) -> Any:
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _patterns(item, f"{path}[{index}]")
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        here = f"{path}.{key}"
        if key == "pattern" and isinstance(value, str):
            yield here, value
        elif key == "patternProperties" and isinstance(value, dict):
            for pattern, subschema in value.items():
                yield here, pattern
                yield from _patterns(subschema, f"{here}[{pattern!r}]")
            continue
        if key not in {"enum", "const", "default", "examples"}:
            yield from _patterns(value, here)


def _has_keyword(schema: Any, keyword: str) -> bool:
    if isinstance(schema, list):
        return any(_has_keyword(item, keyword) for item in schema)
    if isinstance(schema, dict):
        return keyword in schema or any(_has_keyword(value, keyword) for value in schema.values())
    return False


def validate_arguments(tool_name: str, parameters: dict[str, Any], raw_arguments: str) -> dict[str, Any]:
    """Parse ``raw_arguments`` (JSON text), coerce losslessly and validate; raises ``ArgumentError``."""
    arguments = _parse(tool_name, raw_arguments)
    schema: dict[str, Any] = dict(parameters) if parameters else {"type": "object", "properties": {}}
    schema.setdefault("additionalProperties", False)
    try:
        check_parameter_schema(schema)
    except SchemaError as exc:
        raise ArgumentError(f"Tool {tool_name!r} has an invalid parameter schema: {exc.message}") from exc
    except UnsupportedPattern as exc:
        raise ArgumentError(f"Tool {tool_name!r} has an unsupported parameter schema: {exc}") from exc

    arguments = _coerce_arguments(arguments, schema)
    error = best_match(LinearTimeValidator(schema).iter_errors(arguments))
    if error is not None:
        raise ArgumentError(f"Invalid arguments for tool {tool_name!r}: {_describe(error, schema)}")
    return arguments


def _parse(tool_name: str, raw_arguments: str) -> dict[str, Any]:
    if not raw_arguments or not raw_arguments.strip():
        return {}
    try:
        arguments = json.loads(raw_arguments)
    except json.JSONDecodeError as exc:
        raise ArgumentError(f"Invalid arguments for tool {tool_name!r}: not valid JSON ({exc.msg})") from exc
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise ArgumentError(
            f"Invalid arguments for tool {tool_name!r}: expected a JSON object of named arguments, "
            f"got {type(arguments).__name__}"
        )
    return arguments


def _coerce_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    result: dict[str, Any] = {}
    for name, value in arguments.items():
        property_schema = properties.get(name)
        if property_schema is None:
            result[name] = value
            continue
        if value is None and name not in required and not _is_valid(None, property_schema):
            continue
        result[name] = coerce(value, property_schema)
    return result


def coerce(value: Any, schema: Any) -> Any:
    """``value`` converted to fit ``schema`` where that loses nothing; otherwise ``value`` unchanged."""
    if not isinstance(schema, dict):
        return value
    if _is_valid(value, schema):
        return _refine(value, schema)
    for branch in [*schema.get("anyOf", []), *schema.get("oneOf", [])]:
        candidate = coerce(value, branch)
        if _is_valid(candidate, branch):
            return candidate
    types = schema.get("type")
    for json_type in types if isinstance(types, list) else [types]:
        candidate = _coerce_to(value, json_type, schema)
        if candidate is not _NO:
            return candidate
    return value


def _refine(value: Any, schema: dict[str, Any]) -> Any:
    """A valid value with numbers made the Python type the schema names (6 → 6.0, 6.0 → 6)."""
    types = schema.get("type")
    types = set(types) if isinstance(types, list) else {types}
    if "integer" in types and isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_EXACT_FLOAT_INT:
        return int(value)
    if "number" in types and "integer" not in types and _is_exact_int(value):
        return float(value)
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        return [_refine(item, items) for item in value]
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    if isinstance(value, dict) and (properties or isinstance(extra, dict)):
        fallback = extra if isinstance(extra, dict) else {}
        return {key: _refine(item, properties.get(key, fallback)) for key, item in value.items()}
    return value


def _is_exact_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _MAX_EXACT_FLOAT_INT


class _Missing:
    pass


_NO: Any = _Missing()


def _coerce_to(value: Any, json_type: Any, schema: dict[str, Any]) -> Any:
    if json_type == "integer":
        if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_EXACT_FLOAT_INT:
            return int(value)
        if isinstance(value, str) and _INTEGER.match(value.strip()):
            return int(value.strip())
    elif json_type == "number":
        if isinstance(value, str) and _NUMBER.match(value.strip()):
            number = float(value.strip())
            return number if math.isfinite(number) else _NO
    elif json_type == "boolean":
        if value in ("true", "false"):
            return value == "true"
    elif json_type == "string":
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    elif json_type == "array":
        decoded = _decode_json(value, list)
        if isinstance(decoded, list):
            return [coerce(item, schema.get("items", {})) for item in decoded]
    elif json_type == "object":
        decoded = _decode_json(value, dict)
        if isinstance(decoded, dict):
            properties = schema.get("properties") or {}
            extra = schema.get("additionalProperties", {})
            return {key: coerce(item, properties.get(key, extra)) for key, item in decoded.items()}
    return _NO


def _decode_json(value: Any, expected: type) -> Any:
    if isinstance(value, expected):
        return value
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            return _NO
        if isinstance(decoded, expected):
            return decoded
    return _NO


def _is_valid(value: Any, schema: Any) -> bool:
    return isinstance(schema, dict) and LinearTimeValidator(schema).is_valid(value)


def _describe(error: ValidationError, schema: dict[str, Any]) -> str:
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path).lstrip(".")
    # The stubs allow ``Unset`` for both; an error from a validator run always has them.
    instance: Any = error.instance
    validator_value: Any = error.validator_value
    if error.validator == "required":
        missing = [name for name in validator_value if name not in instance]
        return f"missing required argument {missing[0]!r}" if missing else error.message
    if error.validator == "additionalProperties" and not path:
        expected = ", ".join(repr(name) for name in (schema.get("properties") or {})) or "none"
        unexpected = [name for name in instance if name not in (schema.get("properties") or {})]
        return f"unexpected argument {unexpected[0]!r} (expected arguments: {expected})"
    if error.validator == "type":
        wanted = error.validator_value
        wanted_text = " or ".join(wanted) if isinstance(wanted, list) else wanted
        return f"argument {path!r} must be of type {wanted_text}, got {json.dumps(error.instance)[:200]}"
    if error.validator == "enum":
        allowed = ", ".join(json.dumps(option) for option in validator_value)
        return f"argument {path!r} must be one of {allowed}, got {json.dumps(error.instance)[:200]}"
    return f"argument {path!r}: {error.message[:300]}" if path else error.message[:300]
