"""The attribute table: GenAI (old and new names) and OpenInference spans to agentlog's fields."""

import json

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from models.errors import BadInput
from resolvers.otlp.ingest import body_text
from resolvers.otlp.mapping import (
    AGENT, ATTRIBUTES, LLM, OTHER, SPAN_NAME, TOOL, Read, map_request, map_span, told_by_its_calls,
)
from resolvers.write.checks import TEXT_CHARS
from tests.otlp_spans import agent, chat, export, new_span_id, new_trace_id, span
from tests.shop import Shop
from tests.test_metrics import sample, scrape

RESOURCE = {"service.name": "workshop"}


def test_every_kind_of_span_is_recognised_by_both_conventions_and_the_ai_sdks_operations():
    t = new_trace_id()
    kinds = {
        "invoke_agent": AGENT, "chat": LLM, "text_completion": LLM, "generate_content": LLM, "execute_tool": TOOL,
    }
    for operation, kind in kinds.items():
        attrs = {"gen_ai.operation.name": operation, "gen_ai.request.model": "m", "gen_ai.tool.name": "x"}
        assert map_span(RESOURCE, span(t, operation, attrs)).kind == kind
    for oi_kind, kind in {"AGENT": AGENT, "LLM": LLM, "TOOL": TOOL, "CHAIN": OTHER}.items():
        assert map_span(RESOURCE, span(t, "x", {"openinference.span.kind": oi_kind, "llm.model_name": "m",
                                                 "tool.name": "x"})).kind == kind
    for operation, kind in {"ai.generateText": AGENT, "ai.streamText.doStream": LLM, "ai.toolCall": TOOL}.items():
        assert map_span(RESOURCE, span(t, operation, {"ai.operationId": operation, "gen_ai.request.model": "m",
                                                       "ai.toolCall.name": "x"})).kind == kind
    assert map_span(RESOURCE, span(t, "HTTP GET", {"http.method": "GET"})).kind == OTHER


@pytest.mark.parametrize("attrs", [
    {"gen_ai.usage.input_tokens": 11, "gen_ai.usage.output_tokens": 7, "gen_ai.provider.name": "acme"},
    {"gen_ai.usage.prompt_tokens": 11, "gen_ai.usage.completion_tokens": 7, "gen_ai.system": "acme"},
    {"llm.token_count.prompt": 11, "llm.token_count.completion": 7, "llm.provider": "acme"},
])
def test_tokens_and_provider_come_from_old_and_new_names(attrs):
    t = new_trace_id()
    fields = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", **attrs}
    mapped = map_span(RESOURCE, span(t, "chat", fields))

    assert (mapped.fields["input_tokens"], mapped.fields["output_tokens"]) == (11, 7)
    assert mapped.fields["provider"] == "acme"


def test_the_response_model_beats_the_requested_one():
    mapped = map_span(RESOURCE, chat(new_trace_id(), new_span_id(), **{"gen_ai.response.model": "Everyday-2"}))

    assert mapped.fields["model"] == "Everyday-2"


def test_model_call_content_from_attributes():
    mapped = map_span(RESOURCE, chat(new_trace_id(), new_span_id(), **{
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "T-7?"}]}],
        "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "One hour."}]}],
        "gen_ai.system_instructions": "You estimate bicycle repairs.",
    }))

    assert mapped.fields["messages"][0]["parts"][0]["content"] == "T-7?"
    assert mapped.fields["response"][0]["parts"][0]["content"] == "One hour."
    assert mapped.fields["system_prompt"] == "You estimate bicycle repairs."


def test_model_call_content_from_the_older_span_events():
    mapped = map_span(RESOURCE, span(new_trace_id(), "chat m", {"gen_ai.operation.name": "chat",
                                                                 "gen_ai.request.model": "m"}, events=[
        ("gen_ai.system.message", {"content": "You estimate."}),
        ("gen_ai.user.message", {"content": "T-7?"}),
        ("gen_ai.choice", {"index": 0, "finish_reason": "stop", "message": {"content": "One hour."}}),
    ]))

    assert mapped.fields["messages"] == [{"role": "system", "content": "You estimate."},
                                         {"role": "user", "content": "T-7?"}]
    assert mapped.fields["response"]["message"] == {"content": "One hour."}


