"""tier2: turn a game brief into a playable, validated multi-file Phaser 3 game (an AgentScope 2.0.3 service)."""

__version__ = "0.1.0"
