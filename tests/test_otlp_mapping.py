"""The attribute table: GenAI (old and new names) and OpenInference spans to agentlog's fields."""

import json

import pytest

from models.errors import BadInput
from resolvers.otlp_ingest import body_text
from resolvers.otlp_mapping import AGENT, ATTRIBUTES, LLM, OTHER, TOOL, map_request, map_span
from tests.otlp_spans import agent, chat, export, new_span_id, new_trace_id, span

RESOURCE = {"service.name": "workshop"}


def test_every_kind_of_span_is_recognised_by_both_conventions():
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


def test_spans_that_cannot_be_recorded_are_rejected_with_a_reason():
    t = new_trace_id()
    request = export(
        chat(t, new_span_id()),
        span(t, "chat", {"gen_ai.operation.name": "chat"}),
        span(t, "chat", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                         "gen_ai.usage.input_tokens": -3}),
        span(t, "tool", {"gen_ai.operation.name": "execute_tool"}),
        span(t, "x", {}, span_id=b"\0" * 8),
    )

    mapped, rejected, message = map_request(request)

    assert len(mapped) == 1 and rejected == 4
    assert "no model" in message


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
