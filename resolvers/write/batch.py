"""`recordLines`: many model calls, tool calls and tool results of one task, in one transaction.

Each line is checked exactly as its single mutation checks it, before anything is read or written;
one bad line refuses the whole batch.
"""

from __future__ import annotations

from typing import Any

from permissions.principal import Principal
from models.errors import BadInput
from resolvers.write.draft import LineDraft
from resolvers.write.lines import Recorded, model_call, record, tool_call, tool_result

MAX_LINES = 1000
DRAFTERS = {"model_call": (model_call, "modelCall"), "tool_call": (tool_call, "toolCall"),
            "tool_result": (tool_result, "toolResult")}


def draft(index: int, line: dict[str, Any]) -> LineDraft:
    given = [kind for kind in DRAFTERS if line.get(kind) is not None]
    if len(given) != 1:
        raise BadInput(f"lines[{index}] must give exactly one of modelCall, toolCall, toolResult.", field=f"lines[{index}]")
    drafter, name = DRAFTERS[given[0]]
    return drafter(line[given[0]], f"lines[{index}].{name}.")


def drafts(lines: list[dict[str, Any]] | None) -> list[LineDraft]:
    if not lines:
        raise BadInput("lines: at least one line is required.", field="lines")
    if len(lines) > MAX_LINES:
        raise BadInput(f"lines: {len(lines)} lines given; at most {MAX_LINES} are recorded in one call.", field="lines")
    return [draft(i, line) for i, line in enumerate(lines)]


async def record_lines(principal: Principal | None, data: dict[str, Any]) -> Recorded:
    return await record(principal, "recordLines", data, lambda: drafts(data.get("lines")))
