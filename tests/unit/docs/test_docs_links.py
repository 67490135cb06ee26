"""The documentation stays true: the README is a front door (≤ 200 lines), every relative link of README.md,
docs/**/*.md and bench/RESULTS.md resolves to a file inside the repository (and to a heading, when it names an
anchor), no link leaves the repository except an http(s) URL, and every `tier2 <command>` the README's command
table (or any doc) names — with its subcommands and flags — exists in the real CLI parser (`tier2.cli.build_parser`).

Each check is a function of the repository root, so the planted-defect tests below run it on a copy that breaks it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import unicodedata
from pathlib import Path

import pytest

from tier2.cli import build_parser

ROOT = Path(__file__).resolve().parents[3]
MAX_README_LINES = 200

_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def doc_files(root: Path) -> list[Path]:
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    results = root / "bench" / "RESULTS.md"
    return files + ([results] if results.exists() else [])


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code (a link in code is not a link)."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, inline-code backticks and punctuation dropped, spaces → ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for match in _HEADING.finditer(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(match.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def readme_problems(root: Path) -> list[str]:
    lines = (root / "README.md").read_text(encoding="utf-8").splitlines()
    return [f"README.md has {len(lines)} lines (at most {MAX_README_LINES})"] if len(lines) > MAX_README_LINES else []


def link_problems(root: Path) -> list[str]:
    problems: list[str] = []
    for doc in doc_files(root):
        where = doc.relative_to(root)
        for target in _LINK.findall(_prose(doc.read_text(encoding="utf-8"))):
            if target.startswith(("http://", "https://")):
                continue
            if _SCHEME.match(target) or target.startswith(("/", "\\")):
                problems.append(f"{where}: {target}: a link may only be relative or http(s)")
                continue
            path_part, _, anchor = target.partition("#")
            # normalised, not resolved: a link is judged by where it points in the tree, not through symlinks
            dest = Path(os.path.normpath(doc.parent / path_part)) if path_part else doc
            if not dest.is_relative_to(root):
                problems.append(f"{where}: {target}: leaves the repository")
            elif not dest.exists():
                problems.append(f"{where}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where}: {target}: no heading with anchor #{anchor}")
    return problems


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = {s for a in parser._actions for s in a.option_strings}  # noqa: SLF001
    for sub in _subcommands(parser).values():
        found |= _options(sub)
    return found


def command_rows(readme: str) -> list[tuple[str, str]]:
    """The README's command table: (the command cell, the description cell) of each row naming `tier2 X`."""
    section = readme.split("\n## Commands", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) >= 2 and cells[0].startswith("`tier2 "):
            rows.append((cells[0], cells[1]))
    return rows


def command_problems(root: Path) -> list[str]:
    top = _subcommands(build_parser())
    problems: list[str] = []
    rows = command_rows((root / "README.md").read_text(encoding="utf-8"))
    if not rows:
        return ["README.md: no command table under '## Commands'"]
    for command, what in rows:
        name = command.strip("`").split()[1]
        parser = top.get(name)
        if parser is None:
            problems.append(f"README.md: `tier2 {name}` is not a tier2 command")
            continue
        options = _options(parser)
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", command + " " + what):
            if flag not in options:
                problems.append(f"README.md: `tier2 {name}` has no option {flag}")
        subs = _subcommands(parser)
        if subs:
            named = [span.split()[0] for span in re.findall(r"`([^`]+)`", what) if re.match(r"[a-z]", span)]
            for sub in named:
                if sub not in subs:
                    problems.append(f"README.md: `tier2 {name} {sub}` is not a tier2 command")
    # every `tier2 X [Y]` quoted anywhere in the docs names a real command (and subcommand)
    for doc in doc_files(root):
        text = doc.read_text(encoding="utf-8")
        for span in re.findall(r"`((?:\.venv/bin/)?tier2 [^`]*)`", text):
            if re.search(r"\w:(\s|$)", span):
                continue  # a message tier2 prints (`tier2 data error: ...`), not a command
            words = span.split()[1:3]
            if not words or not re.fullmatch(r"[a-z][a-z-]*", words[0]):
                continue  # a placeholder (`tier2 <command>`), not a name
            name, sub = words[0], (words[1] if len(words) > 1 and re.fullmatch(r"[a-z][a-z-]*", words[1]) else "")
            if name not in top:
                problems.append(f"{doc.relative_to(root)}: `tier2 {name}` is not a tier2 command")
            elif sub and _subcommands(top[name]) and sub not in _subcommands(top[name]):
                problems.append(f"{doc.relative_to(root)}: `tier2 {name} {sub}` is not a tier2 command")
    return problems


# --- the repository as it is ------------------------------------------------------------------------------------


def test_the_readme_is_a_front_door() -> None:
    assert readme_problems(ROOT) == []


