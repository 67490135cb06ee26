"""Builds stay in the project: real esbuild on real files; every way out of the project fails the build, readably.

Each attack puts a secret outside the project and tries to bundle it; the build must fail with an error naming the
import, and the secret must appear nowhere in ``dist/`` (nor in the log the agent reads).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tier2.packs import Pack
from tier2.toolchain import BuildResult, run_build
from tier2.toolchain.generic import build_generic_project

SECRET = "TOPSECRET-7f3a9c"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Secrets beside the project (tmp_path/game), in every flavour a loader would accept."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text(f"{SECRET}\n")
    (d / "secret.js").write_text(f"module.exports = '{SECRET}';\n")
    (d / "secret.json").write_text(json.dumps({"k": SECRET}))
    (d / "secret.css").write_text(f"body::after {{ content: '{SECRET}'; }}\n")
    return d


def leaked(project: Path, needle: bytes, result: BuildResult) -> list[str]:
    """Where ``needle`` shows up: files under the project's dist/ and the build log."""
    dist = project / "dist"
    hits = [str(p) for p in dist.rglob("*") if p.is_file() and needle in p.read_bytes()] if dist.is_dir() else []
    return hits + (["log"] if needle.decode() in result.log + " ".join(map(str, result.errors)) else [])


def write_main(project: Path, source: str) -> None:
    (project / "src/main.js").write_text(source)


async def test_unmodified_template_builds(pack: Pack, template_copy: Path) -> None:
    result = await run_build(pack, template_copy)
    assert result.ok, result.errors
    bundle = Path(result.bundle_path or "")
    assert bundle == template_copy / "dist/bundle.js" and result.bundle_bytes > 500_000  # phaser is in
    assert (template_copy / "dist/index.html").read_text() == (template_copy / "index.html").read_text()


async def test_phaser_and_relative_imports_still_bundle(pack: Pack, template_copy: Path) -> None:
    (template_copy / "src/lib").mkdir()
    (template_copy / "src/lib/util.js").write_text("export const answer = 'relative-import-ok';\n")
    write_main(template_copy, "import Phaser from 'phaser';\nimport { answer } from './lib/util.js';\n"
                              "import theme from '../data/theme.json';\n"
                              "window.__t = [Phaser.VERSION, answer, theme];\n")
    result = await run_build(pack, template_copy)
    assert result.ok, result.errors
    bundle = (template_copy / "dist/bundle.js").read_text()
    assert "relative-import-ok" in bundle and "3.90.0" in bundle


async def test_disabled_modules_and_data_urls_still_bundle(pack: Pack, template_copy: Path) -> None:
    (template_copy / "package.json").write_text(json.dumps({"browser": {"fs": False}}))
    write_main(template_copy, "import fs from 'fs';\nimport n from 'data:text/javascript,export default 4242';\n"
                              "window.__t = [fs, n];\n")
    result = await run_build(pack, template_copy)
    assert result.ok, result.errors
    assert "4242" in (template_copy / "dist/bundle.js").read_text()


