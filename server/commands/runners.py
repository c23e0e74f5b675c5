"""`tritonlens runners`: the configured runners (local environments, remote services) and whether each answers.

The configuration has the `tritonlens.runners` shape of the editor settings (see ascend_runner/settings.py):
from --config (JSON), else `[tool.tritonlens.runners]` of the nearest pyproject.toml. `survey` is shared with the
language server, which reports the same rows to the editor as `tritonlens/status`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from ...ascend_runner.settings import RunnerSettings, parse_runner_settings

STATUS_TIMEOUT_S = 3.0  # a remote runner that does not answer its health check this fast counts as down


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


def _local_rows(settings: RunnerSettings, probe: bool) -> list[dict[str, Any]]:
    """Local environments; with `probe`, a worker is started in each to prove it works (slow: the CLI only)."""
    from ...ascend_runner.client import LocalRunner
    from ...ascend_runner.environments import available_environments

    rows: list[dict[str, Any]] = []
    if not probe:
        for env, found in available_environments(settings.local_config()).items():
            if isinstance(found, str):
                rows.append({"name": f"local {env}", "kind": "local", "reachable": False, "detail": found})
            else:
                detail = f"{found.python} ({found.compiler_version()})"
                rows.append({"name": f"local {env}", "kind": "local", "reachable": True, "detail": detail})
        return rows
    local = LocalRunner(settings.local_config(cache=False))
    try:
        for env, info in local.health().get("backends", {}).items():
            detail = info.get("message") or f"{info.get('python')} ({info.get('compiler', '?')})"
            rows.append(
                {
                    "name": f"local {env}",
                    "kind": "local",
                    "reachable": bool(info.get("available")),
                    "detail": detail,
                }
            )
    finally:
        local.close()
    return rows


def _remote_row(remote: Any) -> dict[str, Any]:
    from ...ascend_runner.remote_client import RemoteRunner, RemoteRunnerError, resolve_token

    row: dict[str, Any] = {"name": f"remote {remote.url}", "kind": "remote", "reachable": False}
    try:
        runner = RemoteRunner(
            remote.url, resolve_token(remote.client_config()), connect_timeout_s=STATUS_TIMEOUT_S
        )
        health = runner.health()
    except (RemoteRunnerError, ValueError) as exc:
        row["detail"] = str(exc)
        return row
    backends = health.get("runner", {}).get("backends", {}) if isinstance(health, dict) else {}
    up = [k for k, v in backends.items() if isinstance(v, dict) and v.get("available")]
    row.update(reachable=True, detail=", ".join(up) or "reachable, but no backend available")
    return row


def survey(settings: RunnerSettings, *, probe_local: bool = True) -> list[dict[str, Any]]:
    """One row per runner: name, kind, reachable, detail (the shape of the `tritonlens/status` notification)."""
    rows = _local_rows(settings, probe_local)
    rows += [_remote_row(remote) for remote in settings.remotes]
    return rows


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
