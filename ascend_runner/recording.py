"""Run a user's command (a test, a script, a benchmark) in a runner environment with every Triton launch
recorded: the engine of `tritonlens record` and of the editor's "Record launches" command.

The command runs as the user would run it, in their folder, with the environment's Python first on PATH
(`python x.py` and `pytest ...` use it) and `worker/record_site` leading PYTHONPATH: its sitecustomize records
the launches of every Python process the command starts and writes them out at exit. The interpret backend
sets TRITON_INTERPRET=1 (the CPU runs the kernels where the code allows it). Stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .proctree import TAG_ENV, kill_tree

RECORD_SITE = Path(__file__).resolve().parent / "worker" / "record_site"
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
OUTPUT_TAIL = 6000


@dataclass
class RecordRun:
    argv: list[str]
    cwd: str
    backend: str
    returncode: int | None = None
    launches: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    output_tail: str = ""
    elapsed_s: float = 0.0
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.cancelled

    def to_dict(self) -> dict[str, Any]:
        return {
            "argv": self.argv,
            "cwd": self.cwd,
            "backend": self.backend,
            "returncode": self.returncode,
            "launches": self.launches,
            "errors": self.errors,
            "output_tail": self.output_tail,
            "elapsed_s": self.elapsed_s,
            "cancelled": self.cancelled,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RecordRun:
        known = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        return cls(**known)


def command_argv(argv: Sequence[str], python: str) -> list[str]:
    """`python ...` and `pytest ...` run under the environment's interpreter; anything else as given (it finds
    the environment's tools first on PATH)."""
    if not argv:
        raise ValueError(
            "no command to record: give one after `--`, e.g. `tritonlens record -- pytest tests/`"
        )
    head = os.path.basename(argv[0])
    if _PYTHON.match(head):
        return [python, *argv[1:]]
    if head in ("pytest", "py.test"):
        return [python, "-m", "pytest", *argv[1:]]
    return list(argv)


def record_env(python: str, backend: str, out_dir: str, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.path.dirname(os.path.abspath(python)) + os.pathsep + env.get("PATH", "")
    old = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = str(RECORD_SITE) + (os.pathsep + old if old else "")
    env["TRITONLENS_RECORD_DIR"] = out_dir
    env.pop("TRITON_INTERPRET", None)
    if backend == "interpret":
        env["TRITON_INTERPRET"] = "1"
    return env


def record_command(
    argv: Sequence[str],
    *,
    cwd: str,
    python: str,
    backend: str = "interpret",
    timeout_s: float = 600.0,
    on_output: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> RecordRun:
    """Run `argv` in `cwd` with the recorder installed; never raises for the command's own failures."""
    run = RecordRun(argv=list(argv), cwd=cwd, backend=backend)
    started = time.perf_counter()
    out_dir = tempfile.mkdtemp(prefix="tritonlens-record-")
    try:
        try:
            full = command_argv(argv, python)
        except ValueError as exc:
            run.errors.append(str(exc))
            return run
        if full[0] == argv[0] and shutil.which(full[0]) is None and not os.path.exists(full[0]):
            run.errors.append(f"cannot run {argv[0]!r}: not found on PATH")
            return run
        # Its own session and a tag every child inherits: at the time limit (or when it exits) the whole tree
        # is killed, also children that detached and would keep the output pipe open (see proctree).
        tag = uuid.uuid4().hex
        try:
            proc = subprocess.Popen(
                full,
                cwd=cwd,
                env={**record_env(python, backend, out_dir), TAG_ENV: tag},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            )
        except OSError as exc:
            run.errors.append(f"cannot run {' '.join(argv)}: {exc}")
            return run
        tail: list[str] = []
        size = 0
        deadline = time.monotonic() + timeout_s
        watchdog = threading.Thread(target=_watch, args=(proc, tag, deadline, cancel, run), daemon=True)
        watchdog.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            if on_output is not None:
                on_output(line)
            tail.append(line)
            size += len(line)
            while size > OUTPUT_TAIL and len(tail) > 1:
                size -= len(tail.pop(0))
        run.returncode = proc.wait()
        run.output_tail = "".join(tail)
        _collect(out_dir, run)
        if run.cancelled:
            run.errors.append("cancelled")
        elif run.returncode != 0:
            run.errors.append(f"the command exited with status {run.returncode}")
        return run
    finally:
        run.elapsed_s = round(time.perf_counter() - started, 3)
        shutil.rmtree(out_dir, ignore_errors=True)


def _watch(
    proc: subprocess.Popen, tag: str, deadline: float, cancel: threading.Event | None, run: RecordRun
) -> None:
    while proc.poll() is None:
        if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
            run.cancelled = cancel is not None and cancel.is_set()
            if not run.cancelled:
                run.errors.append("the command ran past its time limit and was stopped")
            kill_tree(proc.pid, tag)
            return
        time.sleep(0.2)
    kill_tree(proc.pid, tag, reaped=True)  # what it left running would hold the output pipe open


def _collect(out_dir: str, run: RecordRun) -> None:
    files = sorted(Path(out_dir).glob("launches-*.json"))
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            run.errors.append(f"unreadable recording {path.name}: {exc}")
            continue
        run.launches.extend(data.get("launches") or [])
        run.errors.extend(dict.fromkeys(data.get("errors") or []))
        if data.get("dropped"):
            run.errors.append(f"{data['dropped']} launch(es) past the recording limit were not recorded")
    if not files:
        run.errors.append(
            "no Python process of the command reported back (did it run Python from the runner environment?)"
        )


def run_record_job(
    payload: dict[str, Any], backend: str, python: str, cancel: threading.Event | None, timeout_s: float
) -> dict[str, Any]:
    """A remote `record` job: the workspace copy is in payload["workdir"] (the service wrote the uploaded
    files there); run the command in its `cwd` and return the run with launch files relative to the copy."""
    workdir = Path(str(payload.get("workdir") or "")).resolve()
    if not workdir.is_dir():
        raise ValueError("a record job needs the workspace's files (payload.files)")
    cwd = (workdir / str(payload.get("cwd") or ".")).resolve()
    if cwd != workdir and workdir not in cwd.parents:
        raise ValueError("payload.cwd must stay inside the workspace")
    argv = payload.get("argv")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ValueError("payload.argv must be a list of strings")
    run = record_command(
        argv, cwd=str(cwd), python=python, backend=backend, timeout_s=timeout_s, cancel=cancel
    )
    kept: list[dict[str, Any]] = []
    for launch in run.launches:
        file = Path(str(launch.get("file") or "")).resolve()
        if workdir in file.parents:
            kept.append({**launch, "file": file.relative_to(workdir).as_posix()})
    run.launches = kept  # launches of the runner's own libraries mean nothing on the client
    run.cwd = str(payload.get("cwd") or ".")
    return run.to_dict()
