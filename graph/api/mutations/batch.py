from __future__ import annotations

import strawberry

from graph.api.context import Info
from graph.api.inputs import RecordLinesInput, plain
from graph.types.recorded_lines import RecordedLines
from resolvers.write import batch


@strawberry.type
class BatchMutation:
    @strawberry.mutation(
        description=(
            "Kit only. Records up to 1,000 model calls, tool calls and tool results of one running task, in order, "
            "in one transaction, each exactly as its single mutation would (model calls with their meter rows). "
            "One bad line refuses the whole batch and nothing is written."
        )
    )
    async def record_lines(self, info: Info, input: RecordLinesInput) -> RecordedLines:
        return RecordedLines(recorded=await batch.record_lines(info.context.writer(), plain(input)))
