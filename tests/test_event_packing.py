"""Events published together travel packed into PostgreSQL notifications under its payload limit, and come out
the other side whole and in order: notices of a trace's many tasks, and of one task alone."""

import uuid
from datetime import datetime, timezone

from models import AgentTask
from resolvers.events.bus_postgres import PAYLOAD_BYTES, heard, packed
from resolvers.events.notices import notice_of, notices_json


def task(agent: str, depth: int = 1) -> AgentTask:
    now = datetime.now(timezone.utc)
    root = uuid.uuid4()
    return AgentTask(id=uuid.uuid4(), tenant="shop", agent=agent, skill="Estimate", cause="SPAWN", status="DONE",
                     started_at=now, ended_at=now, root_id=root, parent_id=root, path=f"{root}/x", depth=depth,
                     sequence=1, requester_id="mia", actor_id="workshop", session=None)


def test_many_notices_pack_under_the_limit_in_order_even_in_many_bytes_a_character():
    tasks = [task(f"Prüfer-{'ß' * 80}-{n}") for n in range(120)]
    events = [("AgentTaskStarted", t) for t in tasks] + [("AgentTaskFinished", t) for t in tasks]

    notices = notices_json(events)
    payloads = packed(notices)

    assert notices == [notice_of(event, t).to_json() for event, t in events]
    assert 1 < len(payloads) < len(events)
    assert max(len(p.encode()) for p in payloads) <= PAYLOAD_BYTES
    told = [notice for payload in payloads for notice in heard(payload)]
    assert [(n.event, n.task_id, n.task["agent"]) for n in told] == [(e, t.id, t.agent) for e, t in events]
    assert told[0].task["started_at"] == tasks[0].started_at


def test_one_notice_travels_as_itself():
    alone = task("Estimator")

    [payload] = packed([notice_of("AgentTaskStarted", alone).to_json()])

    assert payload.startswith("{")
    [told] = heard(payload)
    assert (told.event, told.task_id, told.task["root_id"]) == ("AgentTaskStarted", alone.id, alone.root_id)
