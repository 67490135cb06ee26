"""Per-run assembly: build the writer Agent (model, workspace toolkit, game tools, middlewares) and the L3
scorer agent. It builds; it never runs."""

from tier2.assembly.scorer import build_scorer
from tier2.assembly.writer import WriterHandle, build_writer, writer_permissions

__all__ = ["WriterHandle", "build_scorer", "build_writer", "writer_permissions"]
