"""``tier2 eval compare A B`` and ``tier2 eval report OUT`` beside ``tier2 eval SUITE``.

The eval parser's first positional is the suite, so argparse cannot hold sub-commands next to it; instead the
``eval`` entry of the top-level sub-parser is replaced by a router that hands ``compare ...`` and ``report ...`` to
their own parsers (`tier2.evals.compare`, `tier2.evals.report`) and everything else to the suite parser.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

__all__ = ["SUBCOMMANDS", "route_subcommands"]

SUBCOMMANDS = ("compare", "report")


class _EvalRouter(argparse.ArgumentParser):
    def __init__(self, suite_parser: argparse.ArgumentParser, commands: argparse.ArgumentParser) -> None:
        super().__init__(prog=suite_parser.prog, add_help=False)
        self._suite_parser = suite_parser
        self._commands = commands
        # what introspects a parser (the docs' command checks, shell completion) sees the suite parser's options
        # and the compare/report sub-commands; parsing itself never reads this list (parse_known_args routes)
        self._actions = [*suite_parser._actions, *commands._actions]  # noqa: SLF001

    def parse_known_args(self, args: Iterable[str] | None = None, namespace: Any = None,
                         ) -> tuple[Any, list[str]]:
        argv = list(args) if args is not None else []
        target = self._commands if argv and argv[0] in SUBCOMMANDS else self._suite_parser
        return target.parse_known_args(argv, namespace)

    def format_help(self) -> str:
        return self._suite_parser.format_help()


def route_subcommands(sub: Any, suite_parser: argparse.ArgumentParser) -> None:
    """Make ``tier2 eval compare|report`` reach their parsers; ``sub`` is the top-level sub-parser action the
    ``eval`` parser (``suite_parser``) was added to."""
    from tier2.evals import compare, report

    commands = argparse.ArgumentParser(prog=suite_parser.prog, add_help=False)
    inner = commands.add_subparsers(dest="eval_command", metavar="{compare,report}", required=True)
    compare.add_parser(inner)
    report.add_parser(inner)
    suite_parser.epilog = ((suite_parser.epilog or "") + " also: 'tier2 eval compare A B' (what got better or "
                           "worse; exit 1 on a regression) and 'tier2 eval report OUT' (report.html again).").strip()
    name = next(n for n, p in sub.choices.items() if p is suite_parser)
    sub.choices[name] = _EvalRouter(suite_parser, commands)
