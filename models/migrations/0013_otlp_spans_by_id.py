"""An export costs what it carries: every span placed keeps a row of its own in `otlp_placed_span`, found by its
id, where a pass kept one row for all its spans and each export read every row of its trace. Waiting spans are
found by their id and by their parent's. Every index of the two tables leads with the id looked up: an index
leading with (tenant, trace_id) is what PostgreSQL picks for every lookup while a young table has no
statistics yet (it takes the trace for one row), and then each export scans its whole trace.

Rows of `otlp_placed` become one row per span, the later pass winning as it did when read; the way back makes
one `otlp_placed` row per trace.
"""

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops

FORWARD = {
    "postgres": [
        "INSERT INTO otlp_placed_span (tenant, trace_id, span_id, parent_span_id, kind, task_id, tool) "
        "SELECT DISTINCT ON (p.tenant, p.trace_id, e ->> 0) p.tenant, p.trace_id, e ->> 0, e ->> 1, e ->> 2, "
        "(e ->> 3)::uuid, e ->> 4 FROM otlp_placed p, json_array_elements(p.spans::json) WITH ORDINALITY AS x(e, n) "
        "ORDER BY p.tenant, p.trace_id, e ->> 0, p.id DESC, n DESC",
    ],
    "sqlite": [
        "INSERT OR REPLACE INTO otlp_placed_span (tenant, trace_id, span_id, parent_span_id, kind, task_id, tool) "
        "SELECT p.tenant, p.trace_id, json_extract(e.value, '$[0]'), json_extract(e.value, '$[1]'), "
        "json_extract(e.value, '$[2]'), json_extract(e.value, '$[3]'), json_extract(e.value, '$[4]') "
        "FROM otlp_placed p, json_each(p.spans) e ORDER BY p.id, e.key",
    ],
}
BACKWARD = {
    "postgres": [
        "INSERT INTO otlp_placed (tenant, trace_id, spans) SELECT tenant, trace_id, json_agg(json_build_array("
        "span_id, parent_span_id, kind, task_id, tool) ORDER BY id)::text FROM otlp_placed_span "
        "GROUP BY tenant, trace_id",
    ],
    "sqlite": [
        "INSERT INTO otlp_placed (tenant, trace_id, spans) SELECT tenant, trace_id, json_group_array(json(e)) FROM "
        "(SELECT tenant, trace_id, json_array(span_id, parent_span_id, kind, task_id, tool) AS e "
        "FROM otlp_placed_span ORDER BY id) GROUP BY tenant, trace_id",
    ],
}


BY_ID = {
    "postgres": [
        'ALTER TABLE "otlp_span" DROP CONSTRAINT IF EXISTS "uid_otlp_span_tenant_64a349"',
        'DROP INDEX IF EXISTS "uid_otlp_span_tenant_64a349"',
        'CREATE UNIQUE INDEX "otlp_span_by_id" ON "otlp_span" ("span_id", "tenant", "trace_id")',
    ],
    "sqlite": [
        'DROP INDEX IF EXISTS "uid_otlp_span_tenant_64a349"',
        'CREATE UNIQUE INDEX "otlp_span_by_id" ON "otlp_span" ("span_id", "tenant", "trace_id")',
    ],
}
BY_TRACE = {
    dialect: [
        'DROP INDEX IF EXISTS "otlp_span_by_id"',
        'CREATE UNIQUE INDEX "uid_otlp_span_tenant_64a349" ON "otlp_span" ("tenant", "trace_id", "span_id")',
    ]
    for dialect in ("postgres", "sqlite")
}


async def _run(schema_editor, statements: dict[str, list[str]]) -> None:
    client = schema_editor.client
    for statement in statements[client.capabilities.dialect]:
        await client.execute_script(statement)


async def one_row_each(apps, schema_editor) -> None:
    await _run(schema_editor, FORWARD)


async def one_row_per_trace(apps, schema_editor) -> None:
    await _run(schema_editor, BACKWARD)


async def by_id(apps, schema_editor) -> None:
    await _run(schema_editor, BY_ID)


async def by_trace(apps, schema_editor) -> None:
    await _run(schema_editor, BY_TRACE)


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0012_otlp_placed')]

    initial = False

    operations = [
        ops.CreateModel(
            name='OtlpPlacedSpan',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('trace_id', fields.CharField(max_length=32)),
                ('span_id', fields.CharField(max_length=16)),
                ('parent_span_id', fields.CharField(null=True, max_length=16)),
                ('kind', fields.CharField(max_length=8)),
                ('task_id', fields.UUIDField(null=True)),
                ('tool', fields.TextField(null=True, unique=False)),
            ],
            options={'table': 'otlp_placed_span', 'app': 'agentlog',
                     'unique_together': [('span_id', 'tenant', 'trace_id')], 'pk_attr': 'id',
                     'table_description': 'A span placed in the record, one row each, found by its id.'},
            bases=['Model'],
        ),
        ops.RunPython(one_row_each, one_row_per_trace),
        ops.DeleteModel(name='OtlpPlaced'),
        ops.RunPython(by_id, by_trace),
        ops.AlterModelOptions(name='OtlpSpan', options={'unique_together': [('span_id', 'tenant', 'trace_id')]}),
        ops.AddIndex(model_name='OtlpSpan', index=Index(fields=['parent_span_id'])),
        ops.AddIndex(model_name='OtlpPlacedSpan', index=Index(fields=['parent_span_id'])),
    ]
