"""`tritonlens check PATH...`: findings as `path:line:col: CODE message` (or JSON); exit 1 if any remain."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tritonlens.analysis.findings import Finding
from tritonlens.analysis.settings import TARGET_PLATFORMS, Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("check", help="analyze files and print findings")
    p.add_argument("paths", nargs="+", metavar="PATH", help="Python files or folders (searched for *.py)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--select", default="", help="comma-separated rule codes or prefixes to report (default: all)")
    p.add_argument("--ignore", default="", help="comma-separated rule codes or prefixes to leave out")
    p.add_argument(
        "--target",
        default="both",
        help="platforms for triage: cuda, ascend or both; with --level ir a compile target such as sm_90 or ascend910b3",
    )
    p.add_argument(
        "--level", choices=("triage", "ir"), default="triage", help="ir also compiles every kernel (needs a runner env)"
    )
    p.set_defaults(func=run)


def collect_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.py") if not any(part.startswith(".") for part in p.parts)))
        elif path.exists():
            files.append(path)
        else:
            raise FileNotFoundError(raw)
    return files


def settings_from_args(args: argparse.Namespace, target: str) -> Settings:
    return Settings.from_mapping({"target": target, "select": args.select, "ignore": args.ignore})


def format_text(path: str, finding: Finding) -> str:
    return f"{path}:{finding.span.line}:{finding.span.col + 1}: {finding.code} {finding.message}"


def run(args: argparse.Namespace) -> int:
    try:
        files = collect_files(args.paths)
    except FileNotFoundError as exc:
        print(f"tritonlens check: no such file or folder: {exc}", file=sys.stderr)
        return 2
    if args.level == "ir":
        from tritonlens.server.commands.check_ir import analyze_files_ir

        return analyze_files_ir(args, files)
    target = args.target
    if target not in TARGET_PLATFORMS:
        print(f"tritonlens check: --target for triage is one of {', '.join(TARGET_PLATFORMS)}", file=sys.stderr)
        return 2
    try:
        settings = settings_from_args(args, target)
    except ValueError as exc:
        print(f"tritonlens check: {exc}", file=sys.stderr)
        return 2
    from tritonlens.analysis.triage import triage

    results: dict[str, list[Finding]] = {}
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            print(f"tritonlens check: cannot read {path}: {exc}", file=sys.stderr)
            return 2
        results[str(path)] = settings.apply(triage(source, str(path)).findings)
    return print_findings(args.format, results)


def print_findings(fmt: str, results: dict[str, list[Finding]]) -> int:
    """Print per-file findings in the chosen format; returns the exit status (1 if any finding)."""
    if fmt == "json":
        payload = [{"path": p, **f.to_dict()} for p, fs in results.items() for f in fs]
        print(json.dumps(payload, indent=2))
    else:
        for path, findings in results.items():
            for f in findings:
                print(format_text(path, f))
        total = sum(len(fs) for fs in results.values())
        print(f"{total} finding(s) in {len(results)} file(s)", file=sys.stderr)
    return 1 if any(results.values()) else 0
