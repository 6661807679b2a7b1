"""An OTLP/HTTP trace export's body, as the exporter sent it, to an ExportTraceServiceRequest.

Protobuf or JSON, gzip or plain; the decompressed size is held to the same cap as the body, so a small gzip
body cannot grow into a large one.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

PROTOBUF, JSON = "application/x-protobuf", "application/json"
ID_KEYS = ("traceId", "spanId", "parentSpanId")


class TooLarge(ValueError):
    pass


class Unreadable(ValueError):
    pass


def media_type(content_type: str | None) -> str | None:
    found = (content_type or "").split(";")[0].strip().lower()
    return found if found in (PROTOBUF, JSON) else None


def inflate(body: bytes, encoding: str | None, cap: int) -> bytes:
    encoding = (encoding or "identity").strip().lower()
    if encoding == "identity":
        return body
    if encoding != "gzip":
        raise Unreadable(f"Content-Encoding {encoding!r} is not taken; send gzip or nothing.")
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, cap + 1)
    except zlib.error as exc:
        raise Unreadable(f"the gzip body does not inflate: {exc}") from exc
    if len(out) > cap:
        raise TooLarge(f"the body inflates to more than {cap} bytes.")
    if not inflater.eof:
        raise Unreadable("the gzip body is cut short.")
    return out


def _ids_to_base64(value: Any) -> None:
    """OTLP/JSON writes trace and span ids as hex, where protobuf's JSON mapping expects base64."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ID_KEYS and isinstance(item, str):
                try:
                    value[key] = base64.b64encode(bytes.fromhex(item)).decode("ascii")
                except ValueError as exc:
                    raise Unreadable(f"{key} {item[:40]!r} is not hex.") from exc
            else:
                _ids_to_base64(item)
    elif isinstance(value, list):
        for item in value:
            _ids_to_base64(item)


def parse(body: bytes, media: str) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    if media == PROTOBUF:
        try:
            request.ParseFromString(body)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise Unreadable(f"the body is not an OTLP ExportTraceServiceRequest: {exc}") from exc
        return request
    try:
        document = json.loads(body.decode("utf-8"))
        _ids_to_base64(document)
        json_format.ParseDict(document, request, ignore_unknown_fields=True)
    except (UnicodeDecodeError, RecursionError, ValueError, json_format.ParseError, TypeError, AttributeError) as exc:
        raise Unreadable(f"the body is not an OTLP ExportTraceServiceRequest in JSON: {exc}") from exc
    return request


def answer(media: str, rejected: int, message: str | None) -> bytes:
    response = ExportTraceServiceResponse()
    if rejected:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message or ""
    if media == PROTOBUF:
        return response.SerializeToString()
    return json_format.MessageToJson(response, indent=None).encode("utf-8")