DETAILS = "gen_ai.client.inference.operation.details"


def test_content_told_in_the_conventions_details_events_is_read_as_the_spans_own():
    asked = [{"role": "user", "parts": [{"type": "text", "content": "Parts for T-7?"}]}]
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "Brake pads."}]}]
    told = [(DETAILS, {"gen_ai.input.messages": asked}), (DETAILS, {"gen_ai.output.messages": said})]
    t = new_trace_id()
    run = map_span(RESOURCE, span(t, "invoke_agent PartsClerk", {"gen_ai.operation.name": "invoke_agent"}, events=told))
    call = map_span(RESOURCE, span(t, "chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
                                   events=told))

    assert (run.fields["agent"], run.fields["given"], run.fields["result"]) == ("PartsClerk", "Parts for T-7?",
                                                                                "Brake pads.")
    assert (call.fields["messages"], call.fields["response"]) == (asked, said)


def test_a_spans_own_attribute_comes_before_its_details_event():
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "Brake pads."}]}]
    other = [{"role": "assistant", "parts": [{"type": "text", "content": "Cables."}]}]
    told = span(new_trace_id(), "chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                           "gen_ai.output.messages": said},
                events=[(DETAILS, {"gen_ai.output.messages": other})])

    assert map_span(RESOURCE, told).fields["response"] == said


def test_openinference_content_and_flattened_messages():
    mapped = map_span(RESOURCE, span(new_trace_id(), "llm", {
        "openinference.span.kind": "LLM", "llm.model_name": "m",
        "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "T-7?",
        "output.value": "One hour.",
    }))

    assert mapped.fields["messages"] == [{"role": "user", "content": "T-7?"}]
    assert mapped.fields["response"] == "One hour."


def test_agent_fields_and_their_fallbacks():
    t = new_trace_id()
    named = map_span(RESOURCE, agent(t, "Estimator", **{"agentlog.skill": "EstimateRepair", "enduser.id": "mia",
                                                         "gen_ai.conversation.id": "s-1"}))
    bare = map_span(RESOURCE, span(t, "agent run", {"openinference.span.kind": "AGENT", "session.id": "s-2"}))

    assert (named.fields["agent"], named.fields["skill"], named.fields["requester"], named.fields["session"]) == (
        "Estimator", "EstimateRepair", "mia", "s-1")
    assert (bare.fields["agent"], bare.fields["skill"], bare.fields["session"]) == ("workshop", "agent run", "s-2")


def test_usage_on_agent_spans_is_not_taken():
    mapped = map_span(RESOURCE, agent(new_trace_id(), **{"gen_ai.usage.input_tokens": 999}))

    assert "input_tokens" not in mapped.fields


def test_a_tool_span_with_error_status_is_an_error_result():
    mapped = map_span(RESOURCE, span(new_trace_id(), "execute_tool PartsFor", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "PartsFor", "gen_ai.tool.call.id": "c9",
    }, error=True))

    assert mapped.failed and mapped.fields["tool"] == "PartsFor" and mapped.fields["tool_call_id"] == "c9"


def test_a_tool_call_is_given_the_calls_arguments_never_the_tools_schema():
    openinference = map_span(RESOURCE, span(new_trace_id(), "get_weather", {
        "openinference.span.kind": "TOOL", "tool.name": "get_weather",
        "tool.parameters": '{"properties": {"city": {"type": "string"}}, "title": "get_weather_args"}',
        "input.value": '{"city": "Paris"}', "output.value": "Sunny in Paris.",
    }))
    genai = map_span(RESOURCE, span(new_trace_id(), "execute_tool get_weather", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.definitions": '[{"name": "get_weather", "parameters": {"type": "object"}}]',
        "gen_ai.tool.call.arguments": '{"city": "Oslo"}', "gen_ai.tool.call.result": '{"sky": "grey"}',
    }))
    schema_only = map_span(RESOURCE, span(new_trace_id(), "get_weather", {
        "openinference.span.kind": "TOOL", "tool.name": "get_weather", "tool.parameters": '{"type": "object"}',
    }))

    assert (openinference.fields["input"], openinference.fields["output"]) == ({"city": "Paris"}, "Sunny in Paris.")
    assert (genai.fields["input"], genai.fields["output"]) == ({"city": "Oslo"}, {"sky": "grey"})
    assert schema_only.fields["input"] is None
    assert json.loads(openinference.drafts[0].payload) == {"city": "Paris"}


