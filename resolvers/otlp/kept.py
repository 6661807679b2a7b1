"""Waiting spans as this process mapped them: a bounded cache over their rows in the database, which alone says
what waits.

The export that completes a trace uses the copy instead of reading the waiting bodies back and checking them
again. A span is kept only once the transaction that stored it has committed, and dropped once the one that
placed it has; another process, or this one after a restart, reads the database instead.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from models import settings
from resolvers.otlp.mapping import Mapped

Trace = tuple[str, str]
FOOTPRINT = 3


class KeptSpans:
    """Spans by trace, up to `AGENTLOG_OTLP_KEPT_MB`, each counted as FOOTPRINT times its stored body (the body
    parsed, and its drafts); the trace stored longest ago goes first."""

    def __init__(self) -> None:
        self._traces: OrderedDict[Trace, dict[str, tuple[Mapped, int]]] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return sum(map(len, self._traces.values()))

    @property
    def bytes(self) -> int:
        return self._bytes

    def of(self, tenant: str, trace_id: str, span_ids: Iterable[str]) -> dict[str, Mapped]:
        """Those of the spans that are kept."""
        kept = self._traces.get((tenant, trace_id), {})
        return {sid: kept[sid][0] for sid in span_ids if sid in kept}

    def keep(self, tenant: str, trace_id: str, spans: Iterable[tuple[Mapped, int]]) -> None:
        """Keeps each span with the length of its stored body."""
        limit = settings.otlp_kept_bytes()
        if limit == 0:
            self.clear()
            return
        kept = self._traces.setdefault((tenant, trace_id), {})
        for span, stored in spans:
            if span.span_id not in kept:
                kept[span.span_id] = (span, FOOTPRINT * stored)
                self._bytes += FOOTPRINT * stored
        self._traces.move_to_end((tenant, trace_id))
        while self._bytes > limit:
            _, dropped = self._traces.popitem(last=False)
            self._bytes -= sum(size for _, size in dropped.values())

    def drop(self, tenant: str, trace_id: str, span_ids: Iterable[str]) -> None:
        kept = self._traces.get((tenant, trace_id))
        if kept is None:
            return
        for span_id in span_ids:
            found = kept.pop(span_id, None)
            if found is not None:
                self._bytes -= found[1]
        if not kept:
            del self._traces[(tenant, trace_id)]

    def clear(self) -> None:
        self._traces.clear()
        self._bytes = 0


KEPT = KeptSpans()