def test_every_link_resolves_inside_the_repository() -> None:
    assert link_problems(ROOT) == []


def test_every_command_the_docs_name_exists() -> None:
    assert len(command_rows((ROOT / "README.md").read_text(encoding="utf-8"))) >= len(_subcommands(build_parser()))
    assert command_problems(ROOT) == []


# --- the checks fail on planted defects ---------------------------------------------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for name in ("README.md", "docs", "bench/RESULTS.md"):
        src = ROOT / name
        dest = tmp_path / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest)
        else:
            shutil.copy2(src, dest)
    for linked in ("capability_packs/phaser/docs/genre-kit.md", "capability_packs/pixi/docs/genre-kit.md", "tier2",
                   "config", "bench", "tests", "evals"):
        if not (tmp_path / linked).exists():
            (tmp_path / linked).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / linked).symlink_to(ROOT / linked)
    assert link_problems(tmp_path) == [] and command_problems(tmp_path) == []  # the copy starts clean
    return tmp_path


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.mark.parametrize(("planted", "expected"), [
    ("[gone](docs/nowhere.md)", "no such file"),
    ("[shared](../shared/docs/architecture.md)", "leaves the repository"),
    ("[abs](/etc/passwd)", "only be relative or http(s)"),
    ("[file](file:///tmp/x.md)", "only be relative or http(s)"),
    ("[anchor](docs/operations.md#no-such-heading)", "no heading with anchor"),
    ("[self](#nor-here)", "no heading with anchor"),
])
def test_a_broken_link_is_found(copy: Path, planted: str, expected: str) -> None:
    _append(copy / "README.md", f"\nSee {planted}.\n")
    problems = link_problems(copy)
    assert len(problems) == 1 and expected in problems[0], problems


def test_links_in_code_are_not_links_and_good_anchors_pass(copy: Path) -> None:
    _append(copy / "docs" / "api.md", "\n`[x](nowhere.md)`\n\n```\n[y](nowhere.md)\n```\n\n"
            "[ok](operations.md#1-configuration-three-tiers) [ok2](learning.md#measured-benchcasespy)\n")
    assert link_problems(copy) == []


def test_an_unknown_command_subcommand_or_flag_is_found(copy: Path) -> None:
    readme = copy / "README.md"
    text = readme.read_text(encoding="utf-8")
    row = "| `tier2 doctor` | Redis, Chromium and esbuild/Phaser readiness |"
    assert row in text
    readme.write_text(text.replace(row, row + "\n| `tier2 deploy` | ships it |\n"
                                   "| `tier2 serve --tls` | over TLS |\n| `tier2 runs` | `list`, `purge` |"),
                      encoding="utf-8")
    problems = command_problems(copy)
    assert any("`tier2 deploy` is not" in p for p in problems)
    assert any("has no option --tls" in p for p in problems)
    assert any("`tier2 runs purge` is not" in p for p in problems)
    _append(copy / "docs" / "testing.md", "\nRun `tier2 packs publish phaser`.\n")
    assert any("docs/testing.md: `tier2 packs publish` is not" in p for p in command_problems(copy))


def test_a_long_readme_is_refused(copy: Path) -> None:
    assert readme_problems(copy) == []
    _append(copy / "README.md", "more\n" * MAX_README_LINES)
    assert readme_problems(copy) != []


# --- nothing said twice ----------------------------------------------------------------------------------------

SHARED_WORDS = 15  # this many words in a row, in two different pages, is the same text said twice


def repeated_text(root: Path) -> list[str]:
    """Runs of `SHARED_WORDS` words (prose and tables, code blocks left out) that two different pages both hold."""
    where: dict[str, set[str]] = {}
    for doc in doc_files(root):
        words = re.findall(r"[\w`./:#-]+", _FENCE.sub("", doc.read_text(encoding="utf-8")).lower())
        name = str(doc.relative_to(root))
        for i in range(len(words) - SHARED_WORDS + 1):
            where.setdefault(" ".join(words[i:i + SHARED_WORDS]), set()).add(name)
    return sorted(f"{' and '.join(sorted(pages))}: {run}" for run, pages in where.items() if len(pages) > 1)


def test_no_text_is_said_twice() -> None:
    assert repeated_text(ROOT) == []


def test_text_said_twice_is_found(copy: Path) -> None:
    sentence = ("A run's workspace is one of three kinds behind one contract, and in every kind the project is the "
                "same absolute path on the host and inside.")
    _append(copy / "docs" / "studio.md", f"\n{sentence}\n")
    _append(copy / "docs" / "testing.md", f"\n{sentence}\n")
    found = repeated_text(copy)
    assert found and all(p.startswith("docs/studio.md and docs/testing.md: ") for p in found)
