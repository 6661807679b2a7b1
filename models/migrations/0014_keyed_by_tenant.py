"""Every table holding a tenant's rows is keyed by tenant, and on a database with the `citus` extension it is
distributed by tenant.

Citus refuses a primary or unique key, or a foreign key between distributed tables, that leaves out the
distribution column; the keys are the same on one PostgreSQL, so a database moves to a cluster unchanged. A
primary key becomes (its columns, tenant): a lookup by id alone still reads the key's index. Ids are UUIDs or
drawn from a sequence, so they stay unique across tenants by how they are made.

On a Citus database every tenant table is then distributed by `tenant`, all co-located with `agent_task`, so a
tree's receipts, lines, meter and search words sit on one shard and its write path never leaves it. The search
words' trigger writes only `task_words`, co-located with `agent_task`, which is what
`citus.enable_unsafe_triggers` asks of a trigger. The migration history is the one shared table: a reference
table.

SQLite is never distributed and keeps its keys; it gains one unique index, so the checkpoint's upsert names the
same conflict target (root_id, tenant) on both.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops

search = __import__("importlib").import_module("models.migrations.0011_task_words_table")

KEYED = {
    "agent": "id",
    "agent_help": "id",
    "agent_task": "id",
    "checkpoint": "root_id",
    "erasure_log": "id",
    "idempotency_key": "id",
    "llm_call": "id",
    "model_price": "id",
    "otlp_placed_span": "id",
    "otlp_span": "id",
    "task_words": "task_id",
    "trace_event": "id",
}
TENANT_TABLES = ["agent_task", *sorted(set(KEYED) - {"agent_task"}), "policies"]
SHARED_TABLES = ["tortoise_migrations"]


def _words_keep(conflict: str) -> str:
    return f"""CREATE OR REPLACE FUNCTION task_words_keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO task_words (task_id, tenant, words) VALUES (new.id, new.tenant, {search.KEEP})
        ON CONFLICT ({conflict}) DO UPDATE SET words = excluded.words;
        RETURN NULL;
    END $$"""


POSTGRES = [
    "ALTER TABLE task_words DROP CONSTRAINT task_words_task_id_fkey",
    *(f'ALTER TABLE "{table}" DROP CONSTRAINT "{table}_pkey", ADD CONSTRAINT "{table}_pkey" '
      f'PRIMARY KEY ("{column}", "tenant")' for table, column in KEYED.items()),
    'ALTER TABLE trace_event DROP CONSTRAINT "uid_trace_event_root_id_d1a969", '
    'ADD CONSTRAINT "trace_event_root_id_seq_tenant" UNIQUE ("root_id", "seq", "tenant")',
    "ALTER TABLE task_words ADD CONSTRAINT task_words_task_id_fkey FOREIGN KEY (task_id, tenant) "
    "REFERENCES agent_task (id, tenant) ON DELETE CASCADE",
    _words_keep("task_id, tenant"),
]

BACK_POSTGRES = [
    "ALTER TABLE task_words DROP CONSTRAINT task_words_task_id_fkey",
    *(f'ALTER TABLE "{table}" DROP CONSTRAINT "{table}_pkey", ADD CONSTRAINT "{table}_pkey" PRIMARY KEY ("{column}")'
      for table, column in KEYED.items()),
    'ALTER TABLE trace_event DROP CONSTRAINT "trace_event_root_id_seq_tenant", '
    'ADD CONSTRAINT "uid_trace_event_root_id_d1a969" UNIQUE ("root_id", "seq")',
    "ALTER TABLE task_words ADD CONSTRAINT task_words_task_id_fkey FOREIGN KEY (task_id) "
    "REFERENCES agent_task (id) ON DELETE CASCADE",
    _words_keep("task_id"),
]

SQLITE = ['CREATE UNIQUE INDEX IF NOT EXISTS "checkpoint_root_id_tenant" ON "checkpoint" ("root_id", "tenant")']
BACK_SQLITE = ['DROP INDEX IF EXISTS "checkpoint_root_id_tenant"']

DISTRIBUTE = [
    "SET LOCAL citus.enable_unsafe_triggers = on",
    *(f"SELECT create_distributed_table('{table}', 'tenant', colocate_with => "
      f"'{'default' if table == 'agent_task' else 'agent_task'}')" for table in TENANT_TABLES),
    *(f"SELECT create_reference_table('{table}')" for table in SHARED_TABLES),
]

UNDISTRIBUTE = [f"SELECT undistribute_table('{table}', cascade_via_foreign_keys => true)"
                for table in [*SHARED_TABLES, *reversed(TENANT_TABLES)]]


async def _has_citus(client) -> bool:
    return bool(await client.execute_query_dict("SELECT 1 FROM pg_extension WHERE extname = 'citus'"))


async def _run(client, statements: list[str]) -> None:
    for statement in statements:
        await client.execute_script(statement)


async def key_by_tenant(apps, schema_editor) -> None:
    client = schema_editor.client
    await _run(client, POSTGRES if client.capabilities.dialect == "postgres" else SQLITE)


async def unkey(apps, schema_editor) -> None:
    client = schema_editor.client
    await _run(client, BACK_POSTGRES if client.capabilities.dialect == "postgres" else BACK_SQLITE)


async def distribute(apps, schema_editor) -> None:
    client = schema_editor.client
    if client.capabilities.dialect == "postgres" and await _has_citus(client):
        await _run(client, DISTRIBUTE)


async def undistribute(apps, schema_editor) -> None:
    client = schema_editor.client
    if client.capabilities.dialect == "postgres" and await _has_citus(client):
        await _run(client, UNDISTRIBUTE)


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0013_otlp_spans_by_id')]

    initial = False

    operations = [ops.RunPython(key_by_tenant, unkey), ops.RunPython(distribute, undistribute)]
