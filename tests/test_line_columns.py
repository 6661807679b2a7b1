"""A line has one column list: the model's. The chain's Line, the write path's row, the verifier's read and the
tree reads' row type all agree with it, so a line written one way reads back the same every other way."""

import dataclasses
import uuid
from datetime import datetime, timezone

from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from graph.fast.plan import LINE_FIELD_COLUMNS
from models import AgentTask, TraceEvent
from models.record.chain import Line
from models.line_columns import BESIDE, CHECKED, COLUMNS, INSERTED, MARKED, SET_BY_DATABASE, inserted_row
from resolvers.read import verify
from resolvers.read.rows import LINE_COLUMNS, LineRow, ReadQuery, read_lines
from resolvers.write.append import LINE_COLUMNS as WRITTEN, Step, append_many, running_task
from tests.shop import Shop


def test_every_column_is_written_at_append_set_by_the_database_or_an_erasure_mark():
    assert sorted(COLUMNS) == sorted((*INSERTED, *SET_BY_DATABASE, *MARKED))
    assert len(set(INSERTED)) == len(INSERTED)
    assert WRITTEN == INSERTED


def test_every_field_of_a_chain_line_has_its_column():
    assert len(CHECKED) == len(dataclasses.fields(Line))
    assert set(CHECKED) <= set(COLUMNS)
    assert verify.COLUMNS == CHECKED


def test_a_step_carries_exactly_the_columns_beside_the_chain_line():
    assert tuple(f.name for f in dataclasses.fields(Step) if f.name != "line") == BESIDE


def test_the_row_type_of_tree_reads_has_every_column():
    assert sorted(LineRow._fields) == sorted(COLUMNS)
    assert LINE_COLUMNS == frozenset(COLUMNS)


def test_the_line_fields_read_from_other_columns_name_real_columns():
    for field, columns in LINE_FIELD_COLUMNS.items():
        assert columns <= set(COLUMNS), field


async def a_step(task: str) -> Step:
    """A model call made by a tool, withheld: every column the write path fills holds a value."""
    at = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=timezone.utc)
    line = Line(seq=0, kind="MODEL_CALL", task=task, at=at, summary="It asked.", payload='{"a":1}', summary_salt=None,
                payload_salt=None, summary_hash="", payload_hash="", prev_hash="", hash="", model="Everyday",
                route_rule="llm:default", attempts=2, cost_micros=300, input_tokens=120, output_tokens=30,
                tool="PartsFor", tool_call_id="c1", is_error=True, duration_ms=40)
    return Step(line, withheld="REDACTED", call_id=uuid.uuid4(), by_tool="Quote")


async def test_a_line_appended_reads_back_the_same_as_a_model_a_verified_line_and_a_tree_row(client, dialect):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    step = await a_step(task)
    async with in_transaction() as conn:
        root = (await running_task(shop.tenant, "task", task, conn)).root
        (row,) = await append_many(root, [step], conn)
    root_id = (await AgentTask.get(id=task)).root_id

    assert row == inserted_row(shop.tenant, str(root_id), step.line, withheld="REDACTED",
                               call_id=str(step.call_id), by_tool="Quote")
    assert None not in row

    stored = await TraceEvent.get(root_id=root_id, seq=step.line.seq)
    written = dict(zip(INSERTED, row))
    for column in INSERTED:
        value = getattr(stored, column)
        assert (str(value) if isinstance(value, uuid.UUID) else value) == written[column], column

    _, found = await get_connection("default").execute_query(
        verify.PAGE[dialect], [shop.tenant, str(root_id), step.line.seq - 1, 1])
    assert verify.READERS[dialect](found[0]) == step.line

    statement = ReadQuery()
    lines = await read_lines(statement, "task_id", COLUMNS, f"root_id = {statement.param(root_id)}", "seq")
    read = lines[uuid.UUID(task)][-1]
    assert type(read) is LineRow
    assert read._asdict() == {column: getattr(stored, column) for column in COLUMNS}
