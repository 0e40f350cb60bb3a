"""Several of a run's writes sent as one statement (issue 24): each round trip to Postgres costs more
than the rows it writes.

A ``Write`` is one INSERT or UPDATE compiled by the ORM (``insert`` and ``update``: the fields'
own conversions, ``auto_now_add`` and defaults included). ``write_together`` sends a list of them
as one statement on Postgres (data-modifying CTEs, executed once each, all on the statement's
snapshot) and in one transaction elsewhere (SQLite has no writes in a ``WITH``). With
``unless_cancelled``, nothing is written when that run has been asked to stop (or has ended), and
the answer says so: the check for a cancel costs no statement of its own.

A turn sends these writes several times, always in the same few shapes, so each shape's SQL is
written once per process (``insert``, ``update_rows``, the guard): compiling them through the
ORM again on every call cost more CPU than the rest of a step's writes (issue 24). Values still
go through their fields' own conversions, as the ORM's would.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.db.models import Field
from django.db.models.sql import InsertQuery, UpdateQuery
from django.db.models.sql.compiler import SQLInsertCompiler

from agents.models import ACTIVE_RUN_STATUSES, Run

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from django.db.models import Model, QuerySet


@dataclass(frozen=True)
class Write:
    """One INSERT or UPDATE, compiled; ``rows`` (an INSERT's) make its guarded form."""

    sql: str
    params: tuple[Any, ...]
    insert_head: str = ""  # ``INSERT INTO "t" ("a", "b")``
    rows: tuple[tuple[str, ...], ...] = ()  # an INSERT's placeholders, cast to their columns' types


def insert(objs: Sequence[Model]) -> Write:
    """The INSERT of ``objs`` (instances of one model), as ``bulk_create`` would send it; they count as saved."""
    model = type(objs[0])
    shape = _insert_shape(model)
    if shape is None:
        return _compiled_insert(objs)
    fields, head, types = shape
    # ``SQLInsertCompiler``'s values: each field's ``pre_save`` (``auto_now_add``, defaults) then ``get_db_prep_save``.
    params = tuple(f.get_db_prep_save(f.pre_save(obj, add=True), connection) for obj in objs for f in fields)
    row = ", ".join("%s" for _ in fields)
    cast = tuple(f"%s::{kind}" for kind in types)
    for obj in objs:
        obj._state.adding, obj._state.db = False, connection.alias
    values = ", ".join(f"({row})" for _ in objs)
    return Write(sql=f"{head} VALUES {values}", params=params, insert_head=head, rows=(cast,) * len(objs))


@functools.cache
def _insert_shape(model: type[Model]) -> tuple[tuple[Field[Any, Any], ...], str, tuple[str, ...]] | None:
    """A model's inserted fields, its INSERT's head and each value's cast type; ``None`` when a field
    writes its own placeholder (then the ORM compiles each INSERT)."""
    fields = tuple(f for f in model._meta.local_concrete_fields if not f.generated)
    if any(hasattr(f, "get_placeholder") for f in fields):
        return None
    quote = connection.ops.quote_name
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(str(f.column)) for f in fields)})"
    return fields, head, tuple(_cast_type(f) for f in fields)


def _compiled_insert(objs: Sequence[Model]) -> Write:
    model = type(objs[0])
    fields = [f for f in model._meta.local_concrete_fields if not f.generated]
    query = InsertQuery(model)
    query.insert_values(fields, list(objs))
    compiler = query.get_compiler(connection=connection)
    quote = connection.ops.quote_name
    value_rows = [[compiler.prepare_value(f, compiler.pre_save_val(f, obj)) for f in fields] for obj in objs]
    # The base class's placeholders, one per value (Postgres's compiler would make several rows one UNNEST).
    placeholders, params = SQLInsertCompiler.assemble_as_sql(compiler, fields, value_rows)
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(str(f.column)) for f in fields)})"
    types = [_cast_type(f) for f in fields]
    cast = tuple(tuple(f"{p}::{t}" for p, t in zip(row, types, strict=True)) for row in placeholders)
    values = ", ".join(f"({', '.join(row)})" for row in placeholders)
    for obj in objs:
        obj._state.adding, obj._state.db = False, connection.alias
    flat = tuple(p for row in params for p in row)
    return Write(sql=f"{head} VALUES {values}", params=flat, insert_head=head, rows=cast)


_OPERATORS = {"exact": "= %s", "lt": "< %s", "isnull": ""}


def update_rows(
    model: type[Model], where: Mapping[str, Any], *, any_of: Sequence[Mapping[str, Any]] = (), **values: Any
) -> Write:
    """``model.objects.filter(**where).filter(Q(**any_of[0]) | Q(**any_of[1]) …).update(**values)``,
    written once per shape: lookups ``exact`` (no suffix), ``in``, ``lt`` and ``isnull``. Values are
    prepared by their fields (``get_db_prep_save``, ``get_db_prep_value``) as the ORM's are."""
    groups = (where, *any_of)
    shape = (model, tuple(values), *(tuple((k, _width(k, v)) for k, v in group.items()) for group in groups))
    sql, set_fields, where_fields = _update_sql(shape, len(any_of))
    params = [f.get_db_prep_save(values[f.name], connection) for f in set_fields]
    conditions = [value for group in groups for key, value in group.items() if not key.endswith("__isnull")]
    for field, value in zip(where_fields, conditions, strict=True):
        items = value if isinstance(value, (list, tuple)) else (value,)
        params += [field.get_db_prep_value(item, connection, prepared=False) for item in items]
    return Write(sql=sql, params=tuple(params))


