"""Per-run assembly: build the writer Agent (model, workspace toolkit, game tools, middlewares). It builds;
it never runs."""

from tier2.assembly.writer import WriterHandle, build_writer, writer_permissions

__all__ = ["WriterHandle", "build_writer", "writer_permissions"]
