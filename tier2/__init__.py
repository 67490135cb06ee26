"""tier2: turn a game brief into a playable, validated multi-file web game (an AgentScope 2.0.3 service)."""

__version__ = "0.1.0"
