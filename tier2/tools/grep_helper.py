"""Search files for a regular expression: the Grep tool's worker process (standard library only).

Run as ``python -I grep_helper.py`` with the request as JSON on stdin and an empty environment. A separate
process so that a pathological pattern (catastrophic backtracking) is bounded by the tool's timeout and killed,
and so that no external program parses model-supplied arguments. The caller has already checked that ``path``
is inside the project; files are re-checked here (symlinks resolved) so a link can never lead outside it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
from typing import Any

TYPES = {"js": (".js", ".mjs", ".cjs", ".jsx"), "ts": (".ts", ".tsx"), "json": (".json",), "html": (".html",),
         "css": (".css",), "md": (".md",), "py": (".py",)}
SKIP_DIRS = {".git", "node_modules", ".tier2"}
MAX_FILE_BYTES = 2_000_000
MAX_LINE_CHARS = 500
MAX_LINES = 5000


def _files(root: str, base: str, glob: str | None, ftype: str | None) -> list[str]:
    paths = [base] if os.path.isfile(base) else []
    if not paths:
        for d, dirs, names in os.walk(base):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
            paths += [os.path.join(d, n) for n in sorted(names)]
    out = []
    for p in paths:
        real = os.path.realpath(p)
        if real != root and not real.startswith(root + os.sep):
            continue
        rel = os.path.relpath(p, base)
        if glob and not any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(os.path.basename(p), g)
                            for g in glob.replace(",", " ").split()):
            continue
        if ftype and not p.endswith(TYPES.get(ftype, (f".{ftype}",))):
            continue
        out.append(p)
    return out


def search(req: dict[str, Any]) -> list[str]:
    root = os.path.realpath(req["root"])
    flags = re.IGNORECASE if req.get("i") else 0
    if req.get("multiline"):
        flags |= re.DOTALL | re.MULTILINE
    rx = re.compile(req["pattern"], flags)
    mode = req.get("output_mode") or "files_with_matches"
    ctx_before = int(req.get("before") or 0)
    ctx_after = int(req.get("after") or 0)
    lines_out: list[str] = []
    for path in _files(root, req["path"], req.get("glob"), req.get("type")):
        if len(lines_out) >= MAX_LINES:
            break
        try:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if mode == "files_with_matches":
            if rx.search(text):
                lines_out.append(path)
            continue
        lines = text.splitlines()
        hits = [n for n, line in enumerate(lines) if rx.search(line)]
        if mode == "count":
            if hits:
                lines_out.append(f"{path}:{len(hits)}")
            continue
        shown: set[int] = set()
        for n in hits:
            for k in range(max(0, n - ctx_before), min(len(lines), n + ctx_after + 1)):
                if k not in shown:
                    shown.add(k)
                    sep = ":" if k == n else "-"
                    prefix = f"{path}{sep}{k + 1}{sep}" if req.get("n", True) else f"{path}{sep}"
                    lines_out.append(prefix + lines[k][:MAX_LINE_CHARS])
    return lines_out


def main() -> int:
    try:
        req = json.loads(sys.stdin.read())
        json.dump({"lines": search(req)}, sys.stdout)
    except re.error as exc:
        json.dump({"error": f"invalid regular expression: {exc}"}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
