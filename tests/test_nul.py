"""A NUL character in any text argument is BAD_INPUT naming where it is, and writes nothing; in JSON it is kept."""

import pytest

from models import RegisteredAgent, TraceEvent
from tests.shop import Shop

REGISTER = "mutation($input: RegisterAgentInput!) { registerAgent(input: $input) { name } }"
RECORD_LINES = "mutation($input: RecordLinesInput!) { recordLines(input: $input) { lastSeq } }"


@pytest.mark.parametrize(("input", "named"), [
    ({"name": "Estimator", "transcriptReaders": ["Auditor", "\u0000"]}, "$input.transcriptReaders[1]"),
    ({"name": "Estimator", "roles": ["Help\u0000er"]}, "$input.roles[0]"),
    ({"name": "Esti\u0000mator"}, "$input.name"),
    ({"name": "Estimator", "purpose": "\u0000"}, "$input.purpose"),
])
async def test_a_nul_in_a_variable_is_refused_where_it_is(client, input, named):
    shop = Shop(client)

    error = (await client.post(REGISTER, {"input": input}, shop.kit))["errors"][0]

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert error["message"].startswith(named) and "NUL" in error["message"]
    assert error["extensions"]["field"] == named.removeprefix("$")
    assert not await RegisteredAgent.filter(tenant=shop.tenant).exists()


async def test_a_nul_in_a_literal_list_item_is_refused_where_it_is(client):
    shop = Shop(client)
    query = 'mutation { registerAgent(input: {name: "Estimator", roles: ["Helper", "\\u0000"]}) { name } }'

    error = (await client.post(query, token=shop.kit))["errors"][0]

    assert error["extensions"]["code"] == "BAD_INPUT" and error["message"].startswith("input.roles[1]")
    assert error["extensions"]["field"] == "input.roles[1]"
    assert not await RegisteredAgent.filter(tenant=shop.tenant).exists()


async def test_a_nul_in_a_read_filter_is_refused(client):
    shop = Shop(client)

    error = (await client.post('{ tasks(filter: {agent: "Esti\\u0000mator"}) { edges { cursor } } }',
                               token=shop.noor))["errors"][0]

    assert error["extensions"]["code"] == "BAD_INPUT" and error["message"].startswith("filter.agent")


async def test_a_nul_inside_json_content_is_kept_as_written(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    await shop.write("recordToolCall", {"task": task, "tool": "PartsFor", "input": {"raw": "a\u0000b"}})

    line = await TraceEvent.get(task_id=task, seq=2)
    assert line.payload == '{"raw":"a\\u0000b"}'
    assert (await shop.verify(task))["intact"] is True


async def test_a_nul_in_a_fragment_is_refused(client):
    shop = Shop(client)
    query = 'query { ...Found } fragment Found on Query { tasks(filter: {skill: "\\u0000"}) { edges { cursor } } }'

    error = (await client.post(query, token=shop.noor))["errors"][0]

    assert error["extensions"]["code"] == "BAD_INPUT" and error["message"].startswith("filter.skill")


async def test_a_nul_deep_in_a_batch_is_refused_where_it_is_and_nothing_of_the_batch_is_written(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    lines = [{"toolCall": {"tool": "PartsFor", "input": {"n": n}}} for n in range(40)]
    lines[37]["toolCall"]["toolCallId"] = "c\u000037"

    error = await shop.client.error(RECORD_LINES, {"input": {"task": task, "lines": lines}}, shop.kit)

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert error["extensions"]["field"] == "input.lines[37].toolCall.toolCallId"
    assert await TraceEvent.filter(task_id=task).count() == 1


async def test_a_backslash_written_before_u0000_is_text_not_a_nul_and_is_kept(client):
    shop = Shop(client)

    purpose = "Reads \\u0000 as six characters."
    registered = await client.ok(REGISTER, {"input": {"name": "Estimator", "purpose": purpose}}, shop.kit)

    assert registered == {"registerAgent": {"name": "Estimator"}}
    assert (await RegisteredAgent.get(tenant=shop.tenant)).purpose == purpose
