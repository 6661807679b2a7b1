"""Two days of the shop's spend, for the tests of usage: the meter's rows moved to the times a test names."""

from __future__ import annotations

from datetime import datetime, timedelta

from models import AgentTask, LlmCall
from tests.shop import Shop


async def two_days(client, estimated: datetime, ordered: datetime) -> Shop:
    """At `estimated` Mia's estimate (three calls of 200 on Everyday); at `ordered` Noor's parts order (one call of
    5,000 on Careful), which failed a minute later."""
    shop = Shop(client)
    await shop.setup()
    estimate = await shop.estimate()
    order = (await shop.start(skill="OrderParts", requester={"id": "noor", "name": "Noor"}))["id"]
    await shop.model_call(order, model="Careful", costMicros=5000, inputTokens=1000, outputTokens=200)
    await shop.end(order, status="FAILED", outcome="The supplier is closed.")
    await LlmCall.filter(task_id=estimate).update(at=estimated)
    await AgentTask.filter(id=estimate).update(ended_at=estimated + timedelta(minutes=1))
    await LlmCall.filter(task_id=order).update(at=ordered)
    await AgentTask.filter(id=order).update(ended_at=ordered + timedelta(minutes=1))
    return shop
