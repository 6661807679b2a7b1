"""A conversation of three turns in the small shop, for the tests of sessions."""

from __future__ import annotations

from tests.shop import Shop


async def conversation(client) -> tuple[Shop, list[str]]:
    """Three turns of the chat "chat-7": Mia asks twice (the second hands a part search on), then Noor asks."""
    shop = Shop(client)
    await shop.setup()
    first = await shop.estimate(session="chat-7", about="Turn one")
    second = (await shop.start(session="chat-7", about="Turn two"))["id"]
    await shop.model_call(second, costMicros=1000, inputTokens=10, outputTokens=5)
    helper = (await shop.start(parent=second, about="Part search"))["id"]
    await shop.model_call(helper, costMicros=50, inputTokens=1, outputTokens=1)
    await shop.end(helper)
    await shop.end(second, status="FAILED", outcome="No parts in stock.")
    third = await shop.estimate(session="chat-7", about="Turn three", requester={"id": "noor", "name": "Noor"})
    await shop.estimate(session="chat-8", about="Another chat")
    return shop, [first, second, third]
