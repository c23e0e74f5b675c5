"""Where `tritonlens record` runs the command: the local runner environment, or a remote runner (which gets
the workspace's Python files, runs the command in a sandbox copy and sends the launches back). Shared by the
CLI (`commands/record.py`) and the editor's Record command (`record_lsp.py`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ....ascend_runner.client import (
    EnvironmentUnavailable,
    RecordRun,
    environment_for_backend,
    find_environment,
    record_command,
)
from ...source_files import read_python_source

MAX_UPLOAD_BYTES = 6 * 1024 * 1024
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "build", "dist", "venv", "env", "site-packages"})


@dataclass
class RecordOutcome:
    run: RecordRun
    setup_error: str | None = None  # nothing ran: no environment, unreachable runner, bad arguments


def default_backend(which: Callable[[str], str | None]) -> str:
    if which("nvidia-smi"):
        return "cuda"
    if which("npu-smi"):
        return "npu"
    return "interpret"


def record_local(
    argv: list[str],
    cwd: Path,
    backend: str,
    timeout_s: float,
    *,
    on_output: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    config: dict | None = None,
) -> RecordOutcome:
    empty = RecordRun(argv=argv, cwd=str(cwd), backend=backend)
    try:
        env = find_environment(environment_for_backend(backend), config)
    except (EnvironmentUnavailable, ValueError) as exc:
        return RecordOutcome(empty, f"no runner environment for backend {backend}: {exc}")
    run = record_command(
        argv,
        cwd=str(cwd),
        python=env.python,
        backend=backend,
        timeout_s=timeout_s,
        on_output=on_output,
        cancel=cancel,
    )
    return RecordOutcome(run)


def workspace_files(root: Path, limit: int = MAX_UPLOAD_BYTES) -> dict[str, str]:
    """The workspace's Python and config files, relative to `root`, for a remote run (hidden folders, virtual
    environments and build outputs left out); raises ValueError past `limit` bytes."""
    files: dict[str, str] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if not name.endswith((".py", ".toml", ".cfg", ".ini", ".json")) or name.startswith("."):
                continue
            path = Path(dirpath) / name
            try:
                text = read_python_source(path)
            except (OSError, UnicodeDecodeError):
                continue
            total += len(text.encode("utf-8"))
            if total > limit:
                raise ValueError(
                    f"the workspace's files exceed {limit // (1024 * 1024)} MiB; record locally instead"
                )
            files[path.relative_to(root).as_posix()] = text
    return files


def record_remote(
    url: str,
    token_env: str,
    argv: list[str],
    root: Path,
    cwd: Path,
    backend: str,
    timeout_s: float,
    cancel: threading.Event | None = None,
) -> RecordOutcome:
    from ....ascend_runner.client import RemoteRunner, RemoteRunnerError, resolve_token

    empty = RecordRun(argv=argv, cwd=str(cwd), backend=backend)
    try:
        rel_cwd = cwd.resolve().relative_to(root).as_posix()
    except ValueError:
        return RecordOutcome(empty, f"the current folder {cwd} is outside the workspace {root}")
    try:
        runner = RemoteRunner(url, resolve_token({"url": url, "tokenEnv": token_env}))
        files = workspace_files(root)
        run = runner.record(argv, files, rel_cwd, backend, cancel=cancel, timeout_s=timeout_s)
    except (ValueError, RemoteRunnerError) as exc:
        return RecordOutcome(empty, str(exc))
    for launch in run.launches:  # files come back relative to the sandbox: make them this workspace's
        file = launch.get("file")
        if isinstance(file, str) and not os.path.isabs(file):
            launch["file"] = str(root / file)
    return RecordOutcome(run)
