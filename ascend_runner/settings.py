"""The `tritonlens.runners` settings, one schema for the language server, the CLI and the VS Code client.

    {"local":  {"cuda": PYTHON, "ascend": PYTHON},             interpreters; absent: found automatically
     "remote": {"url": URL, "tokenEnv": VAR | "tokenFile": PATH}}   a runner service (tokens never in settings)

Older shapes are read too: {"cuda": {"python": P}, ...} for local interpreters and {"remote": {NAME: {...}}} for
named remote runners (the first one is used for jobs). Pure conversion, no I/O: the result feeds
`factory.get_runner`, `client.LocalRunner` and `remote_client.RemoteRunner.from_config`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LOCAL_ENVIRONMENTS = ("cuda", "ascend")
REMOTE_KEYS = ("url", "tokenEnv", "tokenFile")


@dataclass(frozen=True)
class RemoteSettings:
    name: str
    url: str
    token_env: str | None = None
    token_file: str | None = None

    def client_config(self) -> dict[str, Any]:
        """What RemoteRunner.from_config / get_runner take."""
        out: dict[str, Any] = {"url": self.url}
        if self.token_env:
            out["tokenEnv"] = self.token_env
        if self.token_file:
            out["tokenFile"] = self.token_file
        return out


@dataclass(frozen=True)
class RunnerSettings:
    local: dict[str, str] = field(default_factory=dict)  # environment -> interpreter path
    remotes: tuple[RemoteSettings, ...] = ()

    @property
    def remote(self) -> RemoteSettings | None:
        return self.remotes[0] if self.remotes else None

    def local_config(self, **extra: Any) -> dict[str, Any]:
        """LocalRunner's config: {"cuda": {"python": P}, ...} plus any extra keys (cache, workers...)."""
        config: dict[str, Any] = {env: {"python": python} for env, python in self.local.items()}
        config.update(extra)
        return config

    def runner_config(self) -> dict[str, Any]:
        """get_runner's config: the remote runner when one is set (jobs go to the accelerator), else local."""
        remote = self.remote
        return remote.client_config() if remote is not None else self.local_config()


def _resolve(path: str, base_dir: str | None) -> str:
    expanded = os.path.expanduser(path)
    if base_dir and not os.path.isabs(expanded):
        return os.path.normpath(os.path.join(base_dir, expanded))
    return expanded


def _remote(name: str, raw: Any, problems: list[str]) -> RemoteSettings | None:
    where = "runners.remote" if name == "remote" else f"runners.remote.{name}"
    if not isinstance(raw, Mapping):
        problems.append(f"{where} must be an object with url and tokenEnv or tokenFile")
        return None
    if "token" in raw:
        problems.append(
            f"{where}.token is ignored: put the token in an environment variable (tokenEnv) or a file "
            "(tokenFile), never in settings"
        )
    url = raw.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        problems.append(f"{where}.url must be an http:// or https:// URL, got {url!r}")
        return None
    token_env, token_file = raw.get("tokenEnv"), raw.get("tokenFile")
    if token_env is not None and (not isinstance(token_env, str) or not token_env):
        problems.append(f"{where}.tokenEnv must be the name of an environment variable")
        token_env = None
    if token_file is not None and (not isinstance(token_file, str) or not token_file):
        problems.append(f"{where}.tokenFile must be a file path")
        token_file = None
    if not token_env and not token_file:
        problems.append(f"{where} needs tokenEnv or tokenFile (where the runner's token is kept)")
        return None
    return RemoteSettings(name, url.rstrip("/"), token_env, token_file)


def parse_runner_settings(raw: Any, base_dir: str | None = None) -> tuple[RunnerSettings, list[str]]:
    """Settings from a `runners` mapping; unusable parts are left out with one message each.

    `base_dir`: relative interpreter paths and token files are taken relative to it (the workspace folder)."""
    problems: list[str] = []
    if raw is None:
        return RunnerSettings(), problems
    if not isinstance(raw, Mapping):
        return RunnerSettings(), [f"runners must be an object, got {type(raw).__name__}"]
    local: dict[str, str] = {}
    section = raw.get("local")
    if section is not None and not isinstance(section, Mapping):
        problems.append("runners.local must map environment names (cuda, ascend) to interpreter paths")
        section = None
    for env, value in (section or {}).items():
        if env not in LOCAL_ENVIRONMENTS:
            problems.append(f"runners.local.{env}: unknown environment (use {', '.join(LOCAL_ENVIRONMENTS)})")
        elif not isinstance(value, str) or not value:
            problems.append(f"runners.local.{env} must be the path of a Python interpreter")
        else:
            local[env] = _resolve(value, base_dir)
    for env in LOCAL_ENVIRONMENTS:  # older shape: {"cuda": {"python": P}}
        old = raw.get(env)
        if isinstance(old, Mapping) and isinstance(old.get("python"), str) and env not in local:
            local[env] = _resolve(old["python"], base_dir)
        elif old is not None and env not in local:
            problems.append(f'runners.{env} must be {{"python": PATH}} (or use runners.local.{env})')
    remotes: list[RemoteSettings] = []
    remote = raw.get("remote")
    if isinstance(remote, Mapping) and remote and not any(k in remote for k in (*REMOTE_KEYS, "token")):
        # Older shape: named remote runners.
        for name, entry in remote.items():
            parsed = _remote(str(name), entry, problems)
            if parsed is not None:
                remotes.append(parsed)
    elif remote is not None and remote != {}:
        parsed = _remote("remote", remote, problems)
        if parsed is not None:
            remotes.append(parsed)
    if base_dir:
        remotes = [
            RemoteSettings(
                r.name, r.url, r.token_env, _resolve(r.token_file, base_dir) if r.token_file else None
            )
            for r in remotes
        ]
    return RunnerSettings(local=local, remotes=tuple(remotes)), problems
