"""``tier2 runs export RUN_ID [--out DIR]``: a copy of an ended run, made through the API, to keep it past the
store's retention (docs/operations.md §20).

The directory gets ``run.json`` (the run and its attempts), ``events.jsonl`` (every event, in order, one
``{"id", "event", "data"}`` per line), ``trajectory.json`` (every model, tool and case-library call),
``delivery.json``, ``design.json`` and ``report.json`` (the validation report) when the run has them, and
``export.json`` (what was exported from where, with each file's size and sha256). The project files themselves
live in the workspace and are not touched by retention. Nothing is overwritten: the directory must not exist or
be empty; a failure leaves no partial export (files are written to a temporary sibling directory that is renamed
at the end).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from tier2.client.api import ServiceClient, ServiceError
from tier2.client.trajectory import fetch_all
from tier2.errors import BadInput

__all__ = ["cmd_export", "export_run"]

EXPORT_VERSION = 1
_ENDED = ("delivered", "failed", "stopped")


def _optional(fetch: Any) -> Any:
    """A document the run may not have (409: no delivery yet, no design): None instead of an error."""
    try:
        return fetch()
    except ServiceError as exc:
        if exc.status in (404, 409):
            return None
        raise


def _write_json(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def export_run(api: ServiceClient, run_id: str, out: Path) -> dict[str, Any]:
    """Export the ended run ``run_id`` into ``out`` (see the module docstring); the ``export.json`` document."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInput(f"{out} exists and is not an empty directory: nothing overwritten")
    run = api.get_run(run_id)
    if run.get("status") not in _ENDED:
        raise BadInput(f"run {run_id} is {run.get('status')}: export it once it has ended")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        _write_json(tmp / "run.json", run)
        with open(tmp / "events.jsonl", "w", encoding="utf-8") as f:
            events = 0
            for seq, frame in api.events(run_id, 0):
                try:
                    data: Any = json.loads(frame.data)
                except ValueError:
                    data = frame.data
                f.write(json.dumps({"id": seq, "event": frame.event, "data": data}, ensure_ascii=False) + "\n")
                events += 1
        _write_json(tmp / "trajectory.json", fetch_all(api, run_id, None))
        for name, fetch in (("delivery.json", lambda: api.delivery(run_id)),
                            ("design.json", lambda: api.design(run_id)), ("report.json", lambda: api.report(run_id))):
            doc = _optional(fetch)
            if doc is not None:
                _write_json(tmp / name, doc)
        files = {p.name: {"bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
                 for p in sorted(tmp.iterdir())}
        manifest = {"export_version": EXPORT_VERSION, "run_id": run_id, "service": api.url,
                    "exported_at": time.time(), "run_expires_at": run.get("expires_at"), "events": events,
                    "files": files}
        _write_json(tmp / "export.json", manifest)
        if out.exists():
            out.rmdir()  # empty (checked above)
        tmp.rename(out)
        return manifest
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else Path.cwd() / f"{args.run_id}-export"
    with ServiceClient(args.url) as api:
        manifest = export_run(api, args.run_id, out)
    if args.json:
        print(json.dumps(manifest, indent=2, ensure_ascii=False))
    else:
        print(f"{args.run_id}: exported to {out} ({manifest['events']} events, {len(manifest['files'])} files)")
    return 0
