"""A pack's genres: ``<pack>/genres/<id>/genre.yaml`` plus the template, schemas and Python it names.

A genre two packs build keeps its rules once, engine-neutral, in ``<packs dir>/genres/<id>/`` (genre.yaml, the
Python, schemas, lexicon, briefs, ``template/src/state.js`` and ``template/data/``); each pack's
``genres/<id>/genre.yaml`` then says only ``rules: <id>`` and its folder adds the engine view (``template/``: the
entry, the scenes). The template is the pack's ``common/template``, the rules' template, the view's, in that order.

The pack owns every genre fact (brief words, tables, behaviours, what its play must show, how to win and lose it);
core reads them here and nowhere else. The genre's Python (``builder.py``, ``probe.py``, ``checks.py``) is pack
code shipped with tier2 — trusted like core — imported once per process as the package
``tier2_packs.<pack>_<dir hash>.<genre>`` (its modules import each other relatively). A project's files are never
loaded as code or configuration.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from tier2.errors import PackError
from tier2.lexis import without_injections
from tier2.packs.interface import GenreCode, ProbePolicy, bind_genre_code
from tier2.packs.knobs import Applied, Knob, KnobChange, apply_knob_changes, path_values
from tier2.packs.templates import compose_template

__all__ = ["Genre", "GenreSpec", "Knob", "ObserveRule", "ProbeBounds", "ProbePolicy", "RequirementTemplate",
           "load_genres"]

GENRE_ID = re.compile(r"^[a-z][a-z0-9_]{1,31}$")
_TABLE = re.compile(r"^[a-z][a-z0-9_]*\.json$")
#: a genre probe's ``win_action`` / ``lose_action`` (`tier2.packs.interface`): (state, actions, tables) -> action
#: name | (name, frames) | None (what it returns is checked where it is played: `tier2.validators.latch.decide`)


class ObserveRule(BaseModel):
    """A genre-gate witness: pressing ``action`` in Play changes state ``field`` this way."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    action: str = Field(min_length=1, max_length=40)
    field: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")
    change: Literal["increase", "decrease", "change"]
    says: str = Field(min_length=1, max_length=200)


