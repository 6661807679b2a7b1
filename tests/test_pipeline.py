"""The pipeline that sends a placing's statements while Python computes: in order, a failure stops the rest, and
the block never ends with a statement still running."""

import asyncio

import pytest

from resolvers.write.pipeline import Pipeline


def statement(done: list[str], name: str, seconds: float = 0.0, fails: bool = False):
    async def run() -> str:
        await asyncio.sleep(seconds)
        if fails:
            raise RuntimeError(f"{name} failed")
        done.append(name)
        return name

    return run()


async def test_statements_run_in_the_order_sent_and_each_answers_its_own_future():
    done: list[str] = []
    async with Pipeline() as db:
        slow = db.send(statement(done, "slow", 0.02))
        fast = db.send(statement(done, "fast"))
        assert await fast == "fast" and await slow == "slow"
    assert done == ["slow", "fast"]


async def test_a_failure_stops_the_statements_after_it_and_drain_raises_it():
    done: list[str] = []
    db = Pipeline()
    db.send(statement(done, "first"))
    db.send(statement(done, "broken", fails=True))
    db.send(statement(done, "after"))
    with pytest.raises(RuntimeError, match="broken failed"):
        await db.drain()
    assert done == ["first"]


async def test_leaving_on_the_callers_error_waits_for_the_statement_in_flight():
    done: list[str] = []
    with pytest.raises(ValueError):
        async with Pipeline() as db:
            db.send(statement(done, "in flight", 0.02))
            await db.breathe()
            raise ValueError("the caller failed")
    assert done == ["in flight"]
