"""When a replica may answer a read: the rules of resolvers/events/replicas.py on replicas whose positions the test sets.
The same rules on real replicas: tests/test_read_replicas.py."""

from __future__ import annotations

import time
from typing import Any

import pytest

from models.errors import BadInput
from resolvers.events.replicas import LEASE_S, Replica, Routing, lsn_text, lsn_value, token_value


class Node:
    """A database client answering one WAL position, or failing."""

    def __init__(self, lsn: str | None, fails: bool = False) -> None:
        self.lsn = lsn
        self.fails = fails

    async def execute_query(self, sql: str, values: Any = None) -> tuple[int, list[dict]]:
        if self.fails:
            raise ConnectionRefusedError("connection refused")
        return 1, [{"lsn": self.lsn}]


def routing(*replicas: Replica, max_lag_s: float = 5) -> Routing:
    found = Routing(list(replicas), max_lag_s)
    found.heard_heartbeat(time.monotonic())
    return found


def replica(replayed: int, lag_s: float = 0.1, up: bool = True) -> Replica:
    return Replica("replica0", "127.0.0.1:5433", Node(None), up, replayed, time.monotonic() - lag_s)  # type: ignore[arg-type]


def test_a_caught_up_replica_answers():
    one = replica(100)
    assert routing(one).node_for("shop") is one


def test_a_replica_lagging_past_the_bound_does_not():
    assert routing(replica(100, lag_s=6), max_lag_s=5).node_for("shop") is None


def test_a_token_past_what_the_replica_replayed_goes_to_the_primary():
    reads = routing(replica(100))
    assert reads.node_for("shop", token=101) is None
    assert reads.node_for("shop", token=100) is not None


def test_a_fence_holds_its_tenant_only_until_the_replica_passes_it():
    one = replica(100)
    reads = routing(one)
    reads.heard_fence("shop", 150)
    assert reads.node_for("shop") is None
    assert reads.node_for("other shop") is one
    one.replayed = 150
    assert reads.node_for("shop") is one


def test_a_fence_for_everyone_holds_every_tenant():
    reads = routing(replica(100))
    reads.heard_fence(None, 120)
    assert reads.node_for("shop") is None and reads.node_for("other shop") is None


def test_without_the_lease_no_replica_answers():
    reads = routing(replica(100))
    reads.lost_bus()
    assert reads.node_for("shop") is None
    reads.heard_heartbeat(time.monotonic() - LEASE_S)
    assert reads.node_for("shop") is None


def test_a_down_replica_is_left_out_and_the_others_take_turns():
    one, two, three = replica(100), replica(100), replica(100, up=False)
    reads = routing(one, two, three)
    assert {id(reads.node_for("shop")) for _ in range(4)} == {id(one), id(two)}
    reads.down(one)
    assert {id(reads.node_for("shop")) for _ in range(4)} == {id(two)}


def test_a_subscription_event_reads_a_replica_only_once_it_holds_what_came_before():
    one = replica(100, lag_s=0.5)
    assert routing(one).node_for("shop", since=time.monotonic()) is None
    assert routing(one).node_for("shop", since=time.monotonic() - 1) is one


async def test_lag_is_the_age_of_the_newest_primary_position_the_replica_has_passed():
    primary = Node("0/100")
    ahead, behind, gone = Replica("replica0", "", Node("0/100")), Replica("replica1", "", Node("0/50")), Replica("replica2", "", Node(None, True))  # type: ignore[arg-type]
    reads = Routing([ahead, behind, gone], max_lag_s=5, primary=primary)  # type: ignore[arg-type]
    reads.samples.append((time.monotonic() - 3, 0x40))
    await reads.watch_once()
    now = time.monotonic()
    assert ahead.up and ahead.lag_s(now) < 1
    assert behind.up and 2.9 < behind.lag_s(now) < 4
    assert not gone.up


async def test_a_standby_promoted_or_never_one_is_not_read_from():
    promoted = Replica("replica0", "", Node(None))  # type: ignore[arg-type]
    reads = Routing([promoted], max_lag_s=5, primary=Node("0/100"))  # type: ignore[arg-type]
    await reads.watch_once()
    assert not promoted.up


async def test_fences_every_replica_passed_are_forgotten():
    one = Replica("replica0", "", Node("0/100"))  # type: ignore[arg-type]
    reads = Routing([one], max_lag_s=5, primary=Node("0/100"))  # type: ignore[arg-type]
    reads.heard_fence("shop", 0x80)
    reads.heard_fence("other shop", 0x200)
    await reads.watch_once()
    assert reads.fences == {"other shop": 0x200}


def test_tokens_are_wal_positions_and_anything_else_is_bad_input():
    assert lsn_value("16/B374D848") == (0x16 << 32) + 0xB374D848
    assert lsn_text(lsn_value("16/B374D848")) == "16/B374D848"
    assert token_value(None) is None
    for bad in ("", "yesterday", "1/", "/1", "G/1", "123456789/0"):
        with pytest.raises(BadInput):
            token_value(bad)


def test_replicas_are_refused_without_a_postgresql_primary_or_as_other_urls(monkeypatch):
    from models import settings

    monkeypatch.delenv("AGENTLOG_DATABASE_URL", raising=False)
    monkeypatch.setenv("AGENTLOG_READ_DATABASE_URLS", "postgres://postgres@10.0.0.2/agentlog")
    assert any(line.startswith("AGENTLOG_READ_DATABASE_URLS=") for line in settings.problems())

    monkeypatch.setenv("AGENTLOG_DATABASE_URL", "postgres://postgres@10.0.0.1/agentlog")
    assert settings.problems() == []
    monkeypatch.setenv("AGENTLOG_READ_DATABASE_URLS", "postgres://postgres@10.0.0.2/agentlog, sqlite://copy.db")
    assert any(line.startswith("AGENTLOG_READ_DATABASE_URLS=") for line in settings.problems())
