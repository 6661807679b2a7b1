"""Spans built by hand, as an exporter would send them, for the tests of the mapping and the endpoint."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, (list, dict)):
        return AnyValue(string_value=json.dumps(value))
    return AnyValue(string_value=str(value))


def new_trace_id() -> bytes:
    return os.urandom(16)


def new_span_id() -> bytes:
    return os.urandom(8)


def span(trace_id: bytes, name: str, attributes: dict[str, Any], parent: bytes = b"", span_id: bytes | None = None,
         error: bool = False, start_ns: int | None = None, duration_ns: int = 5_000_000,
         events: list[tuple[str, dict[str, Any]]] = ()) -> Span:
    start = start_ns or time.time_ns()
    made = Span(
        trace_id=trace_id, span_id=span_id or new_span_id(), parent_span_id=parent, name=name,
        start_time_unix_nano=start, end_time_unix_nano=start + duration_ns,
        attributes=[KeyValue(key=k, value=any_value(v)) for k, v in attributes.items()],
        status=Status(code=Status.STATUS_CODE_ERROR if error else Status.STATUS_CODE_OK),
    )
    for event_name, event_attrs in events:
        made.events.add(name=event_name, time_unix_nano=start,
                        attributes=[KeyValue(key=k, value=any_value(v)) for k, v in event_attrs.items()])
    return made


def export(*spans: Span, resource: dict[str, Any] | None = None) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    for key, value in (resource or {"service.name": "workshop"}).items():
        rs.resource.attributes.add(key=key, value=any_value(value))
    rs.scope_spans.add().spans.extend(spans)
    return request


def agent(trace_id: bytes, name: str = "Estimator", parent: bytes = b"", **attrs: Any) -> Span:
    """An agent's span, long enough to hold the spans made after it."""
    fields = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, **attrs}
    return span(trace_id, f"invoke_agent {name}", fields, parent=parent, duration_ns=1_000_000_000)


def chat(trace_id: bytes, parent: bytes, model: str = "Everyday", **attrs: Any) -> Span:
    fields = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model, "gen_ai.provider.name": "scripted",
              "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30, **attrs}
    return span(trace_id, f"chat {model}", fields, parent=parent)


def tool(trace_id: bytes, parent: bytes, name: str = "PartsFor", **attrs: Any) -> Span:
    fields = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": "c1",
              "gen_ai.tool.call.arguments": {"fault": "rear brake"}, "gen_ai.tool.call.result": ["pads"], **attrs}
    return span(trace_id, f"execute_tool {name}", fields, parent=parent)


def marker(real: Span) -> Span:
    """The start marker Logfire sends for `real` as it starts: a span of no length whose parent is `real`, with
    `real`'s attributes, its name, and its parent's id as hex."""
    made = Span(
        trace_id=real.trace_id, span_id=new_span_id(), parent_span_id=real.span_id, name=real.name,
        start_time_unix_nano=real.start_time_unix_nano, end_time_unix_nano=real.start_time_unix_nano,
    )
    made.attributes.extend(real.attributes)
    made.attributes.add(key="logfire.span_type", value=AnyValue(string_value="pending_span"))
    made.attributes.add(key="logfire.pending_parent_id",
                        value=AnyValue(string_value=(real.parent_span_id or bytes(8)).hex()))
    return made
