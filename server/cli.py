"""The `tritonlens` command line: each subcommand lives in its own module under server/commands/."""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import PackageNotFoundError, version

from ..analysis.state.session import Session

# Modules that define a subcommand: each has `register(subparsers)` which sets `func` on its parser.
COMMAND_MODULES = (
    "tritonlens.server.commands.check",
    "tritonlens.server.commands.rules",
    "tritonlens.server.commands.serve",
    "tritonlens.server.commands.runners",
    "tritonlens.server.commands.ir",
    "tritonlens.server.commands.profile",
    "tritonlens.server.commands.record",
    "tritonlens.server.commands.optimize",
    "tritonlens.server.commands.bench",
)


def package_version() -> str:
    try:
        return version("tritonlens")
    except PackageNotFoundError:
        return "0+unknown"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # Usage errors exit with 2, as argparse does, but say how to get help.
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tritonlens", description="See why a Triton kernel is slow, with the compiler's evidence."
    )
    parser.add_argument("--version", action="version", version=f"tritonlens {package_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        with Session().active():  # this run's caches (analysis/state/session.py); `serve` installs its own
            return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