def test_a_handoff_is_a_tool_call_whose_sentence_names_the_agent_handed_to():
    mapped = map_span(RESOURCE, span(new_trace_id(), "handoff to Reporter", {
        "openinference.span.kind": "TOOL", "input.value": "Triage", "output.value": "Reporter",
    }))

    call, result = mapped.drafts
    assert mapped.kind == TOOL and mapped.fields["tool"] == "handoff to Reporter"
    assert (call.kind, call.summary) == ("TOOL_CALL", "It handed the work to Reporter.")
    assert (result.kind, result.summary) == ("TOOL_RESULT", "Reporter took the work over.")
    assert json.loads(body_text(mapped))["fields"]["handed_to"] == "Reporter"


def test_a_failed_handoff_says_so():
    mapped = map_span(RESOURCE, span(new_trace_id(), "handoff to Reporter", {"openinference.span.kind": "TOOL"},
                                     error=True))

    assert mapped.drafts[1].summary == "The handoff to Reporter failed." and mapped.fields["is_error"] is True


def test_a_failed_model_call_is_recorded_as_failed_even_when_it_names_no_model():
    t = new_trace_id()
    unnamed = map_span(RESOURCE, span(t, "response", {"openinference.span.kind": "LLM"}, error=True))
    named = map_span(RESOURCE, span(t, "generation", {"openinference.span.kind": "LLM", "llm.model_name": "m"},
                                    error=True))

    assert (unnamed.fields["model"], unnamed.drafts[0].summary) == ("unknown", "The call to unknown failed.")
    assert (named.fields["model"], named.drafts[0].summary) == ("m", "The call to m failed.")
    assert named.drafts[0].input_tokens == 0


def test_a_tool_span_naming_no_tool_is_named_by_its_span():
    mapped = map_span(RESOURCE, span(new_trace_id(), "lookup_parts", {"openinference.span.kind": "TOOL"}))

    assert mapped.fields["tool"] == "lookup_parts"
    assert "handed_to" not in mapped.fields


REJECTED = {
    "no model": lambda t: span(t, "chat", {"gen_ai.operation.name": "chat"}),
    "a negative count": lambda t: span(t, "chat", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                                   "gen_ai.usage.input_tokens": -3}),
    "a count that is no number": lambda t: chat(t, b"", **{"gen_ai.usage.output_tokens": "many"}),
    "no tool and no span name": lambda t: span(t, "", {"gen_ai.operation.name": "execute_tool"}),
    "a name too long": lambda t: span(t, "x", {"openinference.span.kind": "TOOL", "tool.name": "x" * 201}),
    "no span id": lambda t: span(t, "x", {}, span_id=b"\0" * 8),
    "content not Unicode": lambda t: chat(t, b"", **{"gen_ai.output.messages": '["\\ud800"]'}),
}


def test_spans_that_cannot_be_recorded_are_rejected_with_a_reason():
    t = new_trace_id()
    request = export(chat(t, new_span_id()), *(make(t) for make in REJECTED.values()))

    mapped, rejected, message = map_request(request)

    assert len(mapped) == 1 and rejected == len(REJECTED)
    assert "no model" in message


@pytest.mark.parametrize("reason", REJECTED)
async def test_each_rejection_is_answered_in_partial_success_and_counted(client, reason):
    shop = Shop(client)
    await shop.setup()
    t = new_trace_id()
    root = agent(t)
    before = await scrape(client)

    response = await client.http.post(
        "/v1/traces", content=export(root, REJECTED[reason](t)).SerializeToString(),
        headers={"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {shop.kit}"},
    )
    answer = ExportTraceServiceResponse.FromString(response.content)
    after = await scrape(client)

    assert response.status_code == 200
    assert answer.partial_success.rejected_spans == 1 and answer.partial_success.error_message
    for outcome, count in (("taken", 1), ("rejected", 1)):
        grew = sample(after, "agentlog_otlp_spans_total", outcome=outcome) - sample(
            before, "agentlog_otlp_spans_total", outcome=outcome)
        assert grew == count