ATTACKS = {
    "absolute-path-with-text": ('import s from "{outside}/secret.txt" with {{ type: "text" }};\nwindow.s = s;\n',
                                "{outside}/secret.txt"),
    "dot-dot-traversal": ('import s from "../../outside/secret.json";\nwindow.s = s;\n', "../../outside/secret.json"),
    "require": ('window.s = require("{outside}/secret.js");\n', "{outside}/secret.js"),
    "dynamic-import": ('import("../../outside/secret.js").then((m) => {{ window.s = m; }});\n',
                       "../../outside/secret.js"),
    "css-import": ('import "./style.css";\n', "../../outside/secret.css"),
    "css-url": ('import "./style.css";\n', "../../outside/secret.txt"),
    "package-browser-remap": ('import s from "./remapped.js";\nwindow.s = s;\n', "./remapped.js"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_import_outside_the_project_is_refused(
    attack: str, pack: Pack, template_copy: Path, outside: Path,
) -> None:
    source, spec = (t.format(outside=outside) for t in ATTACKS[attack])
    write_main(template_copy, source)
    (template_copy / "src/style.css").write_text(
        '@import "../../outside/secret.css";\n' if attack == "css-import"
        else "body { background: url(../../outside/secret.txt); }\n")
    (template_copy / "package.json").write_text(json.dumps({"browser": {"./src/remapped.js": "../outside/secret.js"}}))
    result = await run_build(pack, template_copy)
    assert not result.ok
    assert any(e.message.startswith(f'import of "{spec}" resolves outside the project') and e.file and e.line
               for e in result.errors), result.errors
    assert leaked(template_copy, SECRET.encode(), result) == []


async def test_proc_self_environ_as_text_is_refused(pack: Pack, template_copy: Path) -> None:
    write_main(template_copy, 'import env from "/proc/self/environ" with { type: "text" };\nwindow.e = env;\n')
    result = await run_build(pack, template_copy)
    assert not result.ok
    assert str(result.errors[0]) == ('src/main.js:1:16: import of "/proc/self/environ" resolves outside the project'
                                     " [plugin tier2-confine]")
    assert leaked(template_copy, b"PATH=", result) == []


async def test_glob_import_pattern_leaving_the_project_is_refused(
    pack: Pack, template_copy: Path, outside: Path,
) -> None:
    write_main(template_copy, "const n = 'secret';\nimport(`../../outside/${n}.js`).then((m) => { window.s = m; });\n")
    result = await run_build(pack, template_copy)
    assert not result.ok
    assert result.errors[0].file == "src/main.js" and "outside the project" in result.errors[0].message
    assert leaked(template_copy, SECRET.encode(), result) == []


async def test_symlink_in_src_to_an_outside_file_is_refused(
    pack: Pack, template_copy: Path, outside: Path,
) -> None:
    (template_copy / "src/notes.txt").symlink_to(outside / "secret.txt")
    write_main(template_copy, 'import s from "./notes.txt" with { type: "text" };\nwindow.s = s;\n')
    result = await run_build(pack, template_copy)
    assert not result.ok
    assert [e.message for e in result.errors] == ["src/notes.txt is a symlink that leaves the project"]
    assert leaked(template_copy, SECRET.encode(), result) == []


async def test_project_tsconfig_does_not_configure_the_build(
    pack: Pack, template_copy: Path, outside: Path,
) -> None:
    (template_copy / "tsconfig.json").write_text(json.dumps(
        {"compilerOptions": {"baseUrl": ".", "paths": {"@leak/*": [f"{outside}/*"]}}}))
    (template_copy / "jsconfig.json").write_text(json.dumps({"extends": str(outside / "secret.txt")}))
    write_main(template_copy, 'import s from "@leak/secret.json";\nwindow.s = s;\n')
    result = await run_build(pack, template_copy)
    assert not result.ok
    assert result.errors[0].message.startswith('Could not resolve "@leak/secret.json"'), result.errors
    assert leaked(template_copy, SECRET.encode(), result) == []


@pytest.mark.parametrize("rel", ["index.html", "src/main.js"])
async def test_html_or_entry_symlink_is_refused(rel: str, pack: Pack, template_copy: Path, outside: Path) -> None:
    (template_copy / rel).unlink()
    (template_copy / rel).symlink_to(outside / "secret.txt")
    result = await run_build(pack, template_copy)
    assert not result.ok
    assert [e.message for e in result.errors] == [f"{rel} is a symlink or leaves the project"]
    assert leaked(template_copy, SECRET.encode(), result) == []


async def test_dist_symlinks_are_never_written_through(pack: Pack, template_copy: Path, outside: Path) -> None:
    (template_copy / "dist").mkdir()
    (template_copy / "src/keep.js").write_text("// source\n")
    (template_copy / "dist/bundle.js").symlink_to("../src/keep.js")
    (template_copy / "dist/index.html").symlink_to("../src/keep.js")
    result = await run_build(pack, template_copy)
    assert result.ok, result.errors
    assert (template_copy / "src/keep.js").read_text() == "// source\n"
    assert not (template_copy / "dist/index.html").is_symlink() and not (template_copy / "dist/bundle.js").is_symlink()
    (template_copy / "dist/index.html").unlink()
    (template_copy / "dist/index.html").symlink_to(outside / "secret.txt")
    result = await run_build(pack, template_copy)
    assert [e.message for e in result.errors] == ["dist/index.html is a symlink that leaves the project"]
    assert (outside / "secret.txt").read_text() == f"{SECRET}\n"


def vite_project(root: Path) -> Path:
    """A Vite-style Phaser project: index.html loading /src/main.js as a module, assets under public/."""
    (root / "src/scenes").mkdir(parents=True)
    (root / "public/assets").mkdir(parents=True)
    (root / "public/assets/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "style.css").write_text("body { margin: 0; }\n")
    (root / "index.html").write_text(
        '<!doctype html><html><head><link rel="stylesheet" href="/style.css"></head>'
        '<body><div id="app"></div><script type="module" src="/src/main.js"></script></body></html>')
    (root / "src/scenes/Game.js").write_text(
        "import Phaser from 'phaser';\nexport class Game extends Phaser.Scene {\n"
        "  preload() { this.load.image('logo', 'assets/logo.png'); }\n}\n")
    (root / "src/main.js").write_text(
        "import Phaser from 'phaser';\nimport { Game } from './scenes/Game.js';\n"
        "new Phaser.Game({ type: Phaser.AUTO, parent: 'app', scene: [Game] });\n")
    return root


async def test_generic_build_bundles_a_vite_style_project(pack: Pack, tmp_path: Path) -> None:
    project = vite_project(tmp_path / "vite")
    out = tmp_path / "site"
    result = await build_generic_project(pack, project, out)
    assert result.ok, result.errors
    assert (out / "bundle.js").stat().st_size > 500_000
    assert '<script src="bundle.js"></script>' in (out / "index.html").read_text()
    assert (out / "assets/logo.png").is_file() and (out / "style.css").is_file()


async def test_generic_build_is_confined(pack: Pack, tmp_path: Path, outside: Path) -> None:
    project = vite_project(tmp_path / "vite")
    (project / "public/leak.txt").symlink_to(outside / "secret.txt")
    out = tmp_path / "site"
    result = await build_generic_project(pack, project, out)
    assert [e.message for e in result.errors] == ["public/leak.txt is a symlink that leaves the project"]
    assert not (out / "leak.txt").exists()  # public/ is copied beside the bundle first: without that symlink
    (project / "public/leak.txt").unlink()
    (project / "src/main.js").write_text('import s from "../../outside/secret.json";\nwindow.s = s;\n')
    result = await build_generic_project(pack, project, out)
    assert not result.ok
    assert str(result.errors[0]).startswith(
        'src/main.js:1:14: import of "../../outside/secret.json" resolves outside the project'), result.errors
    assert not any(SECRET.encode() in p.read_bytes() for p in out.rglob("*") if p.is_file())


#: (source with {path}, a path outside the project that exists, one of the same length that does not; the log
#: underlines the import, so equal lengths make equal logs) — issue #21 (d)
PROBES = {
    "absolute": ('import s from "{path}" with {{ type: "text" }};\nwindow.s = s;\n',
                 "{outside}/secret.txt", "{outside}/nopexx.txt"),
    "host-file": ('import s from "{path}" with {{ type: "text" }};\nwindow.s = s;\n', "/etc/passwd", "/etc/nosuch"),
    "relative": ('import s from "{path}";\nwindow.s = s;\n', "../../outside/secret.js", "../../outside/nopexx.js"),
    "css-url": ('import "./style.css";\n', "../../outside/secret.txt", "../../outside/nopexx.txt"),
    "bare-package": ('import s from "{path}";\nwindow.s = s;\n', "ghostpkg", "nosuchpk"),
    "glob": ("const n = 'secret';\nimport(`{path}${{n}}.js`).then((m) => {{ window.s = m; }});\n",
             "../../outside/", "../../nowhere/"),
}


@pytest.mark.parametrize("probe", list(PROBES))
async def test_a_build_error_never_tells_whether_an_outside_path_exists(
    probe: str, pack: Pack, template_copy: Path, outside: Path,
) -> None:
    """A model that builds on purpose to probe the host must learn the same thing from a path that exists and from
    one that does not: "it leaves the project". (A package in an ancestor's node_modules is such a path too.)"""
    ghost = outside.parent / "node_modules" / "ghostpkg"
    ghost.mkdir(parents=True)
    (ghost / "index.js").write_text(f"module.exports = '{SECRET}';\n")
    source, there, missing = (t.format(outside=outside, path="{path}") for t in PROBES[probe])
    seen = []
    for spec in (there, missing):
        if probe == "css-url":
            (template_copy / "src/style.css").write_text(f"body {{ background: url({spec}); }}\n")
        write_main(template_copy, source.replace("{path}", spec))
        result = await run_build(pack, template_copy)
        assert not result.ok and result.errors, spec
        assert leaked(template_copy, SECRET.encode(), result) == []
        seen.append(([str(e).replace(spec, "<path>") for e in result.errors], result.log.replace(spec, "<path>")))
    assert seen[0] == seen[1], seen  # the errors and the whole log the agent may read
    first = seen[0][0][0]
    assert "resolves outside the project" in first or "not a file or package of the project" in first, seen
