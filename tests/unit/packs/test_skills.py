"""The agent skills: the core ones in ``skills/`` (engine-agnostic, every role) and the pack's, under one check.

AgentScope skips a broken skill silently and lets a duplicate name overwrite another; these tests plant each kind
of broken skill and show tier2 refuses it where AgentScope would not have said a word.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from agentscope.skill import LocalSkillLoader

from tier2.errors import PackError
from tier2.packs import Pack, load_pack
from tier2.packs.skills import CORE_SKILLS_DIR, MAX_DESCRIPTION_CHARS, MAX_SKILL_BYTES, check_skill, core_skill_dirs
from tier2.runs.commands.pack_check import _skills
from tier2.settings.loader import REPO_ROOT
from tier2.testing.packs import copy_pack

CORE = ["tier2-delivery", "tier2-gate-verdicts", "tier2-run", "tier2-tools"]


def _skill(root: Path, dirname: str, text: str) -> Path:
    d = root / dirname
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(text)
    return d


def test_the_core_skills_are_checked_and_every_role_gets_them_before_the_pack_s(pack: Pack) -> None:
    dirs = core_skill_dirs()
    assert [d.name for d in dirs] == CORE and all(d.parent == CORE_SKILLS_DIR.resolve() for d in dirs)
    assert [check_skill(d) for d in dirs] == CORE
    assert pack.agent_skill_dirs == [*dirs, *pack.skill_dirs]
    assert [d.name for d in pack.skill_dirs] == pack.manifest.skills  # the pack keeps its engine skills


def test_the_core_skills_name_no_engine_and_no_genre(pack: Pack) -> None:
    """Engine-agnostic for real: no engine name, engine version or genre id of the pack appears in them."""
    ids = set(pack.genres) | set(pack.manifest.unsupported_genres)
    words = {pack.manifest.engine.name, pack.manifest.engine.version} | ids | {i.replace("_", " ") for i in ids}
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
                         + r")(?![\w-])", re.I)
    found = [f"{d.name}: {m.group(0)!r}" for d in core_skill_dirs()
             for m in pattern.finditer((d / "SKILL.md").read_text())]
    assert not found, found
    assert pattern.search("a Phaser game") and pattern.search("the shop genre")  # the check sees a planted word


@pytest.mark.parametrize(("text", "dirname", "why"), [
    ("---\nname: x-skill\n---\nbody", "x-skill", "lacks 'description'"),
    ("---\ndescription: d\n---\nbody", "x-skill", "lacks 'name'"),
    ("no front matter at all", "x-skill", "lacks 'name'"),
    ("---\nname: [unclosed\n---\n", "x-skill", "does not parse"),
    ("---\nname: other-name\ndescription: d\n---\n", "x-skill", "must be its directory's name"),
    ("---\nname: X_Skill\ndescription: d\n---\n", "X_Skill", "lower-case words joined by hyphens"),
    ("---\nname: x-skill\ndescription: " + "d" * (MAX_DESCRIPTION_CHARS + 1) + "\n---\n", "x-skill",
     "description is"),
    ("---\nname: x-skill\ndescription: d\n---\n" + "x" * MAX_SKILL_BYTES, "x-skill", "byte limit"),
])
def test_the_check_refuses_a_broken_skill(tmp_path: Path, text: str, dirname: str, why: str) -> None:
    d = _skill(tmp_path, dirname, text)
    with pytest.raises(PackError, match=re.escape(why)):
        check_skill(d)


async def test_agentscope_alone_would_skip_a_broken_skill_silently(tmp_path: Path) -> None:
    """Why tier2 checks: AgentScope's loader returns nothing for a skill without a description, raising nothing."""
    d = _skill(tmp_path, "x-skill", "---\nname: x-skill\n---\nbody")
    assert await LocalSkillLoader(str(d)).list_skills() == []
    with pytest.raises(PackError):
        check_skill(d)


def test_a_broken_or_missing_core_skills_directory_is_an_error(tmp_path: Path) -> None:
    _skill(tmp_path / "skills", "good-one", "---\nname: good-one\ndescription: d\n---\n")
    assert [d.name for d in core_skill_dirs(tmp_path / "skills")] == ["good-one"]
    (tmp_path / "skills2" / "empty-dir").mkdir(parents=True)  # a directory without SKILL.md
    with pytest.raises(PackError, match="missing"):
        core_skill_dirs(tmp_path / "skills2")
    with pytest.raises(PackError, match="core skills directory"):
        core_skill_dirs(tmp_path / "nowhere")


def test_a_pack_skill_with_a_core_skill_s_name_is_refused(pack: Pack, tmp_path: Path) -> None:
    """AgentScope keeps the last of two skills with one name: a pack could silently replace a core skill."""
    root = copy_pack(pack, tmp_path / "packs")
    _skill(root / "skills", "tier2-tools", "---\nname: tier2-tools\ndescription: my own tool rules\n---\n")
    manifest = yaml.safe_load((root / "pack.yaml").read_text())
    manifest["skills"] = [*manifest["skills"], "tier2-tools"]
    (root / "pack.yaml").write_text(yaml.safe_dump(manifest))
    with pytest.raises(PackError, match="name of a core skill"):
        load_pack(tmp_path / "packs", "phaser")


def test_a_broken_pack_skill_fails_the_pack_load(pack: Pack, tmp_path: Path) -> None:
    root = copy_pack(pack, tmp_path / "packs")
    md = root / "skills" / "phaser-debugging" / "SKILL.md"
    md.write_text(md.read_text().replace("name: phaser-debugging", "name: Phaser Debugging"))
    with pytest.raises(PackError, match="must be its directory's name"):
        load_pack(tmp_path / "packs", "phaser")


async def test_packs_check_loads_the_core_and_the_pack_skills_in_agentscope(pack: Pack, tmp_path: Path) -> None:
    line = await _skills(pack, tmp_path)
    assert line.ok, line.detail
    assert line.detail.split(", ") == sorted([*CORE, *pack.manifest.skills])


def test_no_prompt_repeats_a_core_skill() -> None:
    """Skills are opened on demand; a prompt that copied one would pay for it on every call."""
    prompts = {p: " ".join(p.read_text().split()) for p in (REPO_ROOT / "tier2" / "prompts").rglob("*.md")}
    repeated = []
    for d in core_skill_dirs():
        lines = (d / "SKILL.md").read_text().split("---", 2)[2].splitlines()
        body = " ".join(" ".join(ln for ln in lines if not ln.startswith(("#", "|", "```"))).split())
        for sentence in re.split(r"(?<=[.:;])\s+", body):
            if len(sentence) >= 50:
                repeated += [f"{p.name}: {sentence[:80]}" for p, text in prompts.items() if sentence in text]
    assert not repeated, repeated
