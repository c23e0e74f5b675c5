"""The `tritonlens` command line: each subcommand lives in its own module under server/commands/."""

from __future__ import annotations

import argparse
import importlib
import sys

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
    """The installed distribution's version. Read from its dist-info METADATA on sys.path, as importlib.metadata
    finds it (first entry that has one), without importing importlib.metadata: that import (email parsing, zipfile,
    csv) was about 40 ms of CPU before the language server could answer `initialize`."""
    found = _dist_info_version("tritonlens")
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tritonlens")
    except PackageNotFoundError:
        return "0+unknown"


def _dist_info_version(name: str) -> str | None:
    import os

    for entry in sys.path:
        try:
            infos = [n for n in os.listdir(entry or ".") if n.endswith(".dist-info") and n.split("-", 1)[0] == name]
        except OSError:
            continue
        for info in sorted(infos):
            try:
                with open(os.path.join(entry or ".", info, "METADATA"), encoding="utf-8") as f:
                    for line in f:
                        if line.startswith("Version:"):
                            return line.split(":", 1)[1].strip()
                        if not line.strip():
                            break  # the headers end at the first blank line
            except OSError:
                continue
    return None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # Usage errors exit with 2, as argparse does, but say how to get help.
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


def _named_command(argv: list[str] | None) -> str | None:
    """The module of the subcommand `argv` names (its first word that is not an option), if it is one."""
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    if not words:
        return None
    module = f"tritonlens.server.commands.{words[0]}"
    return module if module in COMMAND_MODULES else None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; given the command line, only of the subcommand it names (when it names
    one): each command module imports what its command runs, and `serve` must not pay for `optimize`'s engine
    (about 0.3 s of CPU before the language server could answer `initialize`)."""
    parser = _Parser(
        prog="tritonlens", description="See why a Triton kernel is slow, with the compiler's evidence."
    )
    parser.add_argument("--version", action="version", version=f"tritonlens {package_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    named = _named_command(argv)
    for name in (named,) if named else COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
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
