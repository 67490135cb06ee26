"""Configuration: mechanism constants, security/build config (TOML, loaded once) and hot policy (YAML)."""

from tier2.settings.loader import Policy, PolicyStore, SecurityConfig, Settings

__all__ = ["Policy", "PolicyStore", "SecurityConfig", "Settings"]
