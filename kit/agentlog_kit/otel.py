"""Running work over OpenTelemetry, live: `StartMarkers` exports a start marker when an agent span starts.

Exporters send a span when it ends, and an agent's span ends after everything it did, so without markers an
agent's task is recorded only once it has finished. With them the server opens the task as the agent starts and
places each span below it as it comes. Add it beside the processor that already exports your spans:

    provider.add_span_processor(StartMarkers(exporter))

Needs `opentelemetry-sdk` (`pip install agentlog-kit[otel]`); the rest of the kit does not.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as context_api
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import SpanContext, format_span_id

SPAN_TYPE, PENDING, PENDING_PARENT = "logfire.span_type", "pending_span", "logfire.pending_parent_id"


WORK = {"chat", "text_completion", "generate_content", "execute_tool", "LLM", "TOOL"}


def is_agent(attributes: Mapping[str, Any]) -> bool:
    """An agent span, by the GenAI conventions or OpenInference's."""
    return (attributes.get("gen_ai.operation.name") == "invoke_agent"
            or str(attributes.get("openinference.span.kind", "")).upper() == "AGENT")


def is_folded(attributes: Mapping[str, Any]) -> bool:
    """A span that is neither an agent, a model call nor a tool: the server folds it away."""
    return not is_agent(attributes) and attributes.get("gen_ai.operation.name") not in WORK and str(
        attributes.get("openinference.span.kind", "")).upper() not in WORK


class StartMarkers(SpanProcessor):
    """Exports, through `exporter`, a start marker in the form Logfire sends (a span of no length whose parent is
    the span it announces, with that span's attributes, `logfire.span_type = "pending_span"` and
    `logfire.pending_parent_id`) for each agent span as it starts, and for the spans between it and the agent
    span above it that started in this process, so the server knows where the agent's task goes; and for each
    span that is neither an agent, a model call nor a tool (a framework's turn, chain or step) started below one
    marked, so the work inside it is placed as it ends, not when the step does. Model call and tool spans get
    none: they are placed as they end.

    Markers are sent in batches every `delay_ms` (0.2 s), apart from the spans themselves."""

    def __init__(self, exporter: SpanExporter, delay_ms: int = 200) -> None:
        self._out = BatchSpanProcessor(exporter, schedule_delay_millis=delay_ms)
        self._ids = RandomIdGenerator()
        self._open: dict[tuple[int, int], Span] = {}
        self._marked: set[tuple[int, int]] = set()
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: context_api.Context | None = None) -> None:
        if not span.is_recording() or (span.attributes or {}).get(SPAN_TYPE) not in (None, "span"):
            return
        key = _key(span.get_span_context())
        with self._lock:
            self._open[key] = span
            attributes = span.attributes or {}
            below_marked = span.parent is not None and _key(span.parent) in self._marked
            if not is_agent(attributes) and not (below_marked and is_folded(attributes)):
                return
            chain = [span]
            while chain[-1].parent is not None and (up := self._open.get(_key(chain[-1].parent))) is not None:
                if _key(up.get_span_context()) in self._marked or not is_folded(up.attributes or {}):
                    break
                chain.append(up)
            self._marked.update(_key(s.get_span_context()) for s in chain)
        for started in reversed(chain):
            self._out.on_end(self._marker(started))

    def on_end(self, span: ReadableSpan) -> None:
        key = _key(span.get_span_context())
        with self._lock:
            self._open.pop(key, None)
            self._marked.discard(key)

    def _marker(self, span: Span) -> ReadableSpan:
        real = span.get_span_context()
        attributes = {**(span.attributes or {}), SPAN_TYPE: PENDING,
                      PENDING_PARENT: format_span_id(span.parent.span_id if span.parent else 0)}
        if (is_agent(attributes) and span.parent is not None and span.name
                and not any(attributes.get(k) for k in ("gen_ai.agent.name", "agent.name"))):
            attributes["agent.name"] = span.name
        return ReadableSpan(
            name=span.name,
            context=SpanContext(real.trace_id, self._ids.generate_span_id(), False, real.trace_flags),
            parent=real, resource=span.resource, attributes=attributes, kind=span.kind,
            start_time=span.start_time, end_time=span.start_time, instrumentation_scope=span.instrumentation_scope,
        )

    def shutdown(self) -> None:
        self._out.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._out.force_flush(timeout_millis)


def _key(context: SpanContext) -> tuple[int, int]:
    return context.trace_id, context.span_id
