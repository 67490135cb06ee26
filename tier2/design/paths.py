"""Where the design lives in a project (contracts: `docs/design-phase.md`)."""

from __future__ import annotations

__all__ = ["DOCS_DIR", "SPEC_FILE", "STATE_FILE"]

SPEC_FILE = "design/spec.json"
DOCS_DIR = "docs/design"
STATE_FILE = ".tier2/design/state.json"  # tier2's own record of the design (agents may not write .tier2/)
