"""Which runners the settings name and whether each answers: one row per runner (name, kind, reachable, detail),
for `tritonlens runners` and the language server's `tritonlens/status` notification."""

from __future__ import annotations

from typing import Any

from ...ascend_runner.client import RunnerSettings

STATUS_TIMEOUT_S = 3.0  # a remote runner that does not answer its health check this fast counts as down


def _local_rows(settings: RunnerSettings, probe: bool) -> list[dict[str, Any]]:
    """Local environments; with `probe`, a worker is started in each to prove it works (slow: the CLI only)."""
    from ...ascend_runner.client import LocalRunner, available_environments

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
    from ...ascend_runner.client import RemoteRunner, RemoteRunnerError, resolve_token

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
