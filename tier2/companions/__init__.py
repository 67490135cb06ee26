"""The writer's read-only companions (seed 004 §6.2): an explorer it can ask where things are, and an independent
reviewer of its turns.

* `index` — a deterministic index of a project (definitions, data keys read, scene keys, imports, identifiers);
* `checks` — the reviewer's deterministic checks (data keys read but missing, modules never imported, scene keys
  started but not registered, parse errors through the validators' static scanner);
* `findings` — the reviewer's structured findings, parsed strictly from a model's answer;
* `tools` — the ``Index`` and ``Checks`` tools both companions may use, and the writer's ``Explore`` tool;
* `stop` — a limit a companion hit (budget, breakers) stops the run at the writer's next model call.

The agents are assembled in `tier2.assembly.companions` and wired into a run by `tier2.runs.loop.addons.companions`.
"""

from tier2.companions.findings import Finding, parse_findings, render_findings
from tier2.companions.index import Hit, ProjectIndex

__all__ = ["Finding", "Hit", "ProjectIndex", "parse_findings", "render_findings"]
