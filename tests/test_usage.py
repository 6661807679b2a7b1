"""`usage`: what the shop's work cost over time, by agent, model, skill and requester, summed from the meter in one
grouped statement; Mia sees the totals of the work she asked for, Noor the shop's, a figures-only reader may not
group by who asked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from models import LlmCall
from tests.shop import Shop, work
from tests.spend import two_days
from tests.statements import counted

USAGE = """query($from: DateTime!, $to: DateTime!, $bucket: UsageBucket!, $groupBy: UsageGroup!) {
  usage(from: $from, to: $to, bucket: $bucket, groupBy: $groupBy) {
    at key costMicros inputTokens outputTokens calls failures
  }
}"""
TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
YESTERDAY = TODAY - timedelta(days=1)


async def yesterday_and_today(client) -> Shop:
    return await two_days(client, YESTERDAY + timedelta(hours=10, minutes=15), TODAY + timedelta(hours=9, minutes=30))


async def usage(client, token: str, group: str, bucket: str = "DAY", start=None, end=None) -> list[dict]:
    variables = {"from": (start or TODAY - timedelta(days=7)).isoformat(), "to": (end or TODAY + timedelta(days=1)).isoformat(),
                 "bucket": bucket, "groupBy": group}
    return (await client.ok(USAGE, variables, token))["usage"]


def point(at: datetime, key: str | None, micros: int, tokens: tuple[int, int], calls: int, failures: int | None) -> dict:
    return {"at": at.isoformat(), "key": key, "costMicros": micros, "inputTokens": tokens[0], "outputTokens": tokens[1],
            "calls": calls, "failures": failures}


async def test_a_manager_reads_each_day_by_agent_and_by_model_in_one_statement(client):
    shop = await yesterday_and_today(client)
    with counted() as sent:
        by_agent = await usage(client, shop.noor, "AGENT")
    assert by_agent == [
        point(YESTERDAY, "Estimator", 600, (360, 90), 3, 0),
        point(TODAY, "Estimator", 5000, (1000, 200), 1, 1),
    ]
    assert len([s for s in sent if "llm_call" in s]) == 1
    assert await usage(client, shop.noor, "MODEL") == [
        point(YESTERDAY, "Everyday", 600, (360, 90), 3, None),
        point(TODAY, "Careful", 5000, (1000, 200), 1, None),
    ]
    assert [(p["key"], p["costMicros"], p["failures"]) for p in await usage(client, shop.noor, "SKILL")] == [
        ("EstimateRepair", 600, 0), ("OrderParts", 5000, 1)]
    assert [(p["key"], p["calls"]) for p in await usage(client, shop.noor, "REQUESTER")] == [("mia", 3), ("noor", 1)]


async def test_hours_split_the_day_and_the_range_bounds_what_is_summed(client):
    shop = await yesterday_and_today(client)
    hours = await usage(client, shop.noor, "AGENT", "HOUR", start=YESTERDAY, end=TODAY + timedelta(hours=9))
    assert hours == [point(YESTERDAY + timedelta(hours=10), "Estimator", 600, (360, 90), 3, 0)]


async def test_the_meter_of_forgotten_work_still_counts_for_the_shop_and_not_for_the_requester(client):
    shop = await yesterday_and_today(client)
    await LlmCall.filter(tenant=shop.tenant, model="Everyday").update(task_id=None, task_path=None)
    assert [p["costMicros"] for p in await usage(client, shop.noor, "AGENT")] == [600, 5000]
    assert await usage(client, shop.mia, "AGENT") == []


async def test_the_requester_sees_the_totals_of_the_work_they_asked_for(client):
    shop = await yesterday_and_today(client)
    assert await usage(client, shop.mia, "AGENT") == [point(YESTERDAY, "Estimator", 600, (360, 90), 3, 0)]
    assert await usage(client, shop.person("eve", "Mechanic"), "MODEL") == []
    assert await usage(client, Shop(client).person("noor", "Manager"), "AGENT") == []


async def test_a_figures_only_reader_sums_the_money_but_may_not_group_by_who_asked(client):
    shop = await yesterday_and_today(client)
    ada = shop.person("ada", "Accountant")
    assert [p["costMicros"] for p in await usage(client, ada, "MODEL")] == [600, 5000]
    variables = {"from": YESTERDAY.isoformat(), "to": TODAY.isoformat(), "bucket": "DAY", "groupBy": "REQUESTER"}
    error = await client.error(USAGE, variables, ada)
    assert (error["extensions"]["code"], error["extensions"]["field"]) == ("FORBIDDEN", "groupBy")


async def test_a_backwards_or_too_long_range_is_bad_input(client):
    shop = await yesterday_and_today(client)
    for start, end, bucket in ((TODAY, YESTERDAY, "DAY"), (TODAY - timedelta(days=200), TODAY, "HOUR")):
        variables = {"from": start.isoformat(), "to": end.isoformat(), "bucket": bucket, "groupBy": "AGENT"}
        error = await client.error(USAGE, variables, shop.noor)
        assert (error["extensions"]["code"], error["extensions"]["field"]) == ("BAD_INPUT", "to")


async def test_usage_beside_other_fields_in_one_request_answers_as_it_would_alone(client):
    shop = await yesterday_and_today(client)
    document = """query($from: DateTime!, $to: DateTime!, $task: ID!) {
      task(id: $task) { reviewCount }
      byAgent: usage(from: $from, to: $to, bucket: DAY, groupBy: AGENT) { key costMicros }
      byModel: usage(from: $from, to: $to, bucket: DAY, groupBy: MODEL) { key costMicros }
    }"""
    variables = {"from": (TODAY - timedelta(days=7)).isoformat(), "to": (TODAY + timedelta(days=1)).isoformat(),
                 "task": str((await work(shop.tenant).first()).id)}
    together = await client.ok(document, variables, shop.kit)
    assert together["task"] == {"reviewCount": 0}
    assert together["byAgent"] == [{"key": "Estimator", "costMicros": 600}, {"key": "Estimator", "costMicros": 5000}]
    assert together["byModel"] == [{"key": "Everyday", "costMicros": 600}, {"key": "Careful", "costMicros": 5000}]
