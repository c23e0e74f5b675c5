"""`tritonlens runners`: the configured runners (local environments, remote services) and whether each answers."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("runners", help="list configured runners and whether each is reachable")
    p.add_argument(
        "--config", help='JSON file: {"cuda": {"python": P}, "ascend": {...}, "remote": {NAME: {...}}}'
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=run)


def load_runner_config(path: str | None, start: Path | None = None) -> dict[str, Any]:
    """From --config, else [tool.tritonlens.runners] of the nearest pyproject.toml, else empty (defaults)."""
    if path:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, OSError):
                return {}
            return dict(table.get("tool", {}).get("tritonlens", {}).get("runners", {}))
    return {}


def survey(config: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per runner: name, kind, reachable, detail."""
    from tritonlens.ascend_runner.client import LocalRunner
    from tritonlens.ascend_runner.remote_client import RemoteRunner, RemoteRunnerError

    rows: list[dict[str, Any]] = []
    local = LocalRunner({k: v for k, v in config.items() if k != "remote"})
    try:
        for env, info in local.health().get("backends", {}).items():
            detail = info.get("message") or f"{info.get('python')} ({info.get('compiler', '?')})"
            rows.append(
                {
                    "name": f"local:{env}",
                    "kind": "local",
                    "reachable": bool(info.get("available")),
                    "detail": detail,
                }
            )
    finally:
        local.close()
    for name, remote in (config.get("remote") or {}).items():
        try:
            health = RemoteRunner.from_config(remote).health()
            backends = (
                ", ".join(
                    k for k, v in health.get("runner", {}).get("backends", {}).items() if v.get("available")
                )
                or "no backend available"
            )
            rows.append(
                {
                    "name": f"remote:{name}",
                    "kind": "remote",
                    "reachable": True,
                    "detail": f"{remote.get('url')} ({backends})",
                }
            )
        except (RemoteRunnerError, KeyError, ValueError) as exc:
            rows.append({"name": f"remote:{name}", "kind": "remote", "reachable": False, "detail": str(exc)})
    return rows


def run(args: argparse.Namespace) -> int:
    try:
        config = load_runner_config(args.config)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"tritonlens runners: cannot read --config: {exc}", file=sys.stderr)
        return 2
    rows = survey(config)
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            state = "ok" if row["reachable"] else "unavailable"
            print(f"{row['name']:<20} {state:<12} {row['detail']}")
    return 0 if any(r["reachable"] for r in rows) else 1
