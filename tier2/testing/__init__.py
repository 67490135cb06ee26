"""Test doubles for the model boundary only (shipped so pack authors can use them too)."""

from tier2.testing.fake_openai import FakeOpenAIServer, Latency, Quirks, Reply
from tier2.testing.scripted import ModelCall, ScriptedChatModel, ScriptError, strict_scripts, tool_results

__all__ = ["FakeOpenAIServer", "Latency", "ModelCall", "Quirks", "Reply", "ScriptError", "ScriptedChatModel",
           "strict_scripts", "tool_results"]
