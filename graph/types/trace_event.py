from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry

import models
from graph.api.context import Info
from graph.api.guard import guarded
from graph.types.enums import ContentAccess, TraceKind
from graph.types.scalars import Long
from graph.types.transcript import WithheldReason
from permissions.access import Group, Shown, content_shown

if TYPE_CHECKING:
    from graph.types.agent_task import AgentTask
    from graph.types.llm_call import LlmCall

F, S, C = Group.FIGURES, Group.SENTENCES, Group.CONTENT


@strawberry.type(description="One line of a work tree's record: a step told in a sentence, its content beside it, hash-chained.")
class TraceEvent:
    groups: strawberry.Private[frozenset]
    event: strawberry.Private[models.TraceEvent]

    seq: int = guarded(F, "Its place in the tree's chain, from 1.")
    kind: TraceKind | None = guarded(F, "What the line tells.")
    at: datetime | None = guarded(F, "When it happened (UTC).")
    model: str | None = guarded(F, "The model that served a model call.")
    route_rule: str | None = guarded(F, "The rule that chose the model.")
    attempts: int | None = guarded(F, "How many attempts the model call took.")
    cost_micros: Long | None = guarded(F, "What a model call cost, in millionths of a dollar.")
    tool: str | None = guarded(F, "The tool called or answering.")
    tool_call_id: str | None = guarded(F, "The id pairing a tool call with its result.")
    input_tokens: Long | None = guarded(F, "A model call's input tokens.")
    output_tokens: Long | None = guarded(F, "A model call's output tokens.")
    duration_ms: int | None = guarded(F, "How long it took.")
    is_error: bool | None = guarded(F, "Whether a tool failed.")
    summary_hash: str | None = guarded(F, "The salted commitment to the sentence.")
    payload_hash: str | None = guarded(F, "The salted commitment to the content.")
    prev_hash: str | None = guarded(F, "The previous line's hash; 64 zeros on line 1.")
    hash: str | None = guarded(F, "This line's hash.")
    erased_at: datetime | None = guarded(F, "When its sentence was erased.")
    content_erased_at: datetime | None = guarded(F, "When its content was erased.")
    content_access: ContentAccess | None = guarded(F, "Why the content is or is not shown to the caller.")
    withheld_reason: WithheldReason | None = guarded(
        F, "Why the content was never stored (METADATA_ONLY, RECORDING_OFF or REDACTED); null when it was."
    )
    summary: str | None = guarded(S, "The step in a sentence.")
    summary_salt: str | None = guarded(S, "The sentence's salt, erased with it.")
    payload: str | None = guarded(C, "The content, as stored text.")
    payload_salt: str | None = guarded(C, "The content's salt, erased with it.")

    @guarded(F, "The task the line belongs to.")
    async def task(self, info: Info) -> Annotated["AgentTask", strawberry.lazy("graph.types.agent_task")] | None:
        from graph.types.agent_task import task_view

        return await task_view(info, await info.context.loaders.task.load(self.event.task_id))

    @guarded(F, "A model call's meter row.")
    async def call(self, info: Info) -> Annotated["LlmCall", strawberry.lazy("graph.types.llm_call")] | None:
        from graph.types.llm_call import call_view

        if self.event.call_id is None:
            return None
        call = await info.context.loaders.call.load(self.event.call_id)
        return call_view(call) if call is not None and call.task_id == self.event.task_id else None


CONTENT_ACCESS = {id(shown): ContentAccess[shown.name] for shown in Shown}


def content_access(event: models.TraceEvent, groups: frozenset) -> ContentAccess:
    """Whether the line's content is shown to the caller; the answer is found by the member's identity, since an
    enum member hashes in Python."""
    erased, never_stored = event.content_erased_at is not None, event.withheld is not None
    return CONTENT_ACCESS[id(content_shown(erased, never_stored, groups))]


def withheld_reason(event: models.TraceEvent) -> WithheldReason | None:
    return WithheldReason(event.withheld) if event.withheld else None
