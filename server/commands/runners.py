"""`tritonlens runners`: the configured runners (local environments, remote services) and whether each answers.

The configuration has the `tritonlens.runners` shape of the editor settings (see ascend_runner/settings.py):
from --config (JSON), else `[tool.tritonlens.runners]` of the nearest pyproject.toml. `survey` (server/engine/runner_survey.py) is shared with the
language server, which reports the same rows to the editor as `tritonlens/status`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from ...ascend_runner.client import parse_runner_settings
from ..engine.runner_survey import survey


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("runners", help="list configured runners and whether each is reachable")
    p.add_argument(
        "--config",
        help='JSON file: {"local": {"cuda": PYTHON, "ascend": PYTHON}, "remote": {"url": URL, "tokenEnv": VAR}}',
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def load_runner_config(path: str | None, start: Path | None = None) -> tuple[dict[str, Any], Path | None]:
    """The raw runners mapping and the folder relative paths in it start from (--config's, or pyproject's)."""
    if path:
        return json.loads(Path(path).read_text(encoding="utf-8")), Path(path).resolve().parent
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, OSError):
                return {}, folder
            return dict(table.get("tool", {}).get("tritonlens", {}).get("runners", {})), folder
    return {}, None


def run(args: argparse.Namespace) -> int:
    try:
        raw, base = load_runner_config(args.config)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"tritonlens runners: cannot read --config: {exc}", file=sys.stderr)
        return 2
    settings, problems = parse_runner_settings(raw, str(base) if base else None)
    for problem in problems:
        print(f"tritonlens runners: {problem}", file=sys.stderr)
    rows = survey(settings)
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            state = "ok" if row["reachable"] else "unavailable"
            print(f"{row['name']:<28} {state:<12} {row['detail']}")
    return 0 if any(r["reachable"] for r in rows) else 1
