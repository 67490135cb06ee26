from __future__ import annotations

import pytest

from tier2.middleware.recorder import summarize_args
from tier2.settings.secrets import MASK, Redactor, tool_env

ENV = {"TIER2_API_KEYS": "acme:acme-key-123456789,beta:beta-key-987654321", "OPENAI_API_KEY": "sk-abcdefghijkl",
       "MY_ROUTE_CRED": "route-secret-value", "HOME": "/root", "SHORT_KEY": "abc"}


def test_values_of_matching_variables_and_their_pieces_are_masked() -> None:
    red = Redactor.from_env(["*_KEY", "*_KEYS"], ["MY_ROUTE_CRED"], env=ENV)
    text = "keys acme-key-123456789 and sk-abcdefghijkl and route-secret-value; home /root; abc"
    out = red.scrub(text)
    assert "acme-key-123456789" not in out and "sk-abcdefghijkl" not in out and "route-secret-value" not in out
    assert out.count(MASK) == 3 and "/root" in out and out.endswith("abc")  # short values are not secrets


def test_summaries_are_scrubbed_before_they_are_cut() -> None:
    red = Redactor.from_env(["*_KEY"], env=ENV)
    assert red.summary("x" * 5 + "sk-abcdefghijkl", 12) == "xxxxx[redac…"
    raw = '{"file_path": "/p/sk-abcdefghijkl.txt"}'
    assert summarize_args(raw, red) == f"/p/{MASK}.txt"
    assert len(summarize_args('{"a": "' + "y" * 10_000 + '"}', red)) <= 200


def test_tool_processes_get_no_service_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIER2_API_KEYS", "acme:acme-key-123456789")
    env = tool_env({"NODE_PATH": "/x"})
    assert "TIER2_API_KEYS" not in env and env["NODE_PATH"] == "/x" and "PATH" in env
