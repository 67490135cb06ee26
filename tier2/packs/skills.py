"""Agent skills: ``SKILL.md`` directories AgentScope lists in an agent's system prompt and shows on demand (its
``Skill`` tool).

Two homes, one check (`check_skill`):

* the **core skills**, ``skills/`` at the repository top: engine-agnostic, every agent role of every pack (how a
  run works, the delivery contract, the tool rules, reading gate verdicts); every directory there is a skill;
* a **pack's skills**, ``capability_packs/<id>/skills/``: its engine, named in its ``pack.yaml``.

`tier2.packs.Pack.agent_skill_dirs` is the one list an agent role loads: the core skills, then the pack's.
AgentScope skips a broken skill silently (and lets a duplicate name overwrite another), so tier2 checks them
itself when the pack loads, and `tier2 packs check` proves they load in AgentScope.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Final

import frontmatter
from agentscope.skill import Skill

from tier2.errors import PackError
from tier2.settings.loader import REPO_ROOT

__all__ = ["CORE_SKILLS_DIR", "MAX_DESCRIPTION_CHARS", "MAX_SKILL_BYTES", "check_skill", "core_skill_dirs",
           "load_skills"]

CORE_SKILLS_DIR: Final = REPO_ROOT / "skills"
#: one SKILL.md, front matter included: the whole text goes into the context when the model opens it
MAX_SKILL_BYTES: Final = 24_000
#: the description is in every system prompt (the skill list); the model picks a skill by it
MAX_DESCRIPTION_CHARS: Final = 1024
#: lower-case words joined by hyphens, at most 64 characters, equal to the skill's directory name
_NAME: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def check_skill(path: Path) -> str:
    """The skill's name, or `PackError` saying what is wrong: ``SKILL.md`` missing or over `MAX_SKILL_BYTES`, front
    matter without ``name``/``description``, a name that is not the directory's or not lower-case-hyphenated, a
    description over `MAX_DESCRIPTION_CHARS`."""
    md = path / "SKILL.md"
    if not md.is_file():
        raise PackError(f"skill {path.name}: {md} missing")
    size = md.stat().st_size
    if size > MAX_SKILL_BYTES:
        raise PackError(f"skill {path.name}: SKILL.md is {size} bytes, over the {MAX_SKILL_BYTES}-byte limit")
    try:
        meta = frontmatter.loads(md.read_text(encoding="utf-8")).metadata
    except Exception as exc:  # a YAML error of any kind: AgentScope would skip the skill silently
        raise PackError(f"skill {path.name}: SKILL.md front matter does not parse: {exc}") from exc
    for field in ("name", "description"):
        if not meta.get(field):
            raise PackError(f"skill {path.name}: SKILL.md front matter lacks {field!r}")
    name, description = str(meta["name"]), str(meta["description"])
    if name != path.name or len(name) > 64 or not _NAME.fullmatch(name):
        raise PackError(f"skill {path.name}: name {name!r} must be its directory's name, lower-case words joined "
                        "by hyphens (at most 64 characters)")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise PackError(f"skill {name}: description is {len(description)} characters, over "
                        f"{MAX_DESCRIPTION_CHARS}")
    return name


@functools.cache
def core_skill_dirs(root: Path = CORE_SKILLS_DIR) -> tuple[Path, ...]:
    """Every directory of ``root`` (sorted), each checked (`check_skill`); `PackError` when ``root`` is missing."""
    if not root.is_dir():
        raise PackError(f"the core skills directory {root} is missing")
    dirs = tuple(sorted(p.resolve() for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")))
    for d in dirs:
        check_skill(d)
    return dirs


def load_skills(dirs: list[Path]) -> list[Skill]:
    """The skills under ``dirs`` (each a skill directory, or a folder of them) as AgentScope `Skill` objects, read
    now with a plain ``open`` (closed before this returns). A toolkit given these never reads a file itself:
    AgentScope's directory loader re-reads every ``SKILL.md`` through aiofiles in a worker thread on each listing,
    and a listing abandoned by a cancelled run left the file open (found by the suite's leak check)."""
    out: list[Skill] = []
    for base in dirs:
        roots = [base] if (base / "SKILL.md").is_file() else sorted(p for p in base.iterdir() if p.is_dir())
        for root in roots:
            skill = _load_one(root)
            if skill is not None:
                out.append(skill)
    return out


def _load_one(root: Path) -> Skill | None:
    md = root / "SKILL.md"
    if not md.is_file():
        return None
    with md.open(encoding="utf-8") as fh:
        content = frontmatter.loads(fh.read())
    name, description = content.get("name"), content.get("description")
    if not name or not description:
        return None
    return Skill(name=str(name), description=str(description), dir=str(root), markdown=content.content,
                 updated_at=md.stat().st_mtime)

