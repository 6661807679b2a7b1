"""The kit's writes beyond the shop's estimate: policies, agents, sub-tasks, help and instructions."""

import hashlib

from tests.shop import Shop, work

POLICIES = "supervisesAgents auditsAgents teachesAgents readsAllAgentWork erasesAgentRecords"


async def test_policies_start_empty_and_define_policies_replaces_only_the_lists_it_is_given(client):
    shop = Shop(client)
    await shop.write("registerAgent", {"name": "Estimator"})

    first = await shop.write("definePolicies", {"supervisesAgents": ["Manager"], "erasesAgentRecords": ["Privacy"]})
    second = await shop.write("definePolicies", {"supervisesAgents": ["Owner", "Manager"]})

    assert first == {"supervisesAgents": ["Manager"], "auditsAgents": [], "teachesAgents": [],
                     "readsAllAgentWork": [], "erasesAgentRecords": ["Privacy"]}
    assert second["supervisesAgents"] == ["Owner", "Manager"]
    assert second["erasesAgentRecords"] == ["Privacy"]


async def test_registering_an_agent_again_updates_it(client):
    shop = Shop(client)
    await shop.write("registerAgent", {"name": "Estimator", "roles": ["Helper"]})

    again = await shop.write("registerAgent", {"name": "Estimator", "roles": ["Helper", "Clerk"],
                                               "transcriptReaders": ["Manager"], "logging": "METADATA_ONLY"})

    assert again == {"name": "Estimator", "roles": ["Helper", "Clerk"], "transcriptReaders": ["Manager"],
                     "logging": "METADATA_ONLY"}


async def test_a_sub_task_inherits_its_parents_session_unless_given_one(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(session="chat-42"))["id"]

    inherited = (await shop.start(parent=root, skill="PartsFor"))["id"]
    own = (await shop.start(parent=root, skill="Quote", session="chat-43"))["id"]
    below = (await shop.start(parent=inherited, skill="Stock"))["id"]

    sessions = {t.id.hex: t.session for t in await work(shop.tenant)}
    assert sessions[root.replace("-", "")] == "chat-42"
    assert sessions[inherited.replace("-", "")] == "chat-42"
    assert sessions[own.replace("-", "")] == "chat-43"
    assert sessions[below.replace("-", "")] == "chat-42"


async def test_the_tree_position_of_every_task(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start())["id"]
    first = await shop.start(parent=root, skill="PartsFor")
    second = await shop.start(parent=root, skill="Quote")
    grandchild = await shop.start(parent=first["id"], skill="Stock")

    assert (first["depth"], first["sequence"]) == (1, 1)
    assert (second["depth"], second["sequence"]) == (1, 2)
    assert (grandchild["depth"], grandchild["sequence"], grandchild["path"]) == (2, 1, f"{root}/{first['id']}/{grandchild['id']}")
    heads = {t["chainLength"] for t in (first, second, grandchild)}
    assert heads == {2, 3, 4}
    assert (await shop.read(first["id"], shop.noor, "chainLength"))["chainLength"] == 4


async def test_the_server_hashes_the_instructions_sent(client):
    shop = Shop(client)
    await shop.setup()
    instructions = "Look up the parts first. Write the estimate as a note on the repair."

    task = (await shop.start(instructionSet=3, instructionsSent=instructions))["id"]

    receipt = await shop.read(task, shop.mia)
    assert receipt["instructionsHash"] == hashlib.sha256(instructions.encode()).hexdigest()
    assert receipt["instructionsSent"] == instructions


async def test_help_asked_inside_work_is_two_lines_of_its_record(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    help = await shop.write("askForHelp", {"task": task, "question": "Rear or front brake?",
                                           "askedOf": {"id": "mia", "name": "Mia"}})
    await shop.write("sendBack", {"help": help["id"], "answer": "Rear.", "by": {"id": "mia", "name": "Mia"}})

    data = await shop.client.ok(
        "query($id: ID!) { agentHelp(id: $id) { question answer askedOf { id } answeredBy { name } task { id } } }",
        {"id": help["id"]}, shop.mia,
    )
    assert data["agentHelp"] == {"question": "Rear or front brake?", "answer": "Rear.", "askedOf": {"id": "mia"},
                                 "answeredBy": {"name": "Mia"}, "task": {"id": task}}
    lines = (await shop.read(task, shop.mia, "record { kind summary payload }"))["record"]
    assert [line["kind"] for line in lines] == ["STARTED", "ASKED_FOR_HELP", "SENT_BACK"]
    assert lines[1] == {"kind": "ASKED_FOR_HELP", "summary": "It asked Mia for help.", "payload": "Rear or front brake?"}
    assert lines[2]["payload"] == "Rear."


async def test_help_asked_outside_work_is_read_by_the_person_asked(client):
    shop = Shop(client)
    await shop.setup()

    help = await shop.write("askForHelp", {"question": "May I order pads?", "askedOf": {"id": "mia", "name": "Mia"}})

    query = "query($id: ID!) { agentHelp(id: $id) { question askedOf { id } task { id } } }"
    mine = await shop.client.ok(query, {"id": help["id"]}, shop.mia)
    theirs = await shop.client.ok(query, {"id": help["id"]}, shop.person("sam", "Mechanic"))
    assert mine["agentHelp"] == {"question": "May I order pads?", "askedOf": {"id": "mia"}, "task": None}
    assert theirs["agentHelp"] is None
