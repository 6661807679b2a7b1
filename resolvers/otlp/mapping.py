"""From OpenTelemetry spans to agentlog's fields: the GenAI semantic conventions (old and new names) first,
OpenInference's next, and each framework's own ways (a `Read` naming its framework) after them, in one table.

Pure: a decoded span in, a `Mapped` span (or the reason it cannot be mapped) out. No database, no HTTP.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from models.errors import BadInput
from resolvers.write import checks, lines, sentences
from resolvers.write.draft import LineDraft

AGENT, LLM, TOOL, OTHER = "agent", "llm", "tool", "other"

OPERATIONS = {
    "invoke_agent": AGENT,
    "invoke_workflow": AGENT,
    "chat": LLM,
    "text_completion": LLM,
    "generate_content": LLM,
    "execute_tool": TOOL,
    "retrieval": TOOL,
}
OPENINFERENCE_KINDS = {"AGENT": AGENT, "LLM": LLM, "TOOL": TOOL, "RETRIEVER": TOOL}
# The Vercel AI SDK's telemetry names its spans by `ai.operationId` and sets no GenAI operation.
AI_SDK_OPERATIONS = {
    "ai.generateText": AGENT, "ai.streamText": AGENT, "ai.generateObject": AGENT, "ai.streamObject": AGENT,
    "ai.generateText.doGenerate": LLM, "ai.streamText.doStream": LLM, "ai.generateObject.doGenerate": LLM,
    "ai.streamObject.doStream": LLM, "ai.toolCall": TOOL,
}
RETRIEVAL, RETRIEVER = "retrieval", "RETRIEVER"
SPAN_NAME = "(the span's name)"
# LlamaIndex, through OpenInference, traces an agent's run as a CHAIN span named for its class, and the preparing of
# a model call's tools as an LLM span of its own that calls no model.
LLAMA_INDEX_RUN = re.compile(r"(?P<agent>FunctionAgent|ReActAgent|CodeActAgent|AgentWorkflow)\.run")
LLAMA_INDEX_NOT_A_CALL = "._prepare_chat_with_tools"


def _as_is(value: Any) -> Any:
    return value


class Nothing:
    """What a `Read` answers when the attribute is there but tells nothing of the field: no later row is asked."""


NOTHING = Nothing()


@dataclass(frozen=True, slots=True)
class Read:
    """A field told in a way that needs reading: `attribute` (the span's name when SPAN_NAME) turned into the field
    by `how`, which answers None when the value does not tell it (NOTHING when no later row may be asked either);
    only on spans carrying `when`, if named. A row naming its `framework` is that framework's quirk."""

    attribute: str
    how: Callable[[Any], Any] = _as_is
    framework: str | None = None
    when: str | None = None


def _text_of(message: Any) -> str | None:
    """A message's words: its `content` when text, else its text parts (`{"type": "text", "content": …}`)."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = message.get("parts") if isinstance(message.get("parts"), list) else content
    if not isinstance(parts, list):
        return None
    texts = [part.get("content", part.get("text")) for part in parts
             if isinstance(part, dict) and part.get("type") == "text"]
    return "\n\n".join(text for text in texts if isinstance(text, str)) or None


def _words_of(messages: Any, role: str) -> Any:
    """What the messages of this role say, as text; messages whose words are not text as they are."""
    if not isinstance(messages, list):
        return messages
    said = [_text_of(m) for m in messages if isinstance(m, dict) and m.get("role") == role]
    return "\n\n".join(text for text in said if text) or (messages or None)


def _request(messages: Any) -> Any:
    return _words_of(messages, "user")


def _answer(messages: Any) -> Any:
    return _words_of(messages, "assistant")


def _first_request(messages: Any) -> Any:
    """The request of a whole conversation: its messages before the first answer."""
    if not isinstance(messages, list):
        return None
    answered = next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
                    len(messages))
    return _request(messages[:answered])


OPERATION_NAMES = re.compile(r"(?:invoke_agent|invoke_workflow)(?: (?P<rest>.+))?")


def _without_operation(name: str) -> str | None:
    """`invoke_agent Estimator` -> `Estimator`; a span name of the operation alone tells nothing."""
    named = OPERATION_NAMES.fullmatch(name)
    return name or None if named is None else named["rest"]


def _agent_of(name: str) -> str | None:
    """The agent an `invoke_agent` span is named after."""
    return name[len("invoke_agent "):] or None if name.startswith("invoke_agent ") else None


def _of_run(name: str) -> str | None:
    """smolagents names an agent's span `Estimator.run`."""
    return name[:-len(".run")] or None if isinstance(name, str) and name.endswith(".run") else None


def _run_class(name: str) -> str | None:
    """LlamaIndex names an agent's run by its class: `FunctionAgent.run` -> `FunctionAgent`."""
    run = LLAMA_INDEX_RUN.fullmatch(name)
    return None if run is None else run["agent"]


def _not_of_a_run(name: str) -> Nothing | None:
    """A LlamaIndex run's `input.value` is its workflow's state (its start event only as a repr) and its
    `output.value` a shortened Python repr of its stop event: neither is the request or the answer."""
    return NOTHING if LLAMA_INDEX_RUN.fullmatch(name) else None


# An agent span whose request and answer are told only by its own model calls (a LlamaIndex run) carries this field.
FROM_ITS_CALLS = "from_its_calls"


def _last_request(messages: Any) -> str | None:
    """The words of the last user message: the request a model call was made for."""
    if not isinstance(messages, list):
        return None
    asked = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    return _text_of(asked[-1]) if asked else None


def told_by_its_calls(fields: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """An agent's fields with the `given` and `result` its own model calls tell, when its span tells neither and
    says so (FROM_ITS_CALLS): the request its first call was made for, the words its last call answered. `calls` are
    the bodies of the agent's own model calls (not its tools'); a value the kit's checks would refuse is left out."""
    if not fields.get(FROM_ITS_CALLS) or not calls:
        return fields
    ordered = sorted(calls, key=lambda call: (call["start"], call["end"]))
    given = fields.get("given") or _last_request(ordered[0]["fields"].get("messages"))
    result = fields.get("result") or _answer(ordered[-1]["fields"].get("response"))
    try:
        checks.text("given", given, checks.TEXT_CHARS)
    except BadInput:
        given = None
    if not isinstance(result, str):
        result = None
    try:
        checks.json_text("result", result)
    except BadInput:
        result = None
    return {**fields, "given": given, "result": result}


LLAMA_INDEX_OUTPUT = {"blocks", "tool_name", "raw_input", "raw_output", "is_error"}


def _kwargs_of(arguments: Any) -> Any:
    """LlamaIndex writes a tool's input as `{"kwargs": {…}}`, the call's arguments under `kwargs`."""
    if not isinstance(arguments, dict) or set(arguments) - {"args"} != {"kwargs"} or arguments.get("args"):
        return None
    return arguments["kwargs"]


def _raw_output(output: Any) -> Any:
    """LlamaIndex writes a tool's result as its `ToolOutput`; what the tool returned is its `raw_output`."""
    return output["raw_output"] if isinstance(output, dict) and set(output) == LLAMA_INDEX_OUTPUT else None


def _prompt(prompt: Any) -> Any:
    """The AI SDK's `ai.prompt`: `{"system": …, "prompt": "…"}` or `{"messages": […]}`."""
    if not isinstance(prompt, dict):
        return prompt
    return prompt["prompt"] if isinstance(prompt.get("prompt"), str) else _request(prompt.get("messages"))


def _task(arguments: Any) -> Any:
    """smolagents' `run` arguments: the task is the request."""
    return arguments.get("task") if isinstance(arguments, dict) else None


def _one_block(blocks: Any) -> Any:
    """Strands tells a tool's result as the tool's content blocks: what the tool returned is the one block's text or
    JSON (`[{"text": "1.0"}]` is `"1.0"`); several blocks are kept as they are."""
    if isinstance(blocks, list) and len(blocks) == 1 and isinstance(blocks[0], dict) and len(blocks[0]) == 1:
        kind, value = next(iter(blocks[0].items()))
        if kind in ("text", "json"):
            return value
    return None


SMOLAGENTS_CALL = {"args", "kwargs", "sanitize_inputs_outputs"}


def _called_with(arguments: Any) -> Any:
    """smolagents writes a tool's input as `Tool.__call__`'s own arguments; the call's are its `kwargs` (or its one
    positional argument)."""
    if not isinstance(arguments, dict) or set(arguments) != SMOLAGENTS_CALL:
        return None
    args = arguments["args"] if isinstance(arguments["args"], list) else [arguments["args"]]
    return arguments["kwargs"] or (args[0] if len(args) == 1 else args)


# Our field -> where it is told, the first present wins: an attribute, a flattened list (`name.*`), or a Read.
# Resource attributes are consulted only where RESOURCE says so, and never for the tenant.
ATTRIBUTES: dict[str, tuple[str | Read, ...]] = {
    "agent": (
        "gen_ai.agent.name", "agent.name", Read("agent_name", framework="pydantic-ai"),
        Read(SPAN_NAME, _of_run, framework="smolagents", when="smolagents.max_steps"),
        Read("ai.telemetry.metadata.agent", framework="ai-sdk"), Read(SPAN_NAME, _agent_of),
    ),
    "skill": (
        "agentlog.skill", Read(SPAN_NAME, _of_run, framework="smolagents", when="smolagents.max_steps"),
        Read("ai.telemetry.functionId", framework="ai-sdk"), Read(SPAN_NAME, _run_class, "llama-index"),
        Read(SPAN_NAME, _without_operation),
    ),
    "requester": ("agentlog.requester", "enduser.id"),
    "session": ("gen_ai.conversation.id", "session.id"),
    "given": (
        Read("gen_ai.input.messages", _request), Read("pydantic_ai.all_messages", _first_request, "pydantic-ai"),
        Read("input.value", _task, "smolagents", when="smolagents.max_steps"), Read("ai.prompt", _prompt, "ai-sdk"),
        Read(SPAN_NAME, _not_of_a_run, "llama-index"), "input.value",
    ),
    "result": (
        Read("gen_ai.output.messages", _answer), Read("final_result", framework="pydantic-ai"),
        Read("ai.response.text", framework="ai-sdk"), Read(SPAN_NAME, _not_of_a_run, "llama-index"), "output.value",
    ),
    "model": ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"),
    "provider": ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"),
    "input_tokens": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
    "output_tokens": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"),
    "cached_input_tokens": (
        "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
        "llm.token_count.prompt_details.cache_read",
    ),
    "cost_micros": ("agentlog.cost_micros",),
    "system_prompt": ("gen_ai.system_instructions",),
    "messages": (
        "gen_ai.input.messages", "gen_ai.prompt", "llm.input_messages.*",
        Read("ai.prompt.messages", framework="ai-sdk"), "input.value",
    ),
    "response": (
        "gen_ai.output.messages", "gen_ai.completion", "llm.output_messages.*",
        Read("ai.response.toolCalls", framework="ai-sdk"), Read("ai.response.text", framework="ai-sdk"), "output.value",
    ),
    "tool": ("gen_ai.tool.name", "tool.name", Read("ai.toolCall.name", framework="ai-sdk")),
    "tool_call_id": ("gen_ai.tool.call.id", "tool_call.id", Read("ai.toolCall.id", framework="ai-sdk")),
    "input": (
        "gen_ai.tool.call.arguments", "gen_ai.retrieval.query.text", Read("input.value", _called_with, "smolagents"),
        Read("input.value", _kwargs_of, "llama-index"), Read("ai.toolCall.args", framework="ai-sdk"), "input.value",
    ),
    "output": (
        Read("gen_ai.tool.call.result", _one_block, "strands", when="gen_ai.tool.status"),
        "gen_ai.tool.call.result", "gen_ai.retrieval.documents", "retrieval.documents.*",
        Read("ai.toolCall.result", framework="ai-sdk"), Read("output.value", _raw_output, "llama-index"),
        "output.value",
    ),
}
RESOURCE: dict[str, tuple[str, ...]] = {"agent": ("service.name",)}

# The older GenAI conventions put content in span events rather than attributes.
MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
# The conventions' event for content an exporter puts beside its span rather than on it (Strands does): its
# attributes (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`) are read as the span's.
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
PROMPT_EVENTS = {"gen_ai.content.prompt": "gen_ai.prompt"}
COMPLETION_EVENTS = {"gen_ai.content.completion": "gen_ai.completion"}
CHOICE_EVENT = "gen_ai.choice"
# An evaluation of an agent's work, told as an event of its span: it becomes a review by that evaluator.
EVALUATION_EVENTS = {"gen_ai.evaluation.result": ("gen_ai.evaluation.name", "gen_ai.evaluation.score.value",
                                                  "gen_ai.evaluation.score.label")}
EVALUATION_PREFIX = "gen_ai.evaluation."

FIELDS_BY_KIND = {
    AGENT: ("agent", "skill", "requester", "session", "given", "result"),
    LLM: ("model", "provider", "input_tokens", "output_tokens", "cached_input_tokens", "cost_micros",
          "system_prompt", "messages", "response"),
    TOOL: ("tool", "tool_call_id", "input", "output"),
}
COUNTS = {"input_tokens", "output_tokens", "cached_input_tokens", "cost_micros"}
TEXTS = {"agent", "skill", "requester", "session", "given", "model", "provider", "tool", "tool_call_id"}
ATTRIBUTE_BYTES = 1_000_000
STATUS_ERROR = 2
UNKNOWN = "unknown"
# The OpenAI Agents SDK, through OpenInference, traces a handoff as a TOOL span of this name that names no tool.
HANDOFF = re.compile(r"handoff to (?P<agent>.+)")
# A start marker, as Logfire sends one when a span starts: a span of no length whose parent is the real span,
# carrying the real span's attributes and, as hex, the real span's parent (all zeros for a root).
SPAN_TYPE, PENDING, PENDING_PARENT = "logfire.span_type", "pending_span", "logfire.pending_parent_id"
NO_SPAN = "0" * 16
SPAN_ID = re.compile(r"[0-9a-f]{16}")


class Hostile(ValueError):
    """A body no exporter would send: the whole request is refused."""


@dataclass(slots=True)
class Mapped:
    """A span as agentlog will record it: its place in the trace, its kind, and the fields of its kind."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    kind: str
    name: str = ""
    start_ns: int = 0
    end_ns: int = 0
    failed: bool = False
    status_message: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    drafts: tuple[LineDraft, ...] = ()
    marker: bool = False

    def body(self) -> dict[str, Any]:
        return {"name": self.name, "start": self.start_ns, "end": self.end_ns, "failed": self.failed,
                "statusMessage": self.status_message, "fields": self.fields}


NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def value_of(any_value: Any) -> Any:
    """An OTLP AnyValue as plain Python; a double that is not a finite number as its JSON spelling, so that
    everything kept of a span is plain JSON."""
    which = any_value.WhichOneof("value")
    if which is None:
        return None
    if which == "string_value":
        if len(any_value.string_value) > ATTRIBUTE_BYTES:
            raise Hostile(f"an attribute value is longer than {ATTRIBUTE_BYTES} characters")
        return any_value.string_value
    if which == "double_value":
        number = any_value.double_value
        return number if math.isfinite(number) else NON_FINITE[str(number)]
    if which == "array_value":
        return [value_of(v) for v in any_value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in any_value.kvlist_value.values}
    if which == "bytes_value":
        if len(any_value.bytes_value) > ATTRIBUTE_BYTES:
            raise Hostile(f"an attribute value is longer than {ATTRIBUTE_BYTES} bytes")
        return base64.b64encode(any_value.bytes_value).decode("ascii")
    return getattr(any_value, which)


def attributes_of(key_values: Any) -> dict[str, Any]:
    """The attributes as plain Python; a string that is not empty is the value set, so most attributes are
    taken without asking the message which value it holds."""
    attrs = {}
    for kv in key_values:
        value = kv.value
        text = value.string_value
        attrs[kv.key] = text if text and len(text) <= ATTRIBUTE_BYTES else value_of(value)
    return attrs


def kind_of(attrs: dict[str, Any], name: str = "") -> str:
    operation = attrs.get("gen_ai.operation.name")
    if operation in OPERATIONS:
        return OPERATIONS[operation]
    told = str(attrs.get("openinference.span.kind", "")).upper()
    if told == "CHAIN" and LLAMA_INDEX_RUN.fullmatch(name):
        return AGENT
    if told == "LLM" and name.endswith(LLAMA_INDEX_NOT_A_CALL):
        return OTHER
    return OPENINFERENCE_KINDS.get(told) or AI_SDK_OPERATIONS.get(attrs.get("ai.operationId"), OTHER)


def _first(attrs: dict[str, Any], sources: tuple[str | Read, ...], span_name: str = "") -> Any:
    for source in sources:
        if isinstance(source, Read):
            if source.when is not None and source.when not in attrs:
                continue
            told = span_name if source.attribute == SPAN_NAME else _json_or_text(attrs.get(source.attribute))
            value = None if told is None else source.how(told)
            if value is NOTHING:
                return None
        elif source.endswith(".*"):
            value = _unflattened(attrs, source[:-1])
        else:
            value = attrs.get(source)
        if value is not None:
            return value
    return None


JSON_STARTS = frozenset('[{"')


def _json_or_text(value: Any) -> Any:
    """Content attributes carry JSON as a string; a string that is not JSON (NaN and Infinity are not) is kept
    as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in JSON_STARTS:
        try:
            return json.loads(value, parse_constant=_not_json)
        except ValueError:
            return value
    return value


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _count(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadInput(f"{name} is not a number.", field=name)
    try:
        return int(value)
    except ValueError as exc:
        raise BadInput(f"{name} is not a number.", field=name) from exc


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


WRAPPERS = frozenset({"message", "message_content", "tool_call", "document"})
PARSED = frozenset({"arguments", "metadata"})


def _unflattened(attrs: dict[str, Any], prefix: str) -> list[Any] | None:
    """OpenInference's flattened lists as the structure they flatten: `llm.input_messages.0.message.role`,
    `….0.message.contents.0.message_content.text`, `….tool_calls.0.tool_call.function.arguments` (JSON, parsed),
    `retrieval.documents.0.document.id`."""
    root: dict[str, Any] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        path = [part for part in key[len(prefix):].split(".") if part not in WRAPPERS]
        node: Any = root
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                break
        else:
            node[path[-1]] = _json_or_text(value) if path[-1] in PARSED else value
    listed = _listed(root)
    return listed if isinstance(listed, list) and listed else None


def _listed(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    items = {key: _listed(value) for key, value in node.items()}
    if items and all(key.isdigit() for key in items):
        return [items[key] for key in sorted(items, key=int)]
    return items


def _event_content(span: Any) -> tuple[list[Any] | None, Any]:
    """(messages, response) told in span events by the older conventions."""
    messages: list[Any] = []
    choices: list[Any] = []
    for event in span.events:
        name = event.name
        if name in MESSAGE_EVENTS:
            attrs = attributes_of(event.attributes)
            role = attrs.get("role", MESSAGE_EVENTS[name])
            messages.append({"role": role, "content": _json_or_text(attrs.get("content"))})
        elif name in PROMPT_EVENTS:
            prompt = _json_or_text(attributes_of(event.attributes).get(PROMPT_EVENTS[name]))
            messages.extend(prompt if isinstance(prompt, list) else [prompt])
        elif name in COMPLETION_EVENTS:
            choices.append(_json_or_text(attributes_of(event.attributes).get(COMPLETION_EVENTS[name])))
        elif name == CHOICE_EVENT:
            choices.append({k: _json_or_text(v) for k, v in attributes_of(event.attributes).items()})
    response = None if not choices else choices[0] if len(choices) == 1 else choices
    return messages or None, response


def _details_of(span: Any) -> dict[str, Any]:
    """The attributes of the span's details events, a later event's over an earlier one's."""
    told: dict[str, Any] = {}
    for event in span.events:
        if event.name == DETAILS_EVENT:
            told.update(attributes_of(event.attributes))
    return told


def _evaluations(span: Any) -> list[dict[str, Any]]:
    """The evaluation results told of an agent's span, which become its reviews: each evaluator's name, score and
    label."""
    found = []
    for event in span.events:
        if event.name in EVALUATION_EVENTS:
            name, score, label = EVALUATION_EVENTS[event.name]
            attrs = attributes_of(event.attributes)
            evaluator, value = _text(attrs.get(name)), attrs.get(score)
            if not evaluator:
                continue
            found.append({
                "evaluator": checks.name(name, evaluator),
                "score": float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None,
                "label": checks.text(label, _text(attrs.get(label))),
            })
    return found


def _hex(raw: bytes, size: int) -> str | None:
    return raw.hex() if len(raw) == size and any(raw) else None


def map_span(resource_attrs: dict[str, Any], span: Any) -> Mapped:
    """The span mapped to its kind's fields, each checked as the kit's mutation checks it; BadInput says why
    it cannot be recorded."""
    trace_id, span_id = _hex(span.trace_id, 16), _hex(span.span_id, 8)
    if trace_id is None or span_id is None:
        raise BadInput("a span needs a 16-byte trace id and an 8-byte span id.",
                       field="traceId" if trace_id is None else "spanId")
    attrs = attributes_of(span.attributes)
    if span.events:
        attrs = {**_details_of(span), **attrs}
    kind = kind_of(attrs, span.name)
    mapped = Mapped(
        trace_id=trace_id, span_id=span_id, parent_span_id=_hex(span.parent_span_id, 8), kind=kind, name=span.name,
        start_ns=span.start_time_unix_nano, end_ns=max(span.end_time_unix_nano, span.start_time_unix_nano),
        failed=span.status.code == STATUS_ERROR, status_message=span.status.message or None,
    )
    if attrs.get(SPAN_TYPE) == PENDING:
        _as_marker(mapped, attrs)
    if kind == OTHER or (mapped.marker and kind != AGENT):
        return mapped
    for name in FIELDS_BY_KIND[kind]:
        value = _first(attrs, ATTRIBUTES[name], span.name)
        if value is None and name in RESOURCE:
            value = _first(resource_attrs, RESOURCE[name])
        if name in COUNTS:
            value = _count(str(ATTRIBUTES[name][0]), value)
        elif name in TEXTS:
            value = _text(value)
        else:
            value = _json_or_text(value)
        mapped.fields[name] = value
    _complete(mapped, attrs, span, resource_attrs)
    return mapped


def _as_marker(mapped: Mapped, attrs: dict[str, Any]) -> None:
    """A start marker stands for its real span: it takes that span's id and parent, and has not ended."""
    if mapped.parent_span_id is None:
        raise BadInput("a start marker's parent is the span it announces; this one has none.", field="parentSpanId")
    parent = str(attrs.get(PENDING_PARENT) or NO_SPAN).lower()
    if not SPAN_ID.fullmatch(parent):
        raise BadInput(f"{PENDING_PARENT} is no span id (16 hex digits).", field=PENDING_PARENT)
    mapped.span_id, mapped.parent_span_id = mapped.parent_span_id, None if parent == NO_SPAN else parent
    mapped.end_ns, mapped.failed, mapped.status_message, mapped.marker = mapped.start_ns, False, None, True


def _complete(mapped: Mapped, attrs: dict[str, Any], span: Any, resource_attrs: dict[str, Any]) -> None:
    """Defaults, content from the older places, and the kit's own checks, whose drafts are kept."""
    f = mapped.fields
    if mapped.kind == AGENT:
        f["agent"] = f["agent"] or UNKNOWN
        f["skill"] = f["skill"] or f["agent"]
        f["actor"] = _text(resource_attrs.get("service.name")) or f["agent"]
        for name in ("agent", "skill", "requester", "session", "actor"):
            checks.name(name, f[name])
        checks.text("given", f["given"], checks.TEXT_CHARS)
        checks.json_text("result", f["result"])
        f["evaluations"] = _evaluations(span)
        if LLAMA_INDEX_RUN.fullmatch(mapped.name):
            f[FROM_ITS_CALLS] = True
        return
    evaluations = _evaluations_as_told(span)
    if evaluations:
        f["evaluations"] = evaluations
    if mapped.kind == LLM:
        if f["messages"] is None or f["response"] is None:
            messages, response = _event_content(span)
            f["messages"] = f["messages"] if f["messages"] is not None else messages
            f["response"] = f["response"] if f["response"] is not None else response
        f["input_tokens"] = f["input_tokens"] or 0
        f["output_tokens"] = f["output_tokens"] or 0
        if f["model"] is None and not mapped.failed:
            raise BadInput("a model call span names no model (gen_ai.request.model or llm.model_name).",
                           field="gen_ai.request.model")
        if mapped.failed:
            f["model"] = f["model"] or UNKNOWN
            f["summary"] = sentences.model_call_failed(f["model"])
    else:
        _name_the_tool(mapped)
        retrieval = attrs.get("gen_ai.operation.name") == RETRIEVAL
        if retrieval or str(attrs.get("openinference.span.kind")).upper() == RETRIEVER:
            f["found"] = _ids_of(f["output"])
    f["duration_ms"] = (mapped.end_ns - mapped.start_ns) // 1_000_000
    f["is_error"] = mapped.failed
    mapped.drafts = drafts_of(mapped.kind, f)


def _evaluations_as_told(span: Any) -> list[dict[str, Any]]:
    """The GenAI conventions' evaluation results told on a span that is no agent's, kept with its content as told:
    `gen_ai.evaluation.name`, `….score.value`, `….score.label`, `….explanation`, without their prefix."""
    return [
        {key.removeprefix(EVALUATION_PREFIX): value for key, value in attributes_of(event.attributes).items()}
        for event in span.events if event.name in EVALUATION_EVENTS
    ]


def _ids_of(documents: Any) -> list[str]:
    """The ids of what a retrieval found, in its order."""
    if not isinstance(documents, list):
        return []
    return [str(d["id"]) for d in documents if isinstance(d, dict) and d.get("id") is not None]


def _name_the_tool(mapped: Mapped) -> None:
    """A tool span that names no tool is named by its span name; a handoff also says whom it handed to."""
    f = mapped.fields
    if f["tool"] is not None:
        return
    if not mapped.name.strip():
        raise BadInput("a tool span names no tool (gen_ai.tool.name, tool.name, or the span's name).",
                       field="gen_ai.tool.name")
    f["tool"] = mapped.name
    handoff = HANDOFF.fullmatch(mapped.name)
    if handoff:
        f["handed_to"] = handoff["agent"]


def drafts_of(kind: str, fields: dict[str, Any]) -> tuple[LineDraft, ...]:
    """The lines a model call or tool span becomes, checked as the kit's mutations check them."""
    if kind == LLM:
        return (lines.model_call(fields),)
    found = fields.get("found")
    if found is not None:
        result = sentences.retrieved(fields["tool"], found, bool(fields.get("is_error")))
        return lines.tool_call(fields), lines.tool_result({**fields, "summary": result})
    handed_to = fields.get("handed_to")
    if handed_to:
        result = sentences.handoff_result(handed_to, bool(fields.get("is_error")))
        return (lines.tool_call({**fields, "summary": sentences.handed_off(handed_to)}),
                lines.tool_result({**fields, "summary": result}))
    return lines.tool_call(fields), lines.tool_result(fields)


def map_request(request: Any) -> tuple[list[Mapped], int, str | None]:
    """Every span of an ExportTraceServiceRequest mapped, and how many could not be, with the first reason."""
    mapped, rejected, first = [], 0, None
    for resource_spans in request.resource_spans:
        resource_attrs = attributes_of(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                try:
                    mapped.append(map_span(resource_attrs, span))
                except BadInput as exc:
                    rejected += 1
                    first = first or f"span {span.span_id.hex() or '(no id)'}: {exc.message}"
    return mapped, rejected, first
