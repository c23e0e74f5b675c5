"""Where a report's numbers came from: the runner (local environments, a remote URL, a Ray address and the nodes
its jobs ran on), the device, its driver and library versions, and the tritonlens build (version, git commit).

`Recorder(runner)` stands in for a runner and keeps what its job results say about where they ran (`device`,
`ray`); `provenance(...)` is the JSON block every optimize, bench and profile report carries, `markdown_lines`
its Markdown section. Nothing is guessed: what no result reported is "unknown".
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the checkout holding server/, analysis/, ascend_runner/


def tritonlens_build() -> dict[str, Any]:
    from ..cli import package_version

    out: dict[str, Any] = {"version": package_version(), "commit": "unknown"}
    try:
        commit = subprocess.run(
            ["git", "-C", str(PACKAGE_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if commit.returncode == 0 and commit.stdout.strip():
            out["commit"] = commit.stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(PACKAGE_ROOT), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
                timeout=5,
            )
            out["dirty"] = bool(dirty.stdout.strip()) if dirty.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):  # no git here: an installed package names its version only
        pass
    return out


def describe_runner(runner: Any, spec: str | None = None) -> dict[str, Any]:
    """What kind of runner it is and its address: local environments (their interpreters), a remote URL, or a
    Ray address."""
    inner = getattr(runner, "runner", runner)
    kind = type(inner).__name__
    out: dict[str, Any] = {"spec": spec or "local", "class": kind}
    if hasattr(inner, "url"):
        out.update(kind="remote", url=str(inner.url))
    elif hasattr(inner, "address"):
        out.update(kind="ray", address=str(inner.address))
    else:
        out["kind"] = "local"
        envs: dict[str, str] = {}
        for name in ("cuda", "ascend"):
            try:
                env = inner.environment(name)
            except Exception:  # absent environment: not part of where this ran
                continue
            envs[name] = str(getattr(env, "python", env))
        if envs:
            out["environments"] = envs
    return out


class Recorder:
    """A runner that remembers the `device` and Ray placement of every job result passing through it."""

    _WATCHED = ("submit", "run", "profile", "verify", "compile")

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self._lock = threading.Lock()
        self.devices: list[dict[str, Any]] = []
        self.nodes: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.runner, name)
        if name not in self._WATCHED or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            self.note(result)
            return result

        return call

    def note(self, result: Any, depth: int = 0) -> None:
        """Every `device` and `ray` block of a job result, at any depth a reply nests them (result, timing)."""
        if not isinstance(result, dict) or depth > 4:
            return
        device, ray = result.get("device"), result.get("ray")
        with self._lock:
            if isinstance(device, dict) and device.get("name") and device not in self.devices:
                self.devices.append(device)
            if isinstance(ray, dict):
                node = {k: ray[k] for k in ("node_id", "host", "gpus") if k in ray}
                if node and node not in self.nodes:
                    self.nodes.append(node)
        for value in result.values():
            if isinstance(value, dict) and value is not device and value is not ray:
                self.note(value, depth + 1)


def provenance(recorder: Recorder | None, runner: Any, spec: str | None, backend: str | None) -> dict[str, Any]:
    devices = list(recorder.devices) if recorder is not None else []
    out: dict[str, Any] = {
        "runner": describe_runner(runner, spec),
        "backend": backend or "unknown",
        "devices": [{k: v for k, v in d.items() if k != "versions"} for d in devices] or "unknown",
        "versions": next((d["versions"] for d in devices if isinstance(d.get("versions"), dict)), "unknown"),
        "tritonlens": tritonlens_build(),
    }
    if recorder is not None and recorder.nodes:
        out["runner"]["nodes"] = list(recorder.nodes)
    return out


def markdown_lines(prov: dict[str, Any]) -> list[str]:
    """The report's "Where it ran" section."""
    r = prov["runner"]
    where = {"remote": r.get("url"), "ray": r.get("address")}.get(str(r.get("kind")))
    if where is None:
        envs = r.get("environments") or {}
        where = ", ".join(f"{k}: {v}" for k, v in envs.items()) or "no environment answered"
    lines = ["## Where it ran", "", f"- runner: {r.get('kind')} ({where})"]
    for node in r.get("nodes") or []:
        lines.append(f"- Ray node {node.get('node_id', '?')} on {node.get('host', '?')}, GPUs {node.get('gpus', [])}")
    devices = prov["devices"]
    names = ", ".join(str(d.get("name", "?")) for d in devices) if isinstance(devices, list) else "unknown"
    lines.append(f"- backend {prov['backend']}, device: {names}")
    versions = prov["versions"]
    if isinstance(versions, dict) and versions.get("executable"):
        lines.append(f"- worker interpreter: {versions['executable']}")
    if isinstance(versions, dict):
        lines.append("- versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if k != "executable"))
    else:
        lines.append("- versions: unknown (no job reported them)")
    build = prov["tritonlens"]
    dirty = " (uncommitted changes)" if build.get("dirty") else ""
    lines.append(f"- tritonlens {build['version']}, commit {build['commit']}{dirty}")
    return lines + [""]