def test_a_span_without_usage_counts_zero_tokens():
    mapped = map_span(RESOURCE, span(new_trace_id(), "chat", {"gen_ai.operation.name": "chat",
                                                               "gen_ai.request.model": "m"}))

    assert (mapped.fields["input_tokens"], mapped.fields["output_tokens"]) == (0, 0)


def test_the_table_names_each_field_by_at_least_one_attribute():
    assert all(names for names in ATTRIBUTES.values())
    with pytest.raises(BadInput):
        map_span(RESOURCE, span(new_trace_id(), "chat", {"gen_ai.operation.name": "chat"}))


def _strict(text: str):
    def refuse(constant):
        raise ValueError(constant)
    return json.loads(text, parse_constant=refuse)


def test_numbers_json_cannot_hold_are_kept_as_their_spelling_and_bodies_stay_plain_json():
    t = new_trace_id()
    mapped = map_span(RESOURCE, chat(t, new_span_id(), **{
        "gen_ai.input.messages": '[{"role": "user", "content": NaN}]', "gen_ai.output.messages": float("inf"),
        "gen_ai.system_instructions": float("nan"),
    }))

    assert mapped.fields["messages"] == '[{"role": "user", "content": NaN}]'
    assert (mapped.fields["response"], mapped.fields["system_prompt"]) == ("Infinity", "NaN")
    assert _strict(body_text(mapped)) == json.loads(json.dumps(mapped.body()))
    assert _strict(mapped.drafts[0].payload)["response"] == "Infinity"


def test_a_count_that_is_not_finite_is_rejected_as_not_a_number():
    request = export(chat(new_trace_id(), new_span_id(), **{"gen_ai.usage.input_tokens": float("inf")}),
                     chat(new_trace_id(), new_span_id(), **{"gen_ai.usage.output_tokens": float("nan")}))

    mapped, rejected, message = map_request(request)

    assert (mapped, rejected) == ([], 2)
    assert "is not a number" in message


def test_a_body_orjson_cannot_write_is_written_by_the_general_encoder():
    big = 2**70
    mapped = map_span(RESOURCE, chat(new_trace_id(), new_span_id(), **{
        "gen_ai.output.messages": f'[{{"role": "assistant", "content": {big}}}]'}))

    assert json.loads(body_text(mapped))["fields"]["response"] == [{"role": "assistant", "content": big}]


def test_content_with_an_unpaired_surrogate_is_rejected_not_a_crash():
    request = export(chat(new_trace_id(), new_span_id(), **{
        "gen_ai.output.messages": '[{"role": "assistant", "content": "\\ud800"}]'}))

    mapped, rejected, message = map_request(request)

    assert (mapped, rejected) == ([], 1)
    assert "not Unicode" in message


def test_an_evaluation_of_an_agents_work_is_kept_with_its_evaluator_score_and_label():
    evaluated = span(new_trace_id(), "invoke_agent Estimator", {"gen_ai.operation.name": "invoke_agent",
                                                                  "gen_ai.agent.name": "Estimator"}, events=[
        ("gen_ai.evaluation.result", {"gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.8,
                                      "gen_ai.evaluation.score.label": "relevant"}),
        ("gen_ai.evaluation.result", {"gen_ai.evaluation.score.value": 1}),
    ])

    mapped = map_span(RESOURCE, evaluated)

    assert mapped.fields["evaluations"] == [{"evaluator": "relevance", "score": 0.8, "label": "relevant"}]


PARTS_ASKED = [{"role": "user", "parts": [{"type": "text", "content": "Parts for T-7?"}]}]
PARTS_SAID = [{"role": "assistant", "parts": [{"type": "text", "content": "Brake pads."}]}]
SMOLAGENTS_RUN = {"smolagents.max_steps": 4, "openinference.span.kind": "AGENT"}

