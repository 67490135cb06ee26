"""Eval suites as files: ``evals/<suite>/suite.yaml`` (``schema: tier2.eval.suite/1``), strictly validated and
hashed (docs/eval.md "Suites").

A suite names its pack; every expected genre must be one of the pack's genres or one it declares unsupported
(``unsupported_genres`` in pack.yaml), so a typo fails the load instead of silently never matching. The hash is the
sha256 of the canonical JSON of the validated suite: reformatting the YAML or reordering keys keeps it, changing a
brief, an expectation or the version does not.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tier2.errors import BadInput

__all__ = ["SUITE_FILE", "SUITE_SCHEMA", "Brief", "Expect", "FollowUp", "Suite", "load_suite", "suite_hash",
           "suite_path"]

SUITE_SCHEMA = "tier2.eval.suite/1"
SUITE_FILE = "suite.yaml"

_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Expect(_Strict):
    """What an honest run of the brief comes to: ``delivered`` (the right genre, L1 passing), ``partial``
    (delivered with the unbuildable parts listed, or not delivered with the reason) or ``refused`` (not delivered,
    the reason stated at the design)."""

    outcome: Literal["delivered", "partial", "refused"] = "delivered"
    genre: str | None = None
    #: content the built game should have, in the brief's words ("fox", "spikes", "面包")
    content: tuple[str, ...] = ()


class FollowUp(_Strict):
    text: str = Field(min_length=1)
    expect: Expect = Field(default_factory=Expect)


class Brief(_Strict):
    id: str = Field(pattern=_ID)
    brief: str = Field(min_length=1)
    lang: str = "en"
    tags: tuple[str, ...] = ()
    expect: Expect = Field(default_factory=Expect)
    follow_ups: tuple[FollowUp, ...] = ()


class Suite(_Strict):
    schema_: Literal["tier2.eval.suite/1"] = Field(alias="schema")
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    id: str = Field(pattern=_ID)
    version: str = Field(min_length=1)
    description: str = ""
    #: the capability pack (empty: the configured one, `tier2.settings.loader.Settings.pack_id`)
    pack: str = ""
    briefs: tuple[Brief, ...] = Field(min_length=1)

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, v: object) -> object:
        return str(v) if isinstance(v, int | float) else v

    def canonical(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True, ensure_ascii=False,
                          separators=(",", ":"))


def suite_hash(suite: Suite) -> str:
    return hashlib.sha256(suite.canonical().encode("utf-8")).hexdigest()


def suite_path(arg: str | Path) -> Path:
    """SUITE on the command line: a suite directory or its suite.yaml."""
    path = Path(arg)
    file = path / SUITE_FILE if path.is_dir() else path
    if not file.is_file():
        raise BadInput(f"no eval suite at {arg} (expected a directory with {SUITE_FILE}, or the file itself)")
    return file


def load_suite(arg: str | Path, genres: set[str]) -> Suite:
    """The suite at ``arg``, validated; ``genres``: the names an expected genre may take (the pack's genres and the
    ones it declares unsupported). Any problem is a `BadInput` naming the file and the field (exit 2)."""
    file = suite_path(arg)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BadInput(f"{file}: not a readable YAML file ({exc})") from exc
    if not isinstance(data, dict):
        raise BadInput(f"{file}: a suite is a mapping with schema: {SUITE_SCHEMA}")
    if data.get("schema") != SUITE_SCHEMA:
        raise BadInput(f"{file}: schema must be {SUITE_SCHEMA!r} (got {data.get('schema')!r})")
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadInput(f"{file}: {where}: {first['msg']} ({exc.error_count()} problem(s))") from exc
    seen: set[str] = set()
    for b in suite.briefs:
        if b.id in seen:
            raise BadInput(f"{file}: duplicate brief id {b.id!r}")
        seen.add(b.id)
        for where, exp in [(b.id, b.expect), *((f"{b.id} follow-up {i + 1}", f.expect)
                                                for i, f in enumerate(b.follow_ups))]:
            if exp.genre is not None and exp.genre not in genres:
                raise BadInput(f"{file}: {where}: unknown genre {exp.genre!r} (pack {suite.pack} knows: "
                               f"{', '.join(sorted(genres))})")
    return suite
