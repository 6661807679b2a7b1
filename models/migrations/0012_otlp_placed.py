"""A placed span no longer keeps a row of its own in `otlp_span`: the spans placed in one pass are kept as one
row of `otlp_placed`, and `otlp_span` holds only spans that wait, each with its body. Placing a trace then
writes one row for its spans where it wrote a row per span and marked each waiting row placed.

Rows already placed move into one `otlp_placed` row per trace, in the order they were stored; a placed tool
span's tool name comes from the body it kept. On PostgreSQL the rows are stored uncompressed: compressing
one pass's spans took four times as long as writing them.
"""

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops

TOOL = {
    "postgres": "CASE WHEN kind = 'tool' THEN body::json -> 'fields' ->> 'tool' END",
    "sqlite": "CASE WHEN kind = 'tool' THEN json_extract(body, '$.fields.tool') END",
}
ENTRY = "json_build_array(span_id, parent_span_id, kind, task_id, {tool})"
FORWARD = {
    "postgres": [
        'ALTER TABLE "otlp_placed" ALTER COLUMN "spans" SET STORAGE EXTERNAL',
        f"INSERT INTO otlp_placed (tenant, trace_id, spans) SELECT tenant, trace_id, "
        f"json_agg({ENTRY.format(tool=TOOL['postgres'])} ORDER BY id)::text FROM otlp_span WHERE placed "
        "GROUP BY tenant, trace_id",
        "DELETE FROM otlp_span WHERE placed",
        'DROP INDEX IF EXISTS "otlp_span_waiting"',
    ],
    "sqlite": [
        "INSERT INTO otlp_placed (tenant, trace_id, spans) SELECT tenant, trace_id, json_group_array(json(e)) FROM "
        f"(SELECT tenant, trace_id, json_array(span_id, parent_span_id, kind, task_id, {TOOL['sqlite']}) AS e "
        "FROM otlp_span WHERE placed ORDER BY id) GROUP BY tenant, trace_id",
        "DELETE FROM otlp_span WHERE placed",
        'DROP INDEX IF EXISTS "otlp_span_waiting"',
    ],
}
BACKWARD = {
    "postgres": [
        "INSERT INTO otlp_span (tenant, trace_id, span_id, parent_span_id, kind, body, received_us, placed, task_id) "
        "SELECT p.tenant, p.trace_id, e ->> 0, e ->> 1, e ->> 2, CASE WHEN e ->> 4 IS NOT NULL THEN "
        "json_build_object('fields', json_build_object('tool', e ->> 4))::text END, 0, TRUE, (e ->> 3)::uuid "
        "FROM otlp_placed p, json_array_elements(p.spans::json) e ON CONFLICT DO NOTHING",
        'CREATE INDEX IF NOT EXISTS "otlp_span_waiting" ON "otlp_span" ("received_us") WHERE NOT "placed"',
    ],
    "sqlite": [
        "INSERT OR IGNORE INTO otlp_span (tenant, trace_id, span_id, parent_span_id, kind, body, received_us, placed, "
        "task_id) SELECT p.tenant, p.trace_id, json_extract(e.value, '$[0]'), json_extract(e.value, '$[1]'), "
        "json_extract(e.value, '$[2]'), CASE WHEN json_extract(e.value, '$[4]') IS NOT NULL THEN json_object("
        "'fields', json_object('tool', json_extract(e.value, '$[4]'))) END, 0, 1, json_extract(e.value, '$[3]') "
        "FROM otlp_placed p, json_each(p.spans) e",
        'CREATE INDEX IF NOT EXISTS "otlp_span_waiting" ON "otlp_span" ("received_us") WHERE NOT "placed"',
    ],
}


KEPT_INDEXES = [
    'CREATE UNIQUE INDEX IF NOT EXISTS "uid_otlp_span_tenant_64a349" ON "otlp_span" ("tenant", "trace_id", "span_id")',
    'CREATE INDEX IF NOT EXISTS "idx_otlp_span_receive_2b2755" ON "otlp_span" ("received_us")',
]


async def keep_indexes(apps, schema_editor) -> None:
    """SQLite rebuilds the table to change a column and leaves its indexes behind; they are made again."""
    for statement in KEPT_INDEXES:
        await schema_editor.client.execute_script(statement)


async def nothing(apps, schema_editor) -> None:
    pass


async def _run(schema_editor, statements: dict[str, list[str]]) -> None:
    client = schema_editor.client
    for statement in statements[client.capabilities.dialect]:
        await client.execute_script(statement)


async def move_placed(apps, schema_editor) -> None:
    await _run(schema_editor, FORWARD)


async def move_back(apps, schema_editor) -> None:
    await _run(schema_editor, BACKWARD)


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0011_task_words_table')]

    initial = False

    operations = [
        ops.CreateModel(
            name='OtlpPlaced',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('trace_id', fields.CharField(max_length=32)),
                ('spans', fields.TextField(unique=False)),
            ],
            options={'table': 'otlp_placed', 'app': 'agentlog', 'indexes': [Index(fields=['tenant', 'trace_id'])], 'pk_attr': 'id', 'table_description': 'The spans of one trace placed in one pass, as one row.'},
            bases=['Model'],
        ),
        ops.RunPython(move_placed, move_back),
        ops.AlterModelOptions(
            name='ModelPrice',
            options={'table': 'model_price', 'app': 'agentlog', 'indexes': [Index(fields=['tenant', 'model', 'effective_from'])], 'pk_attr': 'id', 'table_description': 'What one model costs a tenant per million tokens, from a date on. A later date supersedes an earlier one.'},
        ),
        ops.AlterModelOptions(
            name='OtlpSpan',
            options={'table': 'otlp_span', 'app': 'agentlog', 'unique_together': (('tenant', 'trace_id', 'span_id'),), 'pk_attr': 'id', 'table_description': 'A span taken from an OTLP export, waiting with its body until it is placed.'},
        ),
        ops.AlterField(
            model_name='OtlpSpan',
            name='body',
            field=fields.TextField(unique=False),
        ),
        ops.AlterField(
            model_name='OtlpSpan',
            name='received_us',
            field=fields.BigIntField(db_index=True),
        ),
        ops.AlterField(
            model_name='OtlpSpan',
            name='placed',
            field=fields.BooleanField(default=False, db_default=False),
        ),
        ops.RemoveField(model_name='OtlpSpan', name='placed'),
        ops.RemoveField(model_name='OtlpSpan', name='task_id'),
        ops.RunPython(keep_indexes, nothing),
        ops.AlterModelOptions(
            name='SignedCheckpoint',
            options={'table': 'checkpoint', 'app': 'agentlog', 'pk_attr': 'root_id', 'table_description': "The latest signed note over one tree's head. Its size only grows; one size is signed with one head."},
        ),
    ]