LLAMA_INDEX_RUN = {"openinference.span.kind": "CHAIN", "input.value": {"start_event": "AgentWorkflowStartEvent()"},
                   "output.value": "StopEvent(result=AgentOutput(response=ChatMessage(role=<MessageRole.ASSISTANT..."}
LLAMA_INDEX_TOOL = {"openinference.span.kind": "TOOL", "tool.name": "parts_for"}

STRANDS_TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "parts_for",
                "gen_ai.tool.status": "success"}

AI_SDK_RUN = {"ai.operationId": "ai.generateText", "ai.telemetry.functionId": "estimate-repair"}
AI_SDK_CALL = {"ai.operationId": "ai.generateText.doGenerate", "gen_ai.request.model": "m"}
AI_SDK_TOOL = {"ai.operationId": "ai.toolCall", "ai.toolCall.name": "partsFor", "ai.toolCall.id": "call-2"}

# (field, framework, attribute) -> a span telling the field only the framework's way, and what the field then is.
QUIRKS = {
    ("agent", "pydantic-ai", "agent_name"): (
        span(new_trace_id(), "agent run", {"gen_ai.operation.name": "invoke_agent", "agent_name": "PartsClerk"}),
        "PartsClerk"),
    ("agent", "smolagents", SPAN_NAME): (span(new_trace_id(), "PartsClerk.run", SMOLAGENTS_RUN), "PartsClerk"),
    ("skill", "smolagents", SPAN_NAME): (span(new_trace_id(), "PartsClerk.run", SMOLAGENTS_RUN), "PartsClerk"),
    ("given", "pydantic-ai", "pydantic_ai.all_messages"): (
        agent(new_trace_id(), "PartsClerk", **{"pydantic_ai.all_messages": PARTS_ASKED + PARTS_SAID + PARTS_ASKED}),
        "Parts for T-7?"),
    ("given", "smolagents", "input.value"): (
        span(new_trace_id(), "PartsClerk.run", {**SMOLAGENTS_RUN, "input.value": {"task": "Parts for T-7?",
                                                                                  "stream": False}}),
        "Parts for T-7?"),
    ("result", "pydantic-ai", "final_result"): (
        agent(new_trace_id(), "PartsClerk", final_result="Brake pads."), "Brake pads."),
    ("input", "smolagents", "input.value"): (
        span(new_trace_id(), "SimpleTool", {"openinference.span.kind": "TOOL", "tool.name": "parts_for",
                                            "input.value": {"args": [], "sanitize_inputs_outputs": True,
                                                            "kwargs": {"fault": "rear brake"}}}),
        {"fault": "rear brake"}),
    ("skill", "llama-index", SPAN_NAME): (span(new_trace_id(), "FunctionAgent.run", LLAMA_INDEX_RUN), "FunctionAgent"),
    ("given", "llama-index", SPAN_NAME): (span(new_trace_id(), "FunctionAgent.run", LLAMA_INDEX_RUN), None),
    ("result", "llama-index", SPAN_NAME): (span(new_trace_id(), "FunctionAgent.run", LLAMA_INDEX_RUN), None),
    ("input", "llama-index", "input.value"): (
        span(new_trace_id(), "FunctionTool.acall",
             {**LLAMA_INDEX_TOOL, "input.value": {"kwargs": {"fault": "rear brake"}}}),
        {"fault": "rear brake"}),
    ("output", "llama-index", "output.value"): (
        span(new_trace_id(), "FunctionTool.acall", {**LLAMA_INDEX_TOOL, "output.value": {
            "blocks": [{"text": "['brake pads']"}], "tool_name": "parts_for", "is_error": False,
            "raw_input": {"args": [], "kwargs": {"fault": "rear brake"}}, "raw_output": ["brake pads"]}}),
        ["brake pads"]),
    ("output", "strands", "gen_ai.tool.call.result"): (
        span(new_trace_id(), "execute_tool parts_for", {**STRANDS_TOOL, "gen_ai.tool.call.result": [
            {"json": ["brake pads"]}]}),
        ["brake pads"]),
    ("agent", "ai-sdk", "ai.telemetry.metadata.agent"): (
        span(new_trace_id(), "ai.generateText", {**AI_SDK_RUN, "ai.telemetry.metadata.agent": "Estimator"}),
        "Estimator"),
    ("skill", "ai-sdk", "ai.telemetry.functionId"): (span(new_trace_id(), "ai.generateText", AI_SDK_RUN),
                                                     "estimate-repair"),
    ("given", "ai-sdk", "ai.prompt"): (
        span(new_trace_id(), "ai.generateText", {**AI_SDK_RUN, "ai.prompt": {"system": "You estimate.",
                                                                               "prompt": "Parts for T-7?"}}),
        "Parts for T-7?"),
    ("result", "ai-sdk", "ai.response.text"): (
        span(new_trace_id(), "ai.generateText", {**AI_SDK_RUN, "ai.response.text": "Brake pads."}), "Brake pads."),
    ("messages", "ai-sdk", "ai.prompt.messages"): (
        span(new_trace_id(), "ai.generateText.doGenerate", {**AI_SDK_CALL, "ai.prompt.messages": [
            {"role": "user", "content": [{"type": "text", "text": "Parts for T-7?"}]}]}),
        [{"role": "user", "content": [{"type": "text", "text": "Parts for T-7?"}]}]),
    ("response", "ai-sdk", "ai.response.toolCalls"): (
        span(new_trace_id(), "ai.generateText.doGenerate", {**AI_SDK_CALL, "ai.response.toolCalls": [
            {"toolCallId": "call-2", "toolName": "partsFor", "input": '{"fault":"rear brake"}'}]}),
        [{"toolCallId": "call-2", "toolName": "partsFor", "input": '{"fault":"rear brake"}'}]),
    ("response", "ai-sdk", "ai.response.text"): (
        span(new_trace_id(), "ai.generateText.doGenerate", {**AI_SDK_CALL, "ai.response.text": "Brake pads."}),
        "Brake pads."),
    ("tool", "ai-sdk", "ai.toolCall.name"): (span(new_trace_id(), "ai.toolCall", AI_SDK_TOOL), "partsFor"),
    ("tool_call_id", "ai-sdk", "ai.toolCall.id"): (span(new_trace_id(), "ai.toolCall", AI_SDK_TOOL), "call-2"),
    ("input", "ai-sdk", "ai.toolCall.args"): (
        span(new_trace_id(), "ai.toolCall", {**AI_SDK_TOOL, "ai.toolCall.args": {"fault": "rear brake"}}),
        {"fault": "rear brake"}),
    ("output", "ai-sdk", "ai.toolCall.result"): (
        span(new_trace_id(), "ai.toolCall", {**AI_SDK_TOOL, "ai.toolCall.result": ["brake pads"]}), ["brake pads"]),
}


