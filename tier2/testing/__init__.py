"""Test doubles for the model boundary only (shipped so pack authors can use them too)."""

from tier2.testing.fake_openai import FakeOpenAIServer, Reply
from tier2.testing.scripted import ScriptedChatModel, tool_results

__all__ = ["FakeOpenAIServer", "Reply", "ScriptedChatModel", "tool_results"]
