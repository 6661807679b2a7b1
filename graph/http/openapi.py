"""The OpenAPI document of the REST API: the session transcript, in the shapes its existing clients were built on."""

from __future__ import annotations

from typing import Any

from resolvers.read.session_transcript import SESSION_ID_CHARS, SESSION_ID_PATTERN

TRANSCRIPT_PATH = "/agentic/observability/sessions/{session_id}/transcript"


def _nullable(kind: str, title: str) -> dict[str, Any]:
    return {"anyOf": [{"type": kind}, {"type": "null"}], "title": title}


def _json(ref: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}


ROW = {
    "properties": {
        "event_timestamp": {"type": "string", "format": "date-time", "title": "Event Timestamp"},
        "agent_id": {"type": "string", "title": "Agent Id"},
        "iteration_id": {"type": "string", "title": "Iteration Id"},
        "session_id": _nullable("string", "Session Id"),
        "operation": {"type": "string", "enum": ["chat", "tool_call", "output"], "title": "Operation"},
        "provider": _nullable("string", "Provider"),
        "model": _nullable("string", "Model"),
        "input_tokens": {"type": "integer", "title": "Input Tokens", "default": 0},
        "output_tokens": {"type": "integer", "title": "Output Tokens", "default": 0},
        "tool_name": _nullable("string", "Tool Name"),
        "tool_call_id": _nullable("string", "Tool Call Id"),
        "duration_ms": {"type": "integer", "title": "Duration Ms", "default": 0},
        "status": {"type": "string", "title": "Status"},
        "error_code": _nullable("string", "Error Code"),
        "error_message": _nullable("string", "Error Message"),
        "payload_truncated": {"type": "boolean", "title": "Payload Truncated", "default": False},
        "payload_text": _nullable("string", "Payload Text"),
    },
    "additionalProperties": False,
    "type": "object",
    "required": ["event_timestamp", "agent_id", "iteration_id", "operation", "status"],
    "title": "ObservabilityTranscriptRow",
    "description": (
        "One row of a session's transcript: a model call (`chat`), a tool call with its result folded in "
        "(`tool_call`), or a task's end (`output`). `iteration_id` is the task's id, `agent_id` its agent. "
        "`payload_text` is at most 32,768 bytes of UTF-8; when cut, `payload_truncated` is true and the text ends "
        "with ` ... (truncated)`. It is null when the caller may not read content or none was kept."
    ),
}

RESPONSE = {
    "properties": {
        "session_id": {"type": "string", "title": "Session Id"},
        "rows": {"items": {"$ref": "#/components/schemas/ObservabilityTranscriptRow"}, "type": "array", "title": "Rows"},
        "truncated": {"type": "boolean", "title": "Truncated", "default": False},
    },
    "additionalProperties": False,
    "type": "object",
    "required": ["session_id", "rows"],
    "title": "ObservabilityTranscriptResponse",
    "description": (
        "The session's rows, oldest first (event time, then place in the record). `truncated` is true when the "
        "session has more rows than the server's row cap (AGENTLOG_TRANSCRIPT_ROW_CAP) and only the first were sent."
    ),
}

VALIDATION_ERROR = {
    "properties": {
        "loc": {"items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "type": "array", "title": "Location"},
        "msg": {"type": "string", "title": "Message"},
        "type": {"type": "string", "title": "Error Type"},
        "input": {"title": "Input"},
        "ctx": {"type": "object", "title": "Context"},
    },
    "type": "object",
    "required": ["loc", "msg", "type"],
    "title": "ValidationError",
}

HTTP_VALIDATION_ERROR = {
    "properties": {
        "detail": {"items": {"$ref": "#/components/schemas/ValidationError"}, "type": "array", "title": "Detail"},
    },
    "type": "object",
    "title": "HTTPValidationError",
}

UNAUTHORIZED = {
    "properties": {"detail": {"type": "string", "title": "Detail"}},
    "type": "object",
    "required": ["detail"],
    "title": "Unauthorized",
}

TRANSCRIPT_OPERATION = {
    "tags": ["Agents Observability"],
    "summary": "Get Observability Session Transcript",
    "description": (
        "Full transcript timeline for one chat session: the lines of the session's tasks and everything under "
        "them that the caller may see, oldest first. A session of another tenant answers exactly like one that "
        "does not exist: 200 with no rows."
    ),
    "operationId": "getAgenticObservabilitySessionTranscript",
    "parameters": [
        {
            "name": "session_id",
            "in": "path",
            "required": True,
            "schema": {
                "type": "string",
                "maxLength": SESSION_ID_CHARS,
                "pattern": SESSION_ID_PATTERN,
                "title": "Session Id",
            },
        }
    ],
    "responses": {
        "200": {"description": "Successful Response", "content": _json("ObservabilityTranscriptResponse")},
        "401": {"description": "Missing or bad bearer token", "content": _json("Unauthorized")},
        "422": {"description": "Validation Error", "content": _json("HTTPValidationError")},
    },
    "security": [{"FronteggHTTPAuthentication": []}],
}

DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "agentlog REST API",
        "description": "The session-transcript read of agentlog, for clients of the observability transcript API.",
        "version": "1.0.0",
    },
    "security": [],
    "tags": [{"name": "Agents Observability", "description": "Read-only views over the record of agents' work."}],
    "paths": {TRANSCRIPT_PATH: {"get": TRANSCRIPT_OPERATION}},
    "components": {
        "schemas": {
            "ObservabilityTranscriptResponse": RESPONSE,
            "HTTPValidationError": HTTP_VALIDATION_ERROR,
            "ObservabilityTranscriptRow": ROW,
            "ValidationError": VALIDATION_ERROR,
            "Unauthorized": UNAUTHORIZED,
        },
        "securitySchemes": {"FronteggHTTPAuthentication": {"type": "http", "scheme": "bearer"}},
    },
}
