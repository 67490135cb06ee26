"""The project's asset pool: ``assets/manifest.json`` and the files it registers.

```json
{"assets": [{"id": "player.paper_airplane", "description": "a paper airplane", "role": "player",
             "requirements": ["R5"], "source": "procedural", "sha256": "…", "licence": "CC0-1.0",
             "file": "assets/player.paper_airplane.png"}]}
```

``id`` is `tier2.design.assets.asset_key` of the role and the name taken from the description (`name_of`); the
file of an asset is always ``assets/<id>.png`` (a visual role) or ``assets/<id>.wav`` (``sound``). The manifest is
a project file the sandbox may have edited: nothing in it is trusted. `read_manifest` reads it through `ProjectDir`
(no link followed, size caps), checks its shape and every entry (key scheme, role, file name, requirement ids) and
re-hashes every file (a regular file with one name, its bytes a PNG or a WAV, within `MAX_ASSET_BYTES`); entries
that fail are reported, never used. `register_asset` is the one writer of the manifest (the RequestAsset tool).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tier2.design.assets import ASSET_KEY, asset_key
from tier2.hostio import ProjectDir, UnsafePath

__all__ = ["ASSET_ROLES", "MANIFEST", "MAX_ASSETS", "MAX_ASSET_BYTES", "MAX_DESCRIPTION", "MAX_MANIFEST_BYTES",
           "VISUAL_ROLES", "AssetEntry", "AssetRefused", "ManifestRead", "asset_file", "check_request",
           "name_of", "publish_assets", "read_manifest", "register_asset"]

#: the roles an asset may play (``sound`` is the one audio role)
ASSET_ROLES: Final = ("player", "enemy", "pickup", "goods", "customer", "obstacle", "backdrop", "sound")
VISUAL_ROLES: Final = frozenset(ASSET_ROLES) - {"sound"}
MANIFEST: Final = "assets/manifest.json"
MAX_ASSETS: Final = 24
MAX_ASSET_BYTES: Final = 512_000
MAX_MANIFEST_BYTES: Final = 200_000
MAX_DESCRIPTION: Final = 200
MAX_REQUIREMENTS: Final = 20
SOURCES: Final = frozenset({"procedural", "model"})
_REQ_ID = re.compile(r"^R[0-9]{1,3}$")
_FIELDS = ("id", "description", "role", "requirements", "source", "sha256", "licence", "file")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_LEAD = re.compile(r"^(?:(?:a|an|the|some|one|two|three|several|many|lots of)\s+)+", re.I)
_CUT = re.compile(r"\s*(?:[,;:()\[\]—–]|\s-\s|\bwith\b|\bthat\b|\bwhich\b|\bwho\b|，|；|：|。)\s*", re.I)
PNG_MAGIC: Final = b"\x89PNG\r\n\x1a\n"


class AssetRefused(ValueError):
    """A request or registration tier2 will not make (the message is meant for the writer)."""


@dataclass(frozen=True)
class AssetEntry:
    id: str
    description: str
    role: str
    requirements: tuple[str, ...]
    source: str
    sha256: str
    licence: str
    file: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "description": self.description, "role": self.role,
                "requirements": list(self.requirements), "source": self.source, "sha256": self.sha256,
                "licence": self.licence, "file": self.file}


@dataclass
class ManifestRead:
    """What `read_manifest` found: ``present`` (a manifest file is there), the entries that verified, and every
    problem (a broken manifest, an entry that does not verify: its id or index first)."""

    present: bool = False
    entries: list[AssetEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ids(self) -> set[str]:
        return {e.id for e in self.entries}


def name_of(description: str) -> str:
    """The entity name a description gives its asset id: the description up to its first clause break (a comma,
    "with", "that"...), without leading articles/counts — ``"a paper airplane, folded from notebook paper"`` →
    ``"paper airplane"``."""
    text = " ".join(description.split())
    head = _CUT.split(text, maxsplit=1)[0] if text else ""
    head = _LEAD.sub("", head).strip(" .!?")
    return head or text


def asset_file(asset_id: str, role: str) -> str:
    """The project-relative file of an asset: ``assets/<id>.png`` (``.wav`` for a sound)."""
    return f"assets/{asset_id}.{'wav' if role == 'sound' else 'png'}"


def _media_ok(role: str, data: bytes) -> bool:
    if role == "sound":
        return data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    return data.startswith(PNG_MAGIC)


def check_request(role: object, description: object, requirements: object = None) -> tuple[str, str, list[str]]:
    """The RequestAsset arguments checked (every one hostile): (role, description, requirement ids)."""
    if not isinstance(role, str) or role not in ASSET_ROLES:
        raise AssetRefused(f"role must be one of {', '.join(ASSET_ROLES)} (got {str(role)[:40]!r})")
    if not isinstance(description, str):
        raise AssetRefused("description must be a string")
    desc = " ".join(description.split())
    if not desc:
        raise AssetRefused("description is empty: say what the asset shows (\"a paper airplane\")")
    if len(desc) > MAX_DESCRIPTION:
        raise AssetRefused(f"description is {len(desc)} characters, over the limit of {MAX_DESCRIPTION}")
    if any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in desc):
        raise AssetRefused("description may not contain control characters")
    reqs: list[str] = []
    if requirements is not None:
        if not isinstance(requirements, list) or len(requirements) > MAX_REQUIREMENTS:
            raise AssetRefused(f"requirements must be a list of at most {MAX_REQUIREMENTS} requirement ids (R1…)")
        for r in requirements:
            if not isinstance(r, str) or not _REQ_ID.match(r):
                raise AssetRefused(f"requirement id {str(r)[:20]!r} is not of the form R<number>")
            if r not in reqs:
                reqs.append(r)
    return role, desc, reqs


def _entry(raw: object, i: int) -> AssetEntry:
    """One manifest entry checked for shape (not yet its file); `AssetRefused` says what is wrong."""
    if not isinstance(raw, dict):
        raise AssetRefused(f"entry {i} is not an object")
    missing = [k for k in _FIELDS if k not in raw]
    extra = sorted(set(raw) - set(_FIELDS))
    if missing or extra:
        raise AssetRefused(f"entry {i}: " + "; ".join(
            ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unknown {', '.join(extra[:5])}"] if extra
                                                                      else [])))
    aid, role = raw["id"], raw["role"]
    if not isinstance(aid, str) or not ASSET_KEY.match(aid):
        raise AssetRefused(f"entry {i}: id {str(aid)[:60]!r} is not an asset key (role.name)")
    if not isinstance(role, str) or role not in ASSET_ROLES:
        raise AssetRefused(f"{aid}: role {str(role)[:40]!r} is not one of {', '.join(ASSET_ROLES)}")
    if aid.split(".", 1)[0] != role:
        raise AssetRefused(f"{aid}: the id's role part is not its role {role!r}")
    desc = raw["description"]
    if not isinstance(desc, str) or not desc.strip() or len(desc) > MAX_DESCRIPTION:
        raise AssetRefused(f"{aid}: description must be 1..{MAX_DESCRIPTION} characters")
    if aid != asset_key(role, name_of(desc)):
        raise AssetRefused(f"{aid}: the id is not the asset key of its role and description "
                           f"({asset_key(role, name_of(desc))})")
    reqs = raw["requirements"]
    if not isinstance(reqs, list) or len(reqs) > MAX_REQUIREMENTS or not all(
            isinstance(r, str) and _REQ_ID.match(r) for r in reqs):
        raise AssetRefused(f"{aid}: requirements must be a list of requirement ids (R1…)")
    if raw["source"] not in SOURCES:
        raise AssetRefused(f"{aid}: source {str(raw['source'])[:40]!r} is not one of {', '.join(sorted(SOURCES))}")
    if not isinstance(raw["sha256"], str) or not _SHA.match(raw["sha256"]):
        raise AssetRefused(f"{aid}: sha256 is not 64 hex digits")
    if not isinstance(raw["licence"], str) or not 0 < len(raw["licence"]) <= 64:
        raise AssetRefused(f"{aid}: licence must be a short licence name (CC0-1.0)")
    if raw["file"] != asset_file(aid, role):
        raise AssetRefused(f"{aid}: file {str(raw['file'])[:80]!r} is not {asset_file(aid, role)}")
    return AssetEntry(aid, desc, role, tuple(reqs), raw["source"], raw["sha256"], raw["licence"], raw["file"])


def read_manifest(project: Path | ProjectDir, *, check_files: bool = True) -> ManifestRead:
    """The project's manifest read without trusting it: shape, every entry, and (``check_files``) every file
    re-hashed. A project without ``assets/manifest.json`` has nothing registered (``present`` False)."""
    pdir = project if isinstance(project, ProjectDir) else ProjectDir(project)
    out = ManifestRead()
    if pdir.lstat(MANIFEST) is None:
        return out
    out.present = True
    try:
        raw = json.loads(pdir.read_text(MANIFEST, max_bytes=MAX_MANIFEST_BYTES))
    except FileNotFoundError:
        out.present = False
        return out
    except (OSError, UnicodeDecodeError) as exc:
        out.problems.append(f"{MANIFEST}: {exc}")
        return out
    except ValueError as exc:
        out.problems.append(f"{MANIFEST} is not JSON: {str(exc)[:120]}")
        return out
    if not isinstance(raw, dict) or set(raw) != {"assets"} or not isinstance(raw["assets"], list):
        out.problems.append(f'{MANIFEST} must be {{"assets": [...]}} and nothing else')
        return out
    if len(raw["assets"]) > MAX_ASSETS:
        out.problems.append(f"{MANIFEST} registers {len(raw['assets'])} assets, over the limit of {MAX_ASSETS}")
        return out
    seen: set[str] = set()
    for i, item in enumerate(raw["assets"]):
        try:
            entry = _entry(item, i)
            if entry.id in seen:
                raise AssetRefused(f"{entry.id}: registered twice")
            seen.add(entry.id)
            if check_files:
                data = pdir.read_bytes(entry.file, max_bytes=MAX_ASSET_BYTES)
                if hashlib.sha256(data).hexdigest() != entry.sha256:
                    raise AssetRefused(f"{entry.id}: {entry.file} does not match its sha256 (changed after it was "
                                       "registered)")
                if not _media_ok(entry.role, data):
                    raise AssetRefused(f"{entry.id}: {entry.file} is not a {'WAV' if entry.role == 'sound' else 'PNG'}")
        except AssetRefused as exc:
            out.problems.append(str(exc))
            continue
        except FileNotFoundError:
            out.problems.append(f"{item.get('id')}: {item.get('file')} is missing")
            continue
        except (UnsafePath, OSError) as exc:
            out.problems.append(f"{item.get('id')}: {exc}")
            continue
        out.entries.append(entry)
    return out


def register_asset(project: Path | ProjectDir, role: str, description: str, requirements: list[str], data: bytes,
                   source: str, licence: str) -> tuple[AssetEntry, list[str]]:
    """Write the asset's file and (re)register it in the manifest; returns the entry and the manifest entries that
    were dropped because they no longer verify (a file the sandbox changed...). The same role and description
    replace their earlier asset (same id)."""
    pdir = project if isinstance(project, ProjectDir) else ProjectDir(project)
    role, description, requirements = check_request(role, description, requirements)
    if source not in SOURCES:
        raise AssetRefused(f"unknown source {source!r}")
    if len(data) > MAX_ASSET_BYTES:
        raise AssetRefused(f"the asset is {len(data)} bytes, over the limit of {MAX_ASSET_BYTES}")
    if not _media_ok(role, data):
        raise AssetRefused(f"the asset data is not a {'WAV' if role == 'sound' else 'PNG'}")
    aid = asset_key(role, name_of(description))
    current = read_manifest(pdir)
    kept = [e for e in current.entries if e.id != aid]
    if len(kept) >= MAX_ASSETS:
        raise AssetRefused(f"the project already registers {len(kept)} assets, the limit is {MAX_ASSETS}")
    entry = AssetEntry(aid, description, role, tuple(requirements), source, hashlib.sha256(data).hexdigest(),
                       licence, asset_file(aid, role))
    pdir.write_bytes(entry.file, data)
    doc = {"assets": [e.to_json() for e in [*kept, entry]]}
    pdir.write_text(MANIFEST, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return entry, current.problems


def publish_assets(project: Path | ProjectDir, out_dir: str = "dist/assets") -> list[str]:
    """Copy every asset that verifies into the built game (``dist/assets/<id>.<ext>``, what the page loads beside
    ``dist/index.html``), replacing what an earlier build put there; returns the manifest's problems (the L1 asset
    gate reports them). Nothing that fails `read_manifest` is copied."""
    pdir = project if isinstance(project, ProjectDir) else ProjectDir(project)
    found = read_manifest(pdir)
    pdir.remove(out_dir)
    for e in found.entries:
        data = pdir.read_bytes(e.file, max_bytes=MAX_ASSET_BYTES)
        if hashlib.sha256(data).hexdigest() == e.sha256:  # (read again: it may have changed since)
            pdir.write_bytes(f"{out_dir}/{e.file.rsplit('/', 1)[1]}", data)
    return found.problems
