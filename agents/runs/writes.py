"""Several of a run's writes sent as one statement (issue 24): each round trip to Postgres costs more
than the rows it writes.

A ``Write`` is one INSERT or UPDATE compiled by the ORM (``insert`` and ``update``: the fields'
own conversions, ``auto_now_add`` and defaults included). ``write_together`` sends a list of them
as one statement on Postgres (data-modifying CTEs, executed once each, all on the statement's
snapshot) and in one transaction elsewhere (SQLite has no writes in a ``WITH``). With
``unless_cancelled``, nothing is written when that run has been asked to stop (or has ended), and
the answer says so: the check for a cancel costs no statement of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.db.models.sql import InsertQuery, UpdateQuery
from django.db.models.sql.compiler import SQLInsertCompiler

from agents.models import ACTIVE_RUN_STATUSES, Run

if TYPE_CHECKING:
    from collections.abc import Sequence

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


def update(queryset: QuerySet[Any], **values: Any) -> Write:
    """``queryset.update(**values)``, compiled and not sent."""
    query: Any = queryset.query.chain(UpdateQuery)
    query.add_update_values(values)
    query.annotations = {}
    compiler = query.get_compiler(queryset.db)
    compiler.pre_sql_setup()
    sql, params = compiler.as_sql()
    return Write(sql=sql, params=tuple(params))


def _cast_type(field: Any) -> str:
    """The type a value is cast to in a guarded INSERT (``SELECT`` gives untyped literals no type of
    their column); text for character columns, so an over-long value still fails as in a plain INSERT."""
    kind = str(field.cast_db_type(connection))
    return "text" if kind.startswith("varchar") else kind


def _guard(run_id: Any) -> tuple[str, tuple[Any, ...]]:
    """``EXISTS (…)``: the run is active and nobody asked it to stop."""
    alive = Run.objects.filter(pk=run_id, status__in=ACTIVE_RUN_STATUSES, cancel_requested_at__isnull=True)
    sql, params = alive.values("pk").query.sql_with_params()
    return f"EXISTS ({sql})", tuple(params)


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
