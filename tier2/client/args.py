"""Command-line argument rules shared by the in-process commands (``generate``) and the service commands
(``submit``): reading a brief, numbers that must be positive, amounts of USD."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Final

from tier2.errors import BadInput

__all__ = ["MAX_BRIEF_FILE_BYTES", "budget_options", "non_negative", "positive", "positive_seconds", "read_brief",
           "usd"]

MAX_BRIEF_FILE_BYTES: Final = 1_000_000


def read_brief(args: argparse.Namespace) -> str:
    """The brief from ``args.brief``, ``--brief-file`` or stdin (``-``), as text (at most 1 MB, UTF-8)."""
    if args.brief_file:
        path = Path(args.brief_file)
        if not path.is_file():
            raise BadInput(f"brief file {path} does not exist")
        with path.open("rb") as f:
            data = f.read(MAX_BRIEF_FILE_BYTES + 1)
    elif args.brief == "-":
        data = sys.stdin.buffer.read(MAX_BRIEF_FILE_BYTES + 1)
    else:
        return str(args.brief or "")
    if len(data) > MAX_BRIEF_FILE_BYTES:
        raise BadInput(f"brief is over {MAX_BRIEF_FILE_BYTES} bytes; the limit is a few thousand characters")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"brief is not valid UTF-8: {exc}") from exc


def non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be 0 or more")
    return value


def positive(text: str) -> int:
    value = non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of {what}") from None
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} must be a positive amount of {what}")
    return value


def usd(text: str) -> float:
    return _positive_float(text, "USD")


def positive_seconds(text: str) -> float:
    return _positive_float(text, "seconds")


def budget_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--budget-usd`` / ``--budget-tokens`` (/ ``--deadline-s``) as the run's ``budget`` (unset: the policy's)."""
    own = {"usd": args.budget_usd, "tokens": args.budget_tokens, "deadline_s": getattr(args, "deadline_s", None)}
    return {"budget": {k: v for k, v in own.items() if v is not None}}
