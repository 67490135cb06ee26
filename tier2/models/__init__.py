"""Chat models: the offline policy (embedded default), OpenAI-compatible routes, and credentials."""
