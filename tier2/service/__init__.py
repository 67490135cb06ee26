"""HTTP routers mounted beside AgentScope's routes (nothing imports this package except `tier2.app`)."""
