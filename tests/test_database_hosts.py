"""AGENTLOG_DATABASE_URL may name several PostgreSQL hosts as libpq's connection strings do; each is read with its
port, and the pool is given them all, each host its own timeout (the failover itself: tests/test_failover.py)."""

import asyncio
import time

import pytest

from models import db, hosts

TWO = "postgres://noor:p%40ss@db-a:5433,db-b/agentlog?target_session_attrs=read-write&max_size=8"


def test_a_url_of_two_hosts_gives_the_pool_both_with_their_ports_and_the_session_attrs():
    config = db.connection(TWO)

    assert config["engine"] == "models.hosts"
    found = config["credentials"]
    assert (found["host"], found["port"]) == (["db-a", "db-b"], [5433, 5432])
    assert (found["user"], found["password"], found["database"]) == ("noor", "p@ss", "agentlog")
    assert (found["target_session_attrs"], found["max_size"]) == ("read-write", 8)


def test_a_url_of_one_host_is_read_by_the_orm_as_before():
    config = db.connection("postgres://noor@db-a:5433/agentlog")

    assert config["engine"] == "tortoise.backends.asyncpg"
    assert (config["credentials"]["host"], config["credentials"]["port"]) == ("db-a", 5433)


def test_a_host_named_in_the_query_is_left_to_the_orm():
    config = db.connection("postgres://noor@/agentlog?host=/run/postgresql")

    assert config["engine"] == "tortoise.backends.asyncpg"
    assert config["credentials"]["host"] == "/run/postgresql"


def test_hosts_may_be_ipv6_in_brackets():
    assert hosts.addresses("postgres://u@[::1]:6432,[fe80::2]/db") == [("::1", 6432), ("fe80::2", 5432)]


@pytest.mark.parametrize(("url", "said"), [
    ("postgres://u@db-a:5432,db-b:port/db", "the port of 'db-b:port' is not a port number"),
    ("postgres://u@db-a:5432,:5432/db", "':5432' names no host"),
    ("postgres://u@db-a,db-b:70000/db", "the port of 'db-b:70000' is not a port number"),
    ("postgres://u@[::1/db", "'[::1' is not a host or host:port"),
    ("postgres://u@db-a,db-b/db?target_session_attrs=master", "target_session_attrs is one of"),
])
def test_a_malformed_host_list_is_refused_saying_which_part(url, said):
    with pytest.raises(ValueError, match=said.replace("[", r"\[")):
        hosts.addresses(url)


@pytest.mark.postgres_only
async def test_a_host_that_never_answers_is_passed_over_once_its_timeout_is_up(database):
    """As a primary whose host died without closing anything: it takes the connection and never says a word."""
    held = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    listener = await asyncio.start_server(silent, "127.0.0.1", 0)
    before, answering, after = hosts.split(database)
    url = f"{before}127.0.0.1:{listener.sockets[0].getsockname()[1]},{answering[0]}{after}"
    url += "&" if "?" in url else "?"
    client = hosts.ManyHosts(**db.connection(url + "target_session_attrs=read-write&timeout=1")["credentials"],
                             connection_name="probe")
    began = time.monotonic()
    try:
        await client.create_connection(with_db=True)
        _, rows = await client.execute_query("SELECT 1 AS one")
    finally:
        await client.close()
        for writer in held:
            writer.close()
        listener.close()

    assert rows[0]["one"] == 1
    assert time.monotonic() - began < 4
