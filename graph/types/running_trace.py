from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry

from graph.types.connection import PageInfo
from resolvers.read import running
from resolvers.read.running import RunningPage, RunningTraceRow, WaitingSpanRow

NOT_RECORDED = "Not yet part of the record: no line, no hash, no cost in any task's figures."


@strawberry.enum(description="What a waiting span will become once placed.")
class SpanKind(Enum):
    AGENT = "AGENT"
    MODEL_CALL = "MODEL_CALL"
    TOOL = "TOOL"
    OTHER = "OTHER"


@strawberry.type(description=f"A span received and waiting to be placed. {NOT_RECORDED} Never its content.")
class WaitingSpan:
    span_id: str = strawberry.field(description="Its span id, in lowercase hex.")
    parent_span_id: str | None = strawberry.field(description="Its parent's span id; null for a root.")
    name: str
    kind: SpanKind
    agent: str | None = strawberry.field(description="An agent span's agent.")
    model: str | None = strawberry.field(description="A model call's model.")
    tool: str | None = strawberry.field(description="A tool span's tool.")
    input_tokens: int | None
    output_tokens: int | None
    started_at: datetime
    ended_at: datetime | None
    failed: bool = strawberry.field(description="Whether its status is error.")

    @classmethod
    def of(cls, row: WaitingSpanRow) -> WaitingSpan:
        return cls(span_id=row.span_id, parent_span_id=row.parent_span_id, name=row.name, kind=SpanKind(row.kind),
                   agent=row.agent, model=row.model, tool=row.tool, input_tokens=row.input_tokens,
                   output_tokens=row.output_tokens, started_at=row.started_at, ended_at=row.ended_at,
                   failed=row.failed)


@strawberry.type(description=f"A trace with spans waiting: what an exporter has sent of work still running. "
                             f"{NOT_RECORDED} A span placed leaves it; a trace with nothing waiting is not listed.")
class RunningTrace:
    row: strawberry.Private[RunningTraceRow]

    @strawberry.field(description="The trace id, in lowercase hex.")
    def trace_id(self) -> str:
        return self.row.trace_id

    @strawberry.field(description="When the first of its spans waiting was received.")
    def first_seen_at(self) -> datetime:
        return self.row.first_seen_at

    @strawberry.field(description="When the last of its spans waiting was received.")
    def last_seen_at(self) -> datetime:
        return self.row.last_seen_at

    @strawberry.field(description="Its spans waiting.")
    def span_count(self) -> int:
        return len(self.row.spans)

    @strawberry.field(description="Its model call spans waiting.")
    def model_calls(self) -> int:
        return sum(s.kind == "MODEL_CALL" for s in self.row.spans)

    @strawberry.field(description="Its tool spans waiting.")
    def tool_calls(self) -> int:
        return sum(s.kind == "TOOL" for s in self.row.spans)

    @strawberry.field(description="Input tokens of its model calls waiting.")
    def input_tokens(self) -> int:
        return sum(s.input_tokens or 0 for s in self.row.spans)

    @strawberry.field(description="Output tokens of its model calls waiting.")
    def output_tokens(self) -> int:
        return sum(s.output_tokens or 0 for s in self.row.spans)

    @strawberry.field(description="Its spans waiting, in the order they started; `after` is a span id, first at "
                                  "most 1,000.")
    def spans(self, first: int | None = None, after: str | None = None) -> list[WaitingSpan]:
        return [WaitingSpan.of(s) for s in running.spans_page(self.row.spans, first, after)]


@strawberry.type
class RunningTraceEdge:
    cursor: str
    node: RunningTrace


@strawberry.type(description=f"Traces with spans waiting, the most recently received first. {NOT_RECORDED}")
class RunningTraceConnection:
    edges: list[RunningTraceEdge]
    page_info: PageInfo
    page: strawberry.Private[RunningPage]

    @strawberry.field(description="How many traces have spans waiting, every page together.")
    async def total_count(self) -> int:
        return await self.page.total()

    @classmethod
    def of(cls, page: RunningPage, after: str | None) -> RunningTraceConnection:
        edges = [RunningTraceEdge(cursor=t.cursor, node=RunningTrace(row=t)) for t in page.traces]
        return cls(edges=edges, page=page, page_info=PageInfo(
            has_next_page=page.more, has_previous_page=after is not None,
            start_cursor=edges[0].cursor if edges else None, end_cursor=edges[-1].cursor if edges else None))
