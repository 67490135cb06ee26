"""`ScriptedChatModel` is strict: a call past the script fails clearly, unused steps fail at teardown, every call is
recorded; and the provider guard refuses real endpoints while loopback servers still work."""

from __future__ import annotations

import copy

import openai
import pytest
from agentscope.agent import Agent
from agentscope.credential import OpenAICredential
from agentscope.message import TextBlock, UserMsg
from agentscope.model import OpenAIChatModel
from agentscope.tool import Toolkit

from tier2.testing import FakeOpenAIServer, Reply, ScriptedChatModel, ScriptError, strict_scripts
from tier2.testing.guards import RealProviderRefused, is_loopback_url


def _agent(model: ScriptedChatModel) -> Agent:
    return Agent(name="writer", system_prompt="test", model=model, toolkit=Toolkit())


async def test_steps_are_answered_in_order_and_recorded() -> None:
    model = ScriptedChatModel([[TextBlock(text="one")], lambda messages: [TextBlock(text=f"{len(messages)} msgs")]])
    agent = _agent(model)
    assert (await agent.reply(UserMsg("user", "hi"))).get_text_content() == "one"
    second = await agent.reply(UserMsg("user", "again"))
    assert second.get_text_content().endswith("msgs")
    assert [c.n for c in model.calls] == [1, 2] and model.calls[1].last_text == "again"
    model.assert_exhausted()
    assert model.problems() == []


async def test_a_call_past_the_script_raises_a_clear_error() -> None:
    model = ScriptedChatModel([[TextBlock(text="only")]], model="short-script")
    agent = _agent(model)
    await agent.reply(UserMsg("user", "hi"))
    with pytest.raises(ScriptError, match=r"'short-script': call 2 but the script has only 1 step\(s\)"):
        await agent.reply(UserMsg("user", "more please"))
    with pytest.raises(ScriptError, match="more please"):   # the overrun is kept even if the caller swallowed it
        model.assert_exhausted()
    model.acknowledge()                                        # checked here: the teardown check skips it


async def test_unused_steps_fail_the_exhaustion_check() -> None:
    with strict_scripts() as made:
        model = ScriptedChatModel([[TextBlock(text="a")], [TextBlock(text="b")]], stream=False)
        await _agent(model).reply(UserMsg("user", "hi"))
    assert made == [model]
    assert model.problems() == ["scripted model 'scripted-model': 1 of 2 scripted step(s) never used (1 call(s) made)"]
    with pytest.raises(ScriptError, match="never used"):
        model.assert_exhausted()
    model.acknowledge()


async def test_an_exception_step_is_a_provider_outage_and_copies_share_the_tape() -> None:
    model = ScriptedChatModel([ConnectionError("scripted outage"), [TextBlock(text="back")]])
    clone = copy.copy(model)                                   # e.g. a per-call copy with other parameters
    with pytest.raises(ConnectionError):
        await model([UserMsg("user", "x")])
    reply = await clone([UserMsg("user", "x")])
    assert [c async for c in reply][-1].content[0].text == "back"
    assert len(model.calls) == 2
    model.assert_exhausted()


def test_a_script_must_be_steps_or_a_function() -> None:
    with pytest.raises(TypeError):
        ScriptedChatModel("not a script")  # type: ignore[arg-type]


def test_real_provider_models_and_clients_are_refused() -> None:
    for url in (None, "https://api.openai.com/v1", "http://10.0.0.7:8000/v1"):
        with pytest.raises(RealProviderRefused, match="must not reach a real model provider"):
            OpenAIChatModel(credential=OpenAICredential(name="t", api_key="sk-x", base_url=url), model="gpt-x",
                            parameters=OpenAIChatModel.Parameters())
    with pytest.raises(RealProviderRefused):
        openai.AsyncOpenAI(api_key="sk-x")                     # the SDK's default endpoint
    with pytest.raises(RealProviderRefused):
        openai.AsyncOpenAI(api_key="sk-x", base_url="https://gateway.example.com/v1")
    assert is_loopback_url("http://127.0.0.1:9/v1") and is_loopback_url("http://localhost:1/v1")
    assert not is_loopback_url("http://127.0.0.1.example.com/v1")


async def test_the_fake_server_on_loopback_still_works() -> None:
    with FakeOpenAIServer(lambda body: Reply(text="hello from loopback")) as srv:
        model = OpenAIChatModel(credential=OpenAICredential(name="t", api_key="sk-test", base_url=srv.base_url),
                                model="fake", parameters=OpenAIChatModel.Parameters(), stream=False, max_retries=0)
        reply = await model([UserMsg("user", "hi")])
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=srv.base_url)
        await client.close()
    assert reply.content[0].text == "hello from loopback"