def _width(key: str, value: Any) -> Any:
    """What of a condition's value its SQL depends on: an ``in`` list's length, ``isnull``'s truth."""
    if key.endswith("__in"):
        return len(value)
    return bool(value) if key.endswith("__isnull") else None


@functools.cache
def _update_sql(shape: tuple[Any, ...], alternatives: int) -> tuple[str, list[Field[Any, Any]], list[Field[Any, Any]]]:
    model, names, *groups = shape
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    set_fields = [_concrete(model, name) for name in names]
    where_fields: list[Field[Any, Any]] = []

    def condition(key: str, width: Any) -> str:
        name, _, lookup = key.partition("__")
        field = _concrete(model, model._meta.pk.name if name == "pk" else name)
        column = f"{table}.{quote(str(field.column))}"
        if lookup == "isnull":
            return f"{column} IS {'' if width else 'NOT '}NULL"
        where_fields.append(field)
        if lookup == "in":
            return f"{column} IN ({', '.join('%s' for _ in range(width))})"
        return f"{column} {_OPERATORS[lookup or 'exact']}"

    clauses = [condition(key, width) for key, width in groups[0]]
    if alternatives:
        options = [" AND ".join(condition(key, width) for key, width in group) for group in groups[1:]]
        clauses.append(f"({' OR '.join(f'({option})' for option in options)})")
    sets = ", ".join(f"{quote(str(field.column))} = %s" for field in set_fields)
    return f"UPDATE {table} SET {sets} WHERE {' AND '.join(clauses)}", set_fields, where_fields


def update(queryset: QuerySet[Any], **values: Any) -> Write:
    """``queryset.update(**values)``, compiled and not sent."""
    query: Any = queryset.query.chain(UpdateQuery)
    query.add_update_values(values)
    query.annotations = {}
    compiler = query.get_compiler(queryset.db)
    compiler.pre_sql_setup()
    sql, params = compiler.as_sql()
    return Write(sql=sql, params=tuple(params))


def _concrete(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, Field) and field.column, f"{model.__name__}.{name} is no column"
    return field


def _cast_type(field: Any) -> str:
    """The type a value is cast to in a guarded INSERT (``SELECT`` gives untyped literals no type of
    their column); text for character columns, so an over-long value still fails as in a plain INSERT."""
    kind = str(field.cast_db_type(connection))
    return "text" if kind.startswith("varchar") else kind


def _guard(run_id: Any) -> tuple[str, tuple[Any, ...]]:
    """``EXISTS (…)``: the run is active and nobody asked it to stop."""
    sql, statuses = _guard_sql()
    return sql, (Run._meta.pk.get_db_prep_value(run_id, connection), *statuses)


@functools.cache
def _guard_sql() -> tuple[str, tuple[str, ...]]:
    quote = connection.ops.quote_name
    table = quote(Run._meta.db_table)

    def column(name: str) -> str:
        return f"{table}.{quote(str(_concrete(Run, name).column))}"

    statuses = tuple(str(status) for status in ACTIVE_RUN_STATUSES)
    sql = (
        f"EXISTS (SELECT 1 FROM {table} WHERE {column('id')} = %s"
        f" AND {column('status')} IN ({', '.join('%s' for _ in statuses)})"
        f" AND {column('cancel_requested_at')} IS NULL)"
    )
    return sql, statuses


def _guarded(write: Write, guard: tuple[str, tuple[Any, ...]]) -> tuple[str, tuple[Any, ...]]:
    condition, condition_params = guard
    if write.insert_head:
        rows = " UNION ALL ".join(f"SELECT {', '.join(row)} WHERE {condition}" for row in write.rows)
        return f"{write.insert_head} {rows}", _interleave(write, condition_params)
    return f"{write.sql} AND {condition}", (*write.params, *condition_params)


def _interleave(write: Write, condition_params: tuple[Any, ...]) -> tuple[Any, ...]:
    width = len(write.rows[0])
    out: list[Any] = []
    for index in range(len(write.rows)):
        out += [*write.params[index * width : (index + 1) * width], *condition_params]
    return tuple(out)


def write_together(writes: Sequence[Write], *, unless_cancelled: Any = None) -> tuple[bool, list[int]]:
    """Send ``writes`` at once; whether they were sent (``unless_cancelled``: the run was active and not
    asked to stop), and each one's count of rows.

    An UPDATE's SQL must end with its WHERE clause (``update`` compiles them so)."""
    guard = _guard(unless_cancelled) if unless_cancelled is not None else None
    if connection.vendor != "postgresql":
        return _one_by_one(writes, guard)
    parts: list[str] = []
    params: list[Any] = []
    for index, write in enumerate(writes):
        sql, write_params = _guarded(write, guard) if guard is not None else (write.sql, write.params)
        parts.append(f"w{index} AS ({sql} RETURNING 1)")
        params += write_params
    counts = ", ".join(f"(SELECT COUNT(*) FROM w{index})" for index in range(len(writes)))
    sent = guard[0] if guard is not None else "TRUE"
    if guard is not None:
        params += guard[1]
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {', '.join(parts)} SELECT {sent}, {counts}", params)
        row = cursor.fetchone()
    return bool(row[0]), [int(count) for count in row[1:]]


def _one_by_one(writes: Sequence[Write], guard: tuple[str, tuple[Any, ...]] | None) -> tuple[bool, list[int]]:
    counts: list[int] = []
    with transaction.atomic(), connection.cursor() as cursor:
        if guard is not None:
            cursor.execute(f"SELECT {guard[0]}", guard[1])
            if not cursor.fetchone()[0]:
                return False, [0 for _ in writes]
        for write in writes:
            cursor.execute(write.sql, write.params)
            counts.append(cursor.rowcount)
    return True, counts
