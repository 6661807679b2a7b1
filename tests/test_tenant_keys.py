"""SPEC 8.3: every table holding a tenant's rows carries `tenant`, and every primary key, unique key and foreign
key among them includes it, read from PostgreSQL's catalog (the keys Citus needs to distribute by tenant)."""

import pytest
from tortoise.connection import get_connection

pytestmark = pytest.mark.postgres_only

SHARED = {"tortoise_migrations"}


async def rows(sql: str) -> list[dict]:
    return await get_connection("default").execute_query_dict(sql)


async def test_every_table_but_the_migration_history_carries_tenant(database):
    tables = await rows(
        "SELECT c.relname AS name, bool_or(a.attname = 'tenant') AS keyed FROM pg_class c "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
        "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') GROUP BY c.relname"
    )
    assert {"agent_task", "trace_event", "llm_call", "task_words"} <= {t["name"] for t in tables}
    assert {t["name"] for t in tables if not t["keyed"]} == SHARED


async def test_every_unique_index_of_a_tenant_table_includes_tenant(database):
    indexes = await rows(
        "SELECT c.relname AS tbl, i.indexrelid::regclass::text AS name, i.indisprimary AS primary, "
        "bool_or(a.attname = 'tenant') AS has_tenant FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey) "
        "WHERE c.relnamespace = 'public'::regnamespace AND i.indisunique GROUP BY c.relname, i.indexrelid, i.indisprimary"
    )
    tenant_tables = {i["tbl"] for i in indexes} - SHARED
    assert {i["tbl"] for i in indexes if i["primary"]} >= tenant_tables
    assert [(i["tbl"], i["name"]) for i in indexes if i["tbl"] not in SHARED and not i["has_tenant"]] == []


async def test_foreign_keys_between_tenant_tables_match_on_tenant(database):
    keys = await rows(
        "SELECT conname AS name, "
        "(SELECT array_agg(attname::text) FROM pg_attribute WHERE attrelid = conrelid AND attnum = ANY (conkey)) "
        "AS own, (SELECT array_agg(attname::text) FROM pg_attribute WHERE attrelid = confrelid AND attnum = ANY "
        "(confkey)) AS referenced FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace"
    )
    assert [k["name"] for k in keys] == ["task_words_task_id_fkey"]
    assert [k["name"] for k in keys if "tenant" not in k["own"] or "tenant" not in k["referenced"]] == []


@pytest.mark.citus_only
async def test_on_citus_every_tenant_table_is_distributed_by_tenant_on_one_colocation(database):
    tables = await rows(
        "SELECT logicalrelid::text AS name, partmethod::text AS method, colocationid, "
        "column_to_column_name(logicalrelid, partkey) AS by FROM pg_dist_partition"
    )
    shared = {t["name"] for t in tables if t["method"] == "n"}
    distributed = [t for t in tables if t["method"] == "h"]
    keyed = await rows(
        "SELECT DISTINCT c.relname AS name FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
        "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attname = 'tenant'"
    )
    assert shared == SHARED
    assert {t["name"] for t in distributed} == {k["name"] for k in keyed}
    assert {t["by"] for t in distributed} == {"tenant"}
    assert len({t["colocationid"] for t in distributed}) == 1
