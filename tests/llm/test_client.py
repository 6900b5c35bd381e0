"""The LLM client against an OpenAI-compatible server on real HTTP."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from pydantic import BaseModel

from core.config.llm import LlmSettings
from core.llm.client import (
    EmptyAnswer,
    IncompleteAnswer,
    LlmClient,
    LlmCutOff,
    LlmError,
    LlmFiltered,
    LlmInvalidOutput,
    LlmPromptTooLong,
    LlmRefused,
    LlmServerFailed,
    LlmTimedOut,
    LlmUnavailable,
    LlmUnreachable,
)
from tests.support.fake_llm import FakeLlm, count_tokens

QUESTION = [{"role": "user", "content": "What is our travel policy?"}]


class Verdict(BaseModel):
    toxicity: int
    in_scope: bool


@pytest.fixture
async def llm():
    server = await FakeLlm().start()
    yield server
    await server.close()


# The clients a test made, closed when it ends (an HTTP pool left open is closed by the
# garbage collector later, in another test's event loop, with an error in its log).
MADE: list[LlmClient] = []


@pytest.fixture(autouse=True)
async def close_clients():
    yield
    while MADE:
        await MADE.pop().close()


def client(llm: FakeLlm, **settings) -> LlmClient:
    options = {
        "url": llm.url,
        "model": "test-model",
        "max_retries": 0,
        "timeout_seconds": 5,
        # A model known to write no reasoning without its opening tag: it streams at once.
        "reasoning_opens_in_prompt": False,
    } | settings
    MADE.append(LlmClient(LlmSettings(**options)))
    return MADE[-1]


async def test_a_completion_reports_text_and_tokens(llm):
    llm.enqueue("Trains are booked through Travelink.")
    completion = await client(llm).complete(QUESTION)
    assert completion.text == "Trains are booked through Travelink."
    assert completion.completion_tokens == 5 and completion.prompt_tokens > 0
    assert llm.history[0]["model"] == "test-model" and llm.history[0]["messages"] == QUESTION


async def test_an_answer_streams_in_pieces(llm):
    llm.enqueue("Trains are booked through Travelink, two weeks ahead.")
    shown = [so_far.text async for so_far in client(llm).stream(QUESTION)]
    assert len(shown) > 3 and shown[-1] == "Trains are booked through Travelink, two weeks ahead."
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(shown))
    assert llm.history[0]["stream"] is True


HALF = "Trains are booked through Trave"


@pytest.mark.parametrize(
    ("ending", "why"),
    [
        ("cut", "APIConnectionError"),  # openai: "peer closed connection", mid-body
        ("no_done", "no finish_reason"),  # openai: the iteration just ends
        ("error", "APIError"),  # openai: raises the error event's message
        ("length", "finish_reason 'length'"),  # cut at the token limit
    ],
)
async def test_a_stream_that_stops_before_the_model_finished_is_incomplete(llm, ending, why):
    llm.enqueue(HALF, ending=ending)
    pieces = []
    with pytest.raises(IncompleteAnswer, match=why) as raised:
        async for so_far in client(llm).stream(QUESTION):
            pieces.append(so_far.text)
    assert raised.value.partial == HALF == pieces[-1], "what came was streamed, and kept"
    assert isinstance(raised.value, LlmError), "the dispatcher's apology catches it"


@pytest.mark.parametrize("content", ["", "  \n ", None])
async def test_a_stream_with_no_text_is_empty_not_an_answer(llm, content):
    if content is None:
        llm.enqueue("ignored", ending="empty")  # a role chunk and a finish chunk, no content
    else:
        llm.enqueue(content)
    with pytest.raises(EmptyAnswer):
        async for _ in client(llm).stream(QUESTION):
            pass


async def test_a_stream_cut_before_any_text_is_incomplete_with_nothing(llm):
    llm.enqueue("", ending="cut")
    with pytest.raises(IncompleteAnswer) as raised:
        async for _ in client(llm).stream(QUESTION):
            pass
    assert raised.value.partial == ""


async def test_a_cut_stream_gives_its_slot_back(llm):
    llm.enqueue(HALF, ending="cut")
    llm.enqueue("Trains via Travelink.")
    llm_client = client(llm, max_concurrency=1)
    with pytest.raises(IncompleteAnswer):
        async for _ in llm_client.stream(QUESTION):
            pass
    assert [p.text async for p in llm_client.stream(QUESTION)][-1] == "Trains via Travelink."


async def test_structured_output_asks_for_the_schema_and_validates(llm):
    llm.enqueue({"toxicity": 1, "in_scope": True})
    verdict, _ = await client(llm).complete_json(QUESTION, Verdict, "verdict")
    assert verdict == Verdict(toxicity=1, in_scope=True)
    asked = llm.history[0]["response_format"]
    assert asked["type"] == "json_schema" and asked["json_schema"]["name"] == "verdict"
    assert set(asked["json_schema"]["schema"]["properties"]) == {"toxicity", "in_scope"}


async def test_an_endpoint_that_ignores_response_format_still_gives_validated_json(llm):
    llm.response_format = "ignore"
    llm.enqueue({"toxicity": 2, "in_scope": True})
    verdict, _ = await client(llm).complete_json(QUESTION, Verdict, "verdict")
    assert verdict == Verdict(toxicity=2, in_scope=True)
    assert len(llm.history) == 1, "taken out of the prose, no repair needed"


async def test_an_endpoint_that_refuses_response_format_gets_the_schema_in_the_prompt(llm):
    llm.response_format = "refuse"
    model = client(llm)
    llm.enqueue({"toxicity": 3, "in_scope": False})
    llm.enqueue({"toxicity": 4, "in_scope": True})
    first, _ = await model.complete_json(QUESTION, Verdict, "verdict")
    second, _ = await model.complete_json(QUESTION, Verdict, "verdict")
    assert (first.toxicity, second.toxicity) == (3, 4)
    *refused, asked_1, asked_2 = llm.history
    assert [r["response_format"]["type"] for r in refused] == ["json_schema", "json_object"]
    asked = [asked_1, asked_2]
    assert len(llm.history) == 4, "the refusals are remembered: one request per answer after"
    for request in asked:
        assert "response_format" not in request
        assert '"toxicity"' in request["messages"][-1]["content"], "the schema is in the prompt"


async def test_a_server_that_constrains_json_objects_only_gets_the_schema_that_way(llm):
    llm.response_format = "json_object"
    model = client(llm)
    llm.enqueue({"toxicity": 3, "in_scope": False})
    llm.enqueue({"toxicity": 4, "in_scope": True})
    await model.complete_json(QUESTION, Verdict, "verdict")
    await model.complete_json(QUESTION, Verdict, "verdict")
    refused, *asked = llm.history
    assert refused["response_format"]["type"] == "json_schema" and len(asked) == 2
    for request in asked:
        assert request["response_format"]["type"] == "json_object"
        assert request["response_format"]["schema"]["required"] == ["toxicity", "in_scope"]


async def test_prose_from_an_endpoint_without_response_format_is_repaired_like_any_answer(llm):
    llm.response_format = "refuse"
    llm.enqueue("I think the toxicity is low and it is in scope.")
    llm.enqueue({"toxicity": 0, "in_scope": True})
    verdict, _ = await client(llm).complete_json(QUESTION, Verdict, "verdict")
    assert verdict.toxicity == 0 and "not valid JSON" in llm.history[-1]["messages"][-1]["content"]


async def test_invalid_json_is_repaired_once(llm):
    llm.enqueue('{"toxicity": "high"')
    llm.enqueue({"toxicity": 7, "in_scope": False})
    verdict, _ = await client(llm).complete_json(QUESTION, Verdict, "verdict")
    assert verdict.toxicity == 7
    repair = llm.history[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"toxicity": "high"'}
    assert "not valid JSON" in repair[-1]["content"]


async def test_a_completion_cut_at_the_token_limit_is_cut_off_not_repaired(llm):
    llm.enqueue('{"toxicity": 1, "in_sc', ending="length")
    with pytest.raises(LlmCutOff, match="token limit"):
        await client(llm).complete_json(QUESTION, Verdict, "prestep")
    assert len(llm.history) == 1, "no repair asked of a model that ran out of tokens"


@pytest.mark.parametrize("mode", ["honour", "json_object", "refuse"])
async def test_every_structured_call_is_bounded_by_its_tasks_max_tokens(llm, mode):
    llm.response_format = mode
    llm.enqueue('{"toxicity": "high"')  # invalid: a repair is asked, bounded too
    llm.enqueue({"toxicity": 0, "in_scope": True})
    llm.enqueue({"toxicity": 0, "in_scope": True})
    bounded = client(llm, max_tokens={"prestep": 77, "support": 33})
    await bounded.complete_json(QUESTION, Verdict, "prestep")
    await bounded.complete_json(QUESTION, Verdict, "support")
    asked = [body.get("max_tokens") for body in llm.history]
    assert asked[-1] == 33 and set(asked[:-1]) == {77}, "refusals, the repair: all bounded"


async def test_a_reply_stopped_by_a_content_filter_is_told_apart(llm):
    llm.enqueue("", ending="content_filter")
    with pytest.raises(LlmFiltered):
        await client(llm).complete_json(QUESTION, Verdict, "prestep")
    llm.enqueue("Our travel pol", ending="content_filter")
    with pytest.raises(LlmFiltered):
        [_ async for _ in client(llm).stream(QUESTION)]


async def test_output_still_invalid_after_the_repair_is_an_error(llm):
    llm.enqueue("no json here")
    llm.enqueue({"toxicity": "very"})
    with pytest.raises(LlmInvalidOutput, match="toxicity"):
        await client(llm).complete_json(QUESTION, Verdict, "verdict")


async def test_failures_are_retried_then_reported(llm):
    llm.enqueue(status=500)
    llm.enqueue("Recovered.")
    assert (await client(llm, max_retries=1).complete(QUESTION)).text == "Recovered."
    llm.enqueue(status=503)
    with pytest.raises(LlmUnavailable):
        await client(llm).complete(QUESTION)


async def test_a_slow_endpoint_times_out(llm):
    llm.enqueue("late", delay=3)
    started = time.monotonic()
    with pytest.raises(LlmUnavailable):
        await client(llm, timeout_seconds=0.5).complete(QUESTION)
    assert time.monotonic() - started < 2.5


async def test_a_down_endpoint_is_unavailable():
    down = LlmClient(
        LlmSettings(url="http://127.0.0.1:9/v1", model="m", max_retries=0, timeout_seconds=2)
    )
    with pytest.raises(LlmUnavailable):
        await down.complete(QUESTION)


async def test_concurrency_is_limited(llm):
    llm.delay = 0.3
    for _ in range(4):
        llm.enqueue("ok")
    limited = client(llm, max_concurrency=2)
    started = time.monotonic()
    await asyncio.gather(*(limited.complete(QUESTION) for _ in range(4)))
    assert time.monotonic() - started >= 0.6, "four calls, two at a time, 0.3 s each"


@pytest.mark.parametrize("style", ["tagged", "opened"])
async def test_inline_reasoning_is_never_streamed_nor_kept(llm, style):
    llm.reasoning = style
    llm_client = client(llm, reasoning_opens_in_prompt=None)  # to be found out
    # A first structured call shows what the model does (the pre-step, in the bot).
    llm.enqueue({"toxicity": 1, "in_scope": True})
    verdict, completion = await llm_client.complete_json(QUESTION, Verdict, "verdict")
    assert verdict == Verdict(toxicity=1, in_scope=True) and completion.reasoning_chars > 20
    llm.enqueue("Trains are booked through Travelink, two weeks ahead.")
    shown = [so_far async for so_far in llm_client.stream(QUESTION)]
    assert all("user asks" not in so_far.text and "think" not in so_far.text for so_far in shown)
    assert shown[-1].text == "Trains are booked through Travelink, two weeks ahead."
    assert shown[-1].reasoning_chars >= len(llm.reasoning_text)


async def test_the_first_answer_is_held_until_the_model_is_known_then_answers_stream(llm):
    llm_client = client(llm, reasoning_opens_in_prompt=None)
    llm.enqueue("Trains are booked through Travelink, two weeks ahead.")
    first = [so_far.text async for so_far in llm_client.stream(QUESTION)]
    assert first == ["Trains are booked through Travelink, two weeks ahead."], "shown whole"
    assert llm_client.reasoning_opens_in_prompt is False, "no closing tag: known now"
    llm.enqueue("Trains are booked through Travelink, two weeks ahead.")
    assert len([so_far async for so_far in llm_client.stream(QUESTION)]) > 3, "streams now"


async def test_a_completion_leaves_the_reasoning_out(llm):
    llm.reasoning = "tagged"
    llm.enqueue("Trains via Travelink.")
    completion = await client(llm).complete(QUESTION)
    assert completion.text == "Trains via Travelink." and completion.reasoning_chars > 0


async def test_the_window_is_read_from_the_model_list_and_prompts_are_counted(llm):
    llm.context_window, llm.tokenize = 4096, True
    llm_client = client(llm)
    assert await llm_client.context_window() == 4096
    assert await llm_client.count_tokens(QUESTION) == count_tokens({"messages": QUESTION})


async def test_without_a_tokenizer_a_prompt_is_estimated_on_the_safe_side(llm):
    llm_client = client(llm)
    assert await llm_client.context_window() is None
    estimated = await llm_client.count_tokens(QUESTION)
    assert estimated >= count_tokens({"messages": QUESTION})


async def test_a_refusal_for_length_is_named_and_teaches_the_window(llm):
    llm.context_window = 16
    llm_client = client(llm)
    with pytest.raises(LlmPromptTooLong) as raised:
        async for _ in llm_client.stream(QUESTION * 5):
            pass
    assert raised.value.window == 16
    llm_client.learn_window(raised.value)
    assert await llm_client.context_window() == 16


async def test_failures_are_told_apart(llm):
    llm.enqueue(status=404)
    with pytest.raises(LlmRefused):
        await client(llm).complete(QUESTION)
    llm.enqueue(status=503)
    with pytest.raises(LlmServerFailed):
        await client(llm).complete(QUESTION)
    llm.enqueue("late", delay=2)
    with pytest.raises(LlmTimedOut):
        await client(llm, timeout_seconds=0.5).complete(QUESTION)
    gone = LlmClient(LlmSettings(url="http://127.0.0.1:9/v1", model="m", max_retries=0))
    with pytest.raises(LlmUnreachable):
        await gone.complete(QUESTION)


async def test_a_tasks_extra_request_fields_are_sent(llm):
    fields = {"prestep": {"chat_template_kwargs": {"enable_thinking": False}}}
    llm.enqueue({"toxicity": 0, "in_scope": True})
    llm.enqueue("An answer.")
    llm_client = client(llm, request_fields=fields)
    await llm_client.complete_json(QUESTION, Verdict, "prestep")
    [_ async for _ in llm_client.stream(QUESTION)]
    assert llm.history[0]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in llm.history[1]


async def test_a_task_may_go_to_another_model_and_endpoint(llm):
    small = await FakeLlm(model="small-model").start()
    try:
        settings = {"tasks": {"prestep": {"url": small.url, "model": "small-model"}}}
        llm_client = client(llm, **settings)
        small.enqueue({"toxicity": 0, "in_scope": True})
        await llm_client.for_task("prestep").complete_json(QUESTION, Verdict, "prestep")
        llm.enqueue("An answer.")
        [_ async for _ in llm_client.for_task("answer").stream(QUESTION)]
        assert small.history[0]["model"] == "small-model" and len(small.history) == 1
        assert llm.history[0]["model"] == "test-model" and len(llm.history) == 1
        assert llm_client.for_task("support") is llm_client, "unset tasks use [llm]"
        await llm_client.close()
    finally:
        await small.close()