class ProbeBounds(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    max_win_actions: int = Field(default=300, ge=1, le=5000)
    max_lose_actions: int = Field(default=200, ge=1, le=5000)
    action_frames: int = Field(default=6, ge=1, le=600)


class RequirementTemplate(BaseModel):
    """A requirement the offline designer states for this genre (``predicate`` as in `tier2.design.spec`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str = Field(min_length=1, max_length=300)
    role: str = Field(pattern=r"^[a-z_]{2,32}$")
    predicate: dict[str, Any]


class GenreSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=GENRE_ID.pattern)
    title: str = Field(min_length=1, max_length=80)
    summary: str = Field(min_length=1, max_length=400)
    brief_words: list[str] = Field(min_length=1)
    behaviours: list[str] = Field(min_length=1)
    data_tables: list[str] = Field(min_length=1)
    state: dict[str, str] = {}
    probe: ProbeBounds = ProbeBounds()
    observe: list[ObserveRule] = Field(min_length=1)
    requirements: list[RequirementTemplate] = []
    adjust: list[Knob] = []


@dataclass(frozen=True)
class Genre:
    """One loaded genre of a pack."""

    spec: GenreSpec
    root: Path
    pack_id: str
    #: the pack's shared template parts (``<pack>/common/template``), None when it has none
    common: Path | None = None
    #: the pack's view folder of a genre whose rules are shared (``root`` is then the rules' folder), else None
    view: Path | None = None
    _modules: dict[str, ModuleType] = field(default_factory=dict, compare=False, repr=False)

    @property
    def id(self) -> str:
        return self.spec.id

    @cached_property
    def template_dir(self) -> Path:
        """The whole template: the pack's ``common/template`` overlaid by the genre's own ``template/`` (and, for
        shared rules, the pack's view over both) (`tier2.packs.templates`); read-only."""
        return compose_template(f"{self.pack_id}-{self.id}", self.template_layers)

    @property
    def template_layers(self) -> list[Path]:
        """The folders `template_dir` composes, lowest first: the pack's common parts, the genre's ``template/``,
        the pack's view of shared rules."""
        layers = [self.common, self.root / "template", self.view / "template" if self.view else None]
        return [p for p in layers if p is not None]

    @property
    def schemas_dir(self) -> Path:
        return self.root / "schemas"

    @property
    def adjust(self) -> list[Knob]:
        """The genre's adjustable numbers (``adjust:`` in its genre.yaml, `tier2.packs.knobs`)."""
        return list(self.spec.adjust)

    def knob(self, knob_id: str) -> Knob | None:
        return next((k for k in self.spec.adjust if k.id == knob_id), None)

    def apply_changes(self, tables: dict[str, Any], changes: list[KnobChange], brief: str = "") -> Applied:
        """The ``knob`` changes applied to built ``tables`` and re-held by the builder's own gates
        (`tier2.packs.knobs.apply_knob_changes`); ``brief``: the game's brief, which seeds a new level's layout."""
        code = self.code
        return apply_knob_changes(self.id, self.spec.adjust, code.adjust_count, code.hold_tables, tables, changes,
                                  brief)

    def schema(self, table: str) -> dict[str, Any]:
        return dict(json.loads((self.schemas_dir / table.replace(".json", ".schema.json")).read_text()))

    @cached_property
    def reader_cues(self) -> dict[str, dict[str, float]]:
        """What a brief describes when it asks for this genre (``reader:`` in its ``lexicon.yaml``): ``{"en": {lemma
        or phrase: weight}, "zh": {word: weight}}``, read by the offline brief reader (`tier2.design.reader`)."""
        path = self.root / "lexicon.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
        reader = (data or {}).get("reader") or {}
        if not isinstance(reader, dict):
            raise PackError(f"{path}: reader must be a mapping of en/zh cues")
        return {lang: {str(k): float(v) for k, v in (reader.get(lang) or {}).items()} for lang in ("en", "zh")}

    @cached_property
    def reader_mechanics(self) -> dict[str, dict[str, list[str]]]:
        """Which of a brief's mechanic verbs this genre's play shows (``reader.key_actions`` / ``reader.play_events``
        in its lexicon.yaml): ``{"key_action": {action: [verbs]}, "play_event": {counter: [verbs]}}``."""
        path = self.root / "lexicon.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
        reader = (data or {}).get("reader") or {}
        return {"key_action": {str(k): [str(w) for w in v] for k, v in (reader.get("key_actions") or {}).items()},
                "play_event": {str(k): [str(w) for w in v] for k, v in (reader.get("play_events") or {}).items()}}

    @cached_property
    def schemas(self) -> dict[str, dict[str, Any]]:
        return {t: self.schema(t) for t in self.spec.data_tables}

    @property
    def package(self) -> str:
        """The import package of the genre's Python: its modules import each other with relative imports
        (``from . import checks``), as in any Python package. Named after the directory (its owner and a hash of
        its path): two copies of a pack (a test's edited copy) never share modules; the packs viewing one set of
        shared rules do."""
        where = hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:10]
        return f"tier2_packs.{self.root.parent.parent.name}_{where}.{self.id}"

    def module(self, name: Literal["builder", "probe", "checks"]) -> ModuleType | None:
        """The genre's ``<name>.py`` (None when it has none), imported once, inside the genre's package."""
        if name in self._modules:
            return self._modules[name]
        path = self.root / f"{name}.py"
        if not path.is_file():
            return None
        _ensure_package(self.package, self.root)
        qual = f"{self.package}.{name}"
        try:
            mod = importlib.import_module(qual)
        except Exception as exc:
            sys.modules.pop(qual, None)
            raise PackError(f"genre {self.id}: {path.name} failed to import: {exc}") from exc
        self._modules[name] = mod
        return mod

    @cached_property
    def code(self) -> GenreCode:
        """The genre's Python hooks, imported and checked against the genre interface (`tier2.packs.interface`);
        `PackError` with every reason when it does not meet it."""
        return bind_genre_code(self.id, self.module)

    def build_tables(self, brief: str) -> dict[str, Any]:
        """The offline builder's tables for ``brief`` (every ``data_tables`` entry); a prompt-injection clause of the
        brief is blanked first (`tier2.lexis.without_injections`), so none of its words becomes a title or a name."""
        tables = dict(self.code.build_tables(without_injections(brief)))  # injected text names nothing in a game
        missing = [t for t in self.spec.data_tables if t not in tables]
        if missing:
            raise PackError(f"genre {self.id}: builder returned no {', '.join(missing)}")
        return tables

    def check_tables(self, tables: dict[str, Any], options: dict[str, Any] | None = None) -> list[Any]:
        """The genre's own data checks (``checks.check_tables(tables, options)``); [] when it has none."""
        fn = self.code.check_tables
        return [] if fn is None else list(fn(tables, options or {}))

    def probe_fns(self) -> tuple[ProbePolicy, ProbePolicy]:
        return self.code.win_action, self.code.lose_action


def _yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise PackError(f"invalid genre manifest {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise PackError(f"invalid genre manifest {path}: not a mapping")
    return data


def _rules_of(view: Path, data: dict[str, Any], rules_dir: Path) -> Path:
    """The shared rules folder a view's ``genre.yaml`` names (``rules: <id>``, nothing else, the id its own)."""
    rules = data.get("rules")
    if set(data) != {"rules"} or rules != view.name:
        raise PackError(f"{view / 'genre.yaml'}: a view names only its rules, `rules: {view.name}` "
                        f"(the genre's facts live in {rules_dir / view.name}/genre.yaml)")
    root = rules_dir / view.name
    if not (root / "genre.yaml").is_file():
        raise PackError(f"{view / 'genre.yaml'}: no shared rules {root}/genre.yaml")
    if not (view / "template").is_dir():
        raise PackError(f"{view}: a view of shared rules needs its own template/ (the engine's entry and scenes)")
    return root


def _load_one(folder: Path, pack_id: str, common: Path | None, rules_dir: Path) -> Genre:
    data = _yaml(folder / "genre.yaml")
    view: Path | None = None
    root = folder
    if "rules" in data:
        view, root = folder, _rules_of(folder, data, rules_dir)
        data = _yaml(root / "genre.yaml")
    path = root / "genre.yaml"
    try:
        spec = GenreSpec(**data)
    except Exception as exc:
        raise PackError(f"invalid genre manifest {path}: {exc}") from exc
    if spec.id != folder.name:
        raise PackError(f"{path}: id {spec.id!r} does not match directory {folder.name!r}")
    genre = Genre(spec=spec, root=root, pack_id=pack_id, common=common, view=view)
    for table in spec.data_tables:
        if not _TABLE.match(table):
            raise PackError(f"genre {spec.id}: bad table name {table!r}")
        if not (genre.template_dir / "data" / table).is_file():
            raise PackError(f"genre {spec.id}: template lacks data/{table}")
        if not (genre.schemas_dir / table.replace(".json", ".schema.json")).is_file():
            raise PackError(f"genre {spec.id}: no schema for {table} in {genre.schemas_dir}")
    _check_knobs(genre)
    genre.code  # noqa: B018 - the genre interface, checked as the pack loads: a genre missing a hook is refused
    return genre


def _check_knobs(genre: Genre) -> None:
    """Every knob names a table of the genre and a path its template's table has (a number, or a list for a
    ``count_of`` knob); ids are unique."""
    seen: set[str] = set()
    for knob in genre.spec.adjust:
        where = f"genre {genre.id}: adjust {knob.id}"
        if knob.id in seen:
            raise PackError(f"{where}: duplicate knob id")
        seen.add(knob.id)
        if knob.table not in genre.spec.data_tables:
            raise PackError(f"{where}: {knob.table} is not one of its data tables")
        data = json.loads((genre.template_dir / "data" / knob.table).read_text())
        try:
            found = path_values(data, knob.path)
        except KeyError as exc:
            raise PackError(f"{where}: template data/{knob.table} has no {exc.args[0]}") from exc
        want = list if knob.count_of else (int, float)
        bad = [at for at, v in found if not isinstance(v, want) or isinstance(v, bool)]
        if not found or bad:
            raise PackError(f"{where}: {knob.path} is not {'a list' if knob.count_of else 'a number'} in the "
                            f"template's data/{knob.table}")


def load_genres(genres_dir: Path, pack_id: str, rules_dir: Path | None = None) -> dict[str, Genre]:
    """Every ``<genres_dir>/<id>/genre.yaml``, by id (sorted); their templates over the pack's
    ``common/template`` (beside ``genres_dir``) when it has one; ``rules_dir``: where shared rules live (default
    ``<packs dir>/genres``, beside the pack)."""
    if not genres_dir.is_dir():
        raise PackError(f"pack {pack_id}: genres dir {genres_dir} missing")
    out = {}
    common = genres_dir.parent / "common" / "template"
    shared = rules_dir or genres_dir.parent.parent / "genres"
    for root in sorted(p for p in genres_dir.iterdir() if (p / "genre.yaml").is_file()):
        genre = _load_one(root, pack_id, common if common.is_dir() else None, shared)
        out[genre.id] = genre
    if not out:
        raise PackError(f"pack {pack_id}: no genre in {genres_dir}")
    return out


def _ensure_package(qual: str, root: Path) -> None:
    """Register ``tier2_packs.<pack>.<genre>`` (and its parents) as packages whose only search path is the genre's
    directory, so the genre's modules are found by the normal import system and nothing else is."""
    parts = qual.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if name in sys.modules:
            continue
        pkg = ModuleType(name)
        pkg.__path__ = [str(root)] if i == len(parts) else []
        pkg.__package__ = name
        sys.modules[name] = pkg
