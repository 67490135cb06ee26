"""The offline model: a deterministic, documented policy that drives the real writer loop without a network."""

from tier2.models.offline.model import OfflineChatModel, OfflineCredential

__all__ = ["OfflineChatModel", "OfflineCredential"]