def test_every_framework_quirk_in_the_table_has_its_example_here():
    rows = {(name, source.framework, source.attribute) for name, sources in ATTRIBUTES.items() for source in sources
            if isinstance(source, Read) and source.framework}

    assert rows == set(QUIRKS)


@pytest.mark.parametrize("row", QUIRKS, ids=" / ".join)
def test_each_framework_quirk_is_read_as_its_row_says(row):
    name, _, _ = row
    told, expected = QUIRKS[row]

    assert map_span(RESOURCE, told).fields[name] == expected


def test_a_llama_index_run_is_an_agent_and_its_preparing_of_tools_no_model_call():
    t = new_trace_id()
    run = map_span(RESOURCE, span(t, "FunctionAgent.run", LLAMA_INDEX_RUN))
    step = map_span(RESOURCE, span(t, "BaseWorkflowAgent.run_agent_step", {"openinference.span.kind": "CHAIN"}))
    preparing = map_span(RESOURCE, span(t, "OpenAI._prepare_chat_with_tools", {"openinference.span.kind": "LLM",
                                                                               "llm.model_name": "gpt-4o"}))

    assert (run.kind, step.kind, preparing.kind) == (AGENT, OTHER, OTHER)


def _call(start: int, messages: list, response: list) -> dict:
    return {"start": start, "end": start + 1, "fields": {"messages": messages, "response": response}}


