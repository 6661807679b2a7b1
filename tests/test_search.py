"""tasks(filter: {search}): finds work by its words and sentences, and never by a text the reader may not read."""

from __future__ import annotations

import httpx
import pytest

from permissions.table import READS, Group, Reader
from tests.shop import ROLES, Client, Shop

SEARCH = """query($text: String!) { tasks(filter: {search: $text}) { totalCount edges { node { id } } } }"""

TEXTS = {
    "about": Group.WORDS, "trigger": Group.WORDS, "outcome": Group.WORDS,
    "sentence": Group.SENTENCES, "given": Group.CONTENT, "payload": Group.CONTENT,
}


def word(text: str, task: str) -> str:
    """The one word that only this text of this task holds."""
    return f"{text}{task}word"


async def record_texts(shop: Shop, name: str, **start) -> str:
    task = (await shop.start(
        about=f"Ticket {word('about', name)}", trigger=f"Asked for {word('trigger', name)}.",
        given=f"Brief: {word('given', name)}", **start,
    ))["id"]
    await shop.model_call(task, summary=f"Looked up {word('sentence', name)} parts.",
                          response={"text": word("payload", name)})
    return task


@pytest.fixture(scope="module")
async def shop(app) -> Shop:
    """Mia asks for the repair; a part of it is handed on for Sam."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        shop = Shop(Client(http))
        await shop.setup()
        root = await record_texts(shop, "root")
        sub = await record_texts(shop, "sub", parent=root, requester={"id": "sam", "name": "Sam"})
        both = (await shop.start(about="Checked bothways", parent=root))["id"]
        await shop.model_call(both, summary="Looked bothways again.")
        await shop.end(both)
        await shop.end(sub, outcome=f"Done: {word('outcome', 'sub')}.")
        await shop.end(root, outcome=f"Done: {word('outcome', 'root')}.")
        shop.tasks = {"root": root, "sub": sub}
        yield shop


READERS = {
    "requester of the root": ({"root": Reader.REQUESTER, "sub": Reader.REQUESTER}, lambda s: s.mia),
    "requester of the sub-task": ({"sub": Reader.REQUESTER}, lambda s: s.person("sam", "Mechanic")),
    "figures reader who asked for the sub-task": (
        {"root": Reader.READS_ALL, "sub": Reader.REQUESTER}, lambda s: s.person("sam", ROLES["readsAllAgentWork"])),
    **{
        capability: ({"root": reader, "sub": reader}, lambda s, role=ROLES[capability]: s.person("pat", role))
        for capability, reader in (
            ("supervisesAgents", Reader.SUPERVISES), ("auditsAgents", Reader.AUDITS),
            ("teachesAgents", Reader.TEACHES), ("readsAllAgentWork", Reader.READS_ALL),
            ("erasesAgentRecords", Reader.ERASES),
        )
    },
    "kit": ({"root": Reader.KIT, "sub": Reader.KIT}, lambda s: s.kit),
    "stranger": ({}, lambda s: s.person("stan", "Mechanic")),
}


def expected(readers: dict[str, Reader], text: str, task: str) -> bool:
    """A text makes a task match when the reader reads its group there and it is a text search looks at."""
    reader = readers.get(task)
    return reader is not None and TEXTS[text] in READS[reader] and TEXTS[text] is not Group.CONTENT


async def found(shop: Shop, text: str, token: str | None) -> tuple[set[str], int]:
    tasks = (await shop.client.ok(SEARCH, {"text": text}, token))["tasks"]
    return {edge["node"]["id"] for edge in tasks["edges"]}, tasks["totalCount"]


CASES = [(reader, text) for reader in READERS for text in TEXTS]


@pytest.mark.parametrize("reader,text", CASES, ids=[f"{r}-{t}" for r, t in CASES])
async def test_a_word_makes_a_task_match_only_for_a_reader_who_may_read_it_there(shop, reader, text):
    readers, token = READERS[reader]

    for name, task in shop.tasks.items():
        ids, total = await found(shop, word(text, name), token(shop))

        should = expected(readers, text, name)
        assert ids == ({task} if should else set()), name
        assert total == (1 if should else 0)


COUNTED = """query($f: TaskFilter!) { tasks(filter: $f, first: 500) { totalCount edges { node { id } } } }"""
BESIDE = {"startedAfter": "2000-01-01T00:00:00Z"}


@pytest.mark.parametrize("reader", READERS)
async def test_a_search_alone_is_counted_as_beside_another_filter_and_as_its_pages_hold(shop, reader):
    """A search alone, by a reader of every text of the tenant, is counted from the search indexes; beside
    another filter, over the tasks. Each reader gets one count both ways, and it is what the page holds."""
    _, token = READERS[reader]
    texts = ["ticket", "looked parts", "bothways", "done", word("about", "root"), word("sentence", "sub")]

    for text in texts:
        alone = (await shop.client.ok(COUNTED, {"f": {"search": text}}, token(shop)))["tasks"]
        beside = (await shop.client.ok(COUNTED, {"f": {"search": text, **BESIDE}}, token(shop)))["tasks"]

        assert alone["totalCount"] == beside["totalCount"] == len(alone["edges"]), text
        assert {e["node"]["id"] for e in alone["edges"]} == {e["node"]["id"] for e in beside["edges"]}, text


async def test_the_matrix_above_is_not_empty_on_either_side():
    outcomes = {expected(readers, text, task) for readers, _ in READERS.values() for text in TEXTS for task in ("root", "sub")}
    assert outcomes == {True, False}


async def test_search_words_are_all_needed_and_any_case(shop):
    both, _ = await found(shop, f"TICKET {word('about', 'root').upper()}", shop.noor)
    one_missing, _ = await found(shop, f"{word('about', 'root')} {word('about', 'nowhere')}", shop.noor)

    assert both == {shop.tasks["root"]}
    assert one_missing == set()


@pytest.mark.parametrize("text,matches", [
    (f"{word('about', 'root')} OR unheardof", False),
    (f"{word('about', 'root')} -ticket", True),
    (f"{word('about', 'root')[:-2]}*", False),
    (f'"{word("about", "root")}', True),
    (f"NEAR({word('about', 'root')} ticket)", False),
    (f"{word('about', 'root')} & !ticket", True),
    (f"{word('about', 'root')}:*", True),
    ("about:rootwordx", False),
])
async def test_search_syntax_characters_are_taken_literally(shop, text, matches):
    ids, _ = await found(shop, text, shop.noor)

    assert ids == ({shop.tasks["root"]} if matches else set())


async def test_erased_words_match_nobody(app):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        shop = Shop(Client(http))
        await shop.setup()
        root = await record_texts(shop, "gone")
        await shop.end(root, outcome=f"Done: {word('outcome', 'gone')}.")
        eraser = shop.person("erin", ROLES["erasesAgentRecords"])
        before = [await found(shop, word(text, "gone"), shop.noor) for text in ("about", "trigger", "outcome", "sentence")]

        await shop.client.ok(
            'mutation($t: ID!) { anonymiseAgentWork(task: $t, why: "Asked to be forgotten.") }', {"t": root}, eraser)

        assert before == [({root}, 1)] * 4
        for token in (shop.noor, shop.mia, eraser, shop.person("pat", ROLES["auditsAgents"])):
            for text in ("about", "trigger", "outcome", "sentence", "ticket", "looked"):
                assert await found(shop, word(text, "gone") if text not in ("ticket", "looked") else text, token) == (set(), 0)
