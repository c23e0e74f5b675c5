"""`tritonlens check PATH...`: findings as `path:line:col: CODE message` (or JSON).

Info and hint findings end with ` [info]` / ` [hint]` so a reader (or a grep) tells them from warnings and
errors while editors' `file:line:col: message` matchers still parse the line. `--min-severity` hides findings
below it; the exit status is a linter's: 0 when no shown finding is at or above `--fail-on` (default warning),
1 when one is, 2 on a usage or tool error (a missing file, a bad option, an unreadable file, no runner).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...analysis.core.findings import Finding, Severity
from ...analysis.core.settings import Settings
from ...analysis.core.targets import PLATFORM_SETTINGS
from ..source_files import read_python_source
from .findings_output import check_codes, print_findings

SEVERITY_CHOICES = ("error", "warning", "info", "hint")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("check", help="analyze files and print findings")
    p.add_argument("paths", nargs="+", metavar="PATH", help="Python files or folders (searched for *.py)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--select", default="", help="comma-separated rule codes or prefixes to report (default: all)"
    )
    p.add_argument("--ignore", default="", help="comma-separated rule codes or prefixes to leave out")
    p.add_argument(
        "--target",
        default="auto",
        help=(
            "platforms for triage: auto (decided per file from its imports, devices and folders), cuda, ascend "
            "or both; with --level ir a compile target such as sm_90 or ascend910b3, or auto (per file)"
        ),
    )
    p.add_argument(
        "--level",
        choices=("triage", "ir"),
        default="triage",
        help="ir also compiles every kernel (needs a runner env)",
    )
    p.add_argument(
        "--min-severity",
        choices=SEVERITY_CHOICES,
        default="hint",
        help="report only findings at or above this severity (default: hint, all)",
    )
    p.add_argument(
        "--fail-on",
        choices=SEVERITY_CHOICES,
        default="warning",
        help="exit 1 when a reported finding is at or above this severity (default: warning); 0 otherwise",
    )
    p.set_defaults(func=run)


def collect_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*.py") if not any(part.startswith(".") for part in p.parts))
            )
        elif path.exists():
            if path.suffix not in PYTHON_SUFFIXES:
                raise NotPythonError(raw)
            files.append(path)
        else:
            raise FileNotFoundError(raw)
    return files


PYTHON_SUFFIXES = (".py", ".pyi")


class NotPythonError(ValueError):
    """A file named on the command line that is not Python source: a usage error, not a finding."""


def settings_from_args(args: argparse.Namespace, target: str) -> Settings:
    settings = Settings.from_mapping({"target": target, "select": args.select, "ignore": args.ignore})
    check_codes(settings)
    return settings


def run(args: argparse.Namespace) -> int:
    try:
        files = collect_files(args.paths)
    except FileNotFoundError as exc:
        print(f"tritonlens check: no such file or folder: {exc}", file=sys.stderr)
        return 2
    except NotPythonError as exc:
        print(f"tritonlens check: {exc} is not a Python file (.py)", file=sys.stderr)
        return 2
    if args.level == "ir":
        from .check_ir import analyze_files_ir

        return analyze_files_ir(args, files)
    target = args.target
    if target not in PLATFORM_SETTINGS:
        print(
            f"tritonlens check: --target for triage is one of {', '.join(PLATFORM_SETTINGS)}", file=sys.stderr
        )
        return 2
    try:
        settings = settings_from_args(args, target)
    except ValueError as exc:
        print(f"tritonlens check: {exc}", file=sys.stderr)
        return 2
    from ...analysis.ignores import Ignores
    from ...analysis.triage import triage
    from ..engine.record.launch_store import project_relative
    from ..ignores.project import project_ignores

    results: dict[str, list[Finding]] = {}
    unreadable = False
    for path in files:
        try:
            source = read_python_source(path)
        except (OSError, UnicodeDecodeError) as exc:
            # One undecodable file in a folder must not hide the findings of the others: say so, go on, exit 2.
            print(f"tritonlens check: cannot read {path}: {exc}", file=sys.stderr)
            unreadable = True
            continue
        try:
            ignores = Ignores.of(source, project_ignores(str(path)))
        except ValueError as exc:
            print(f"tritonlens check: pyproject.toml: {exc}", file=sys.stderr)
            return 2
        file_settings = settings.for_file(source, project_relative(str(path)))
        results[str(path)] = file_settings.apply(ignores.apply(triage(source, str(path)).findings))
    status = print_findings(args.format, results, Severity.parse(args.min_severity), Severity.parse(args.fail_on))
    return 2 if unreadable else status