def test_a_llama_index_run_is_given_its_first_calls_request_and_holds_its_last_calls_answer():
    run = map_span(RESOURCE, span(new_trace_id(), "FunctionAgent.run", LLAMA_INDEX_RUN)).fields
    first = _call(1, [{"role": "system", "content": "You estimate."}, {"role": "user", "content": "Hello?"},
                      {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Parts for T-7?"}],
                  [{"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "parts_for"}}]}])
    last = _call(3, first["fields"]["messages"], [{"role": "assistant", "content": "Brake pads."}])
    told = told_by_its_calls(run, [last, first])

    assert (told["given"], told["result"]) == ("Parts for T-7?", "Brake pads.")
    assert (told["agent"], told["skill"]) == ("workshop", "FunctionAgent")
    assert told_by_its_calls(run, []) == run


def test_an_agent_whose_span_tells_its_request_takes_nothing_from_its_calls():
    named = map_span(RESOURCE, agent(new_trace_id(), "Estimator")).fields
    calls = [_call(1, [{"role": "user", "content": "Parts for T-7?"}], [{"role": "assistant", "content": "Pads."}])]

    assert told_by_its_calls(named, calls) == named


def test_a_request_too_long_to_keep_is_left_out_not_refused():
    run = map_span(RESOURCE, span(new_trace_id(), "FunctionAgent.run", LLAMA_INDEX_RUN)).fields
    long = [_call(1, [{"role": "user", "content": "x" * (TEXT_CHARS + 1)}], [{"role": "assistant", "content": "No."}])]

    assert (told_by_its_calls(run, long)["given"], told_by_its_calls(run, long)["result"]) == (None, "No.")


def test_the_conventions_come_before_a_frameworks_own_attributes():
    mapped = map_span(RESOURCE, agent(new_trace_id(), "Estimator", agent_name="Other", **{
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "T-7?"}]}],
        "pydantic_ai.all_messages": PARTS_ASKED, "final_result": "Brake pads.",
        "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": "One hour."}]}],
    }))

    assert (mapped.fields["agent"], mapped.fields["given"], mapped.fields["result"]) == (
        "Estimator", "T-7?", "One hour.")


def test_an_agent_span_naming_its_agent_is_that_agent_never_the_service():
    invoke = {"gen_ai.operation.name": "invoke_agent"}
    named = map_span(RESOURCE, span(new_trace_id(), "invoke_agent Estimator", invoke))
    unnamed = map_span(RESOURCE, span(new_trace_id(), "invoke_agent", invoke))

    assert (named.fields["agent"], named.fields["skill"]) == ("Estimator", "Estimator")
    assert (unnamed.fields["agent"], unnamed.fields["skill"]) == ("workshop", "workshop")


def test_the_skill_is_the_span_name_less_the_operation():
    t = new_trace_id()
    repair = map_span(RESOURCE, agent(t, "Estimator", **{"agentlog.skill": "EstimateRepair"}))
    named = map_span(RESOURCE, agent(t, "Estimator"))
    other = map_span(RESOURCE, span(t, "Weather run", {"openinference.span.kind": "AGENT"}))

    assert (repair.fields["skill"], named.fields["skill"], other.fields["skill"]) == (
        "EstimateRepair", "Estimator", "Weather run")


def test_a_request_or_answer_that_is_not_only_words_is_kept_as_json():
    asked = [{"role": "user", "parts": [{"type": "uri", "uri": "https://shop.example/t7.jpg"}]}]
    called = [{"role": "assistant", "parts": [{"type": "tool_call", "name": "parts_for", "arguments": {}}]}]
    mapped = map_span(RESOURCE, agent(new_trace_id(), **{"gen_ai.input.messages": asked,
                                                          "gen_ai.output.messages": called}))

    assert json.loads(mapped.fields["given"]) == asked
    assert mapped.fields["result"] == called


