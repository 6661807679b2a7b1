"""Waiting spans as this process mapped them: a bounded copy beside the database, which alone says what waits.

The export that completes a trace uses the copy instead of reading the waiting bodies back and checking them
again. A span is kept only once the transaction that stored it has committed, and dropped once the one that
placed it has; another process, or this one after a restart, reads the database instead.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from resolvers import settings
from resolvers.otlp_mapping import Mapped

Trace = tuple[str, str]


class KeptSpans:
    """At most `AGENTLOG_OTLP_KEPT_SPANS` spans, by trace; the trace stored or asked for longest ago goes first."""

    def __init__(self) -> None:
        self._traces: OrderedDict[Trace, dict[str, Mapped]] = OrderedDict()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def of(self, tenant: str, trace_id: str) -> dict[str, Mapped]:
        return self._traces.get((tenant, trace_id), {})

    def keep(self, tenant: str, trace_id: str, spans: Iterable[Mapped]) -> None:
        limit = settings.otlp_kept_spans()
        if limit == 0:
            self.clear()
            return
        kept = self._traces.setdefault((tenant, trace_id), {})
        for span in spans:
            if span.span_id not in kept:
                kept[span.span_id] = span
                self._count += 1
        self._traces.move_to_end((tenant, trace_id))
        while self._count > limit:
            _, dropped = self._traces.popitem(last=False)
            self._count -= len(dropped)

    def drop(self, tenant: str, trace_id: str, span_ids: Iterable[str]) -> None:
        kept = self._traces.get((tenant, trace_id))
        if kept is None:
            return
        for span_id in span_ids:
            if kept.pop(span_id, None) is not None:
                self._count -= 1
        if not kept:
            del self._traces[(tenant, trace_id)]

    def clear(self) -> None:
        self._traces.clear()
        self._count = 0


KEPT = KeptSpans()
