"""What a migration adding tables does on PostgreSQL after creating them: key each by tenant, as 0014 keys the
others, and, on Citus, distribute it by tenant, co-located with `agent_task`. Its name starts with `_`, so the
migration loader does not take it for a migration."""

from tortoise.migrations import operations as ops


def keyed_by_tenant(keyed: dict[str, str]) -> ops.RunPython:
    """The operation re-keying each table of `keyed` by its id column and `tenant`; nothing on SQLite."""
    statements = [f'ALTER TABLE "{table}" DROP CONSTRAINT "{table}_pkey", ADD CONSTRAINT "{table}_pkey" '
                  f'PRIMARY KEY ("{column}", "tenant")' for table, column in keyed.items()]
    distribute = [f"SELECT create_distributed_table('{table}', 'tenant', colocate_with => 'agent_task')"
                  for table in keyed]

    async def key(apps, schema_editor) -> None:
        client = schema_editor.client
        if client.capabilities.dialect != "postgres":
            return
        citus = await client.execute_query_dict("SELECT 1 FROM pg_extension WHERE extname = 'citus'")
        for statement in statements + (distribute if citus else []):
            await client.execute_script(statement)

    async def nothing(apps, schema_editor) -> None:
        pass

    return ops.RunPython(key, nothing)