def test_system_instructions_are_kept_as_their_parts():
    parts = [{"type": "text", "content": "You estimate bicycle repairs."}]
    mapped = map_span(RESOURCE, chat(new_trace_id(), new_span_id(), **{"gen_ai.system_instructions": parts}))

    assert mapped.fields["system_prompt"] == parts
    assert json.loads(mapped.drafts[0].payload)["systemPrompt"] == parts


def test_openinference_flattened_messages_with_parts_and_tool_calls_become_their_structure():
    mapped = map_span(RESOURCE, span(new_trace_id(), "ScriptedModel.generate", {
        "openinference.span.kind": "LLM", "llm.model_name": "m",
        "input.value": '{"messages": ["ChatMessage(role=<MessageRole.USER: \'user\'>)"]}',
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "T-7?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "parts_for",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"fault": "rear brake"}',
        "output.value": '{"raw": "ChatCompletion(id=\'c1\')"}',
    }))

    assert mapped.fields["messages"] == [{"role": "user", "contents": [{"type": "text", "text": "T-7?"}]}]
    assert mapped.fields["response"] == [{"role": "assistant", "tool_calls": [
        {"id": "c1", "function": {"name": "parts_for", "arguments": {"fault": "rear brake"}}}]}]


def test_a_workflow_is_a_task_named_by_the_workflow():
    mapped = map_span(RESOURCE, span(new_trace_id(), "invoke_workflow Repair intake", {
        "gen_ai.operation.name": "invoke_workflow", "input.value": "Ticket T-7"}))

    assert mapped.kind == AGENT
    assert (mapped.fields["agent"], mapped.fields["skill"], mapped.fields["given"]) == (
        "workshop", "Repair intake", "Ticket T-7")


FOUND = [{"id": "manual-4", "score": 0.91, "content": "Bleed the brake."}, {"id": "manual-9", "score": 0.5}]


@pytest.mark.parametrize("convention", ["GenAI", "OpenInference"])
def test_a_retrieval_is_a_tool_call_with_its_query_and_what_it_found(convention):
    if convention == "GenAI":
        told = span(new_trace_id(), "retrieval manuals", {
            "gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "manuals",
            "gen_ai.retrieval.query.text": "rear brake bleeding", "gen_ai.retrieval.documents": FOUND})
    else:
        told = span(new_trace_id(), "retrieval manuals", {
            "openinference.span.kind": "RETRIEVER", "input.value": "rear brake bleeding",
            **{f"retrieval.documents.{i}.document.{key}": value for i, found in enumerate(FOUND)
               for key, value in found.items()}})
    mapped = map_span(RESOURCE, told)

    call, result = mapped.drafts
    assert mapped.kind == TOOL and mapped.fields["tool"] == "retrieval manuals"
    assert (json.loads(call.payload), json.loads(result.payload)) == ("rear brake bleeding", FOUND)
    assert result.summary == "retrieval manuals found manual-4, manual-9."


def test_a_retrieval_that_found_nothing_says_so():
    mapped = map_span(RESOURCE, span(new_trace_id(), "retrieval", {
        "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "tubeless valves",
        "gen_ai.retrieval.documents": []}))

    assert mapped.drafts[1].summary == "retrieval found nothing."


def test_evaluation_results_are_kept_on_the_model_call_they_judge():
    mapped = map_span(RESOURCE, span(new_trace_id(), "chat m", {"gen_ai.operation.name": "chat",
                                                                 "gen_ai.request.model": "m"}, events=[
        ("gen_ai.evaluation.result", {"gen_ai.evaluation.name": "Relevance", "gen_ai.evaluation.score.value": 0.8,
                                      "gen_ai.evaluation.score.label": "relevant",
                                      "gen_ai.evaluation.explanation": "It answers the question."}),
    ]))

    assert json.loads(mapped.drafts[0].payload)["evaluations"] == [{
        "name": "Relevance", "score.value": 0.8, "score.label": "relevant", "explanation": "It answers the question.",
    }]


def test_a_span_name_that_looks_like_json_is_still_a_name():
    mapped = map_span(RESOURCE, span(new_trace_id(), '["Estimator"]', {"gen_ai.operation.name": "invoke_agent"}))

    assert (mapped.fields["agent"], mapped.fields["skill"]) == ("workshop", '["Estimator"]')
