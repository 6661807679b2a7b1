"""The sentence each line says when the kit gives none, written from the structured fields only."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from models.record.vocabulary import TaskStatus


def dollars(micros: int) -> str:
    """$0.00002, $0.0006, $1,234.50: at least two decimals and every micro that is not zero, as the inspector writes
    it."""
    text = format(Decimal(micros).scaleb(-6), "f")
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0")
    return f"${int(whole):,}.{fraction.ljust(2, '0')}"


def who(person: dict | None) -> str:
    if not person:
        return "nobody in particular"
    return person.get("name") or person["id"]


def started(agent: str, skill: str, requester: dict | None, parent: bool) -> str:
    handed = "was handed" if parent else "started"
    return f"{agent} {handed} {skill}, for {who(requester)}."


def asks_for_tool(response: Any) -> bool:
    if isinstance(response, dict):
        for key in ("toolCalls", "tool_calls", "tools"):
            if response.get(key):
                return True
        response = response.get("content")
    if isinstance(response, list):
        return any(isinstance(part, dict) and part.get("type") in {"tool_use", "tool_call", "function_call"} for part in response)
    return False


def model_call(model: str, route_rule: str | None, cost_micros: int | None, response: Any, by_tool: str | None) -> str:
    """`cost_micros` None: the call was sent without a cost and no price was set for it."""
    chosen = f" (chosen by {route_rule})" if route_rule else ""
    made_by = f", called by {by_tool}," if by_tool else ""
    did = "asked for a tool" if asks_for_tool(response) else "answered"
    cost = "it is unpriced" if cost_micros is None else f"it cost {dollars(cost_micros)}"
    return f"{model}{chosen}{made_by} {did}; {cost}."


def model_call_failed(model: str) -> str:
    return f"The call to {model} failed."


def tool_call(tool: str, changes: bool) -> str:
    effect = "changes data" if changes else "reads data"
    return f"It asked for {tool} ({effect}); it is one of this work's tools, so it runs as the agent, for whoever asked."


def tool_result(tool: str, is_error: bool, duration_ms: int | None) -> str:
    took = f" in {duration_ms} ms" if duration_ms is not None else ""
    return f"{tool} failed{took}." if is_error else f"{tool} answered{took}."


def retrieved(tool: str, found: list[str], is_error: bool) -> str:
    if is_error:
        return f"{tool} failed."
    if not found:
        return f"{tool} found nothing."
    more = len(found) - FOUND_SHOWN
    return f"{tool} found {', '.join(found[:FOUND_SHOWN])}{f' and {more} more' if more > 0 else ''}."


FOUND_SHOWN = 10


def handed_off(agent: str) -> str:
    return f"It handed the work to {agent}."


def handoff_result(agent: str, is_error: bool) -> str:
    return f"The handoff to {agent} failed." if is_error else f"{agent} took the work over."


def asked_for_help(asked_of: dict) -> str:
    return f"It asked {who(asked_of)} for help."


def sent_back(by: dict) -> str:
    return f"{who(by)} answered."


ENDINGS = {
    TaskStatus.DONE: "The work is done.", TaskStatus.FAILED: "The work failed.", TaskStatus.STOPPED: "The work was stopped.",
}


def ended(status: str) -> str:
    return ENDINGS[status]


def erased(which: str, at: str, by: dict) -> str:
    return f"{which} on {at} by {who(by)}."


VERDICTS = {"APPROVED": "approved", "REJECTED": "rejected", "NOTED": "noted"}


def named(person: dict) -> str:
    """A person by their name and the identity their token gave: `Ana Auditor (ana)`."""
    name = person.get("name")
    return f"{name} ({person['id']})" if name else person["id"]


def reviewed(verdict: str, by: dict, score: float | None, note: str | None, evaluator: str | None) -> str:
    who_said = f"The evaluator {evaluator}, through {named(by)}," if evaluator else named(by)
    scored = f", scoring it {score:g}" if score is not None else ""
    said = f': "{note}"' if note else "."
    return f"{who_said} {VERDICTS[verdict]} this work{scored}{said}"


def held(by: dict, reason: str) -> str:
    return f"{named(by)} held this work, so nothing erases it until the hold is released: {reason}"


def released(by: dict, reason: str) -> str:
    return f"{named(by)} released the hold on this work: {reason}"


def config_changed(by: dict, kit: bool, said: str) -> str:
    """A ledger line: who changed what, `said` being what changed, in a few words."""
    who_did = by["id"] if by.get("name") == by["id"] else named(by)
    return f"{'The kit ' if kit else ''}{who_did} {said}."


def ledger_started() -> str:
    return "The ledger of this tenant began: every change to who may read or do what, and to what is kept."

def stop_asked(by: dict, reason: str) -> str:
    return f"{who(by)} asked the work to stop: {reason}"
