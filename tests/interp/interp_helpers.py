"""Runs kbcheck.py under the upstream-Triton runner environment's Python.

One checker process serves the whole test session (torch and triton are imported once); each call sends it a
list of files and waits, with a deadline, for its answer.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".envs" / "cuda" / "bin" / "python"
CHECKER = Path(__file__).resolve().parent / "kbcheck.py"
_SERVER: subprocess.Popen | None = None


def interpreter_available() -> bool:
    return PYTHON.exists()


def _server() -> subprocess.Popen:
    global _SERVER
    if _SERVER is None or _SERVER.poll() is not None:
        _SERVER = subprocess.Popen(
            [str(PYTHON), str(CHECKER), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, TRITON_INTERPRET="1"),
        )
        atexit.register(_stop)
    return _SERVER


def _stop() -> None:
    global _SERVER
    if _SERVER is not None and _SERVER.poll() is None:
        _SERVER.stdin.close()
        try:
            _SERVER.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _SERVER.kill()
    _SERVER = None


def check_files(paths: list[Path], timeout: float = 600) -> list[dict]:
    """One (file, shape) record per TEST_SHAPE of every file: ok, max_error or error."""
    if not interpreter_available():
        pytest.skip(f"no runner environment at {PYTHON} (run scripts/bootstrap --all)")
    proc = _server()
    proc.stdin.write((json.dumps([str(p) for p in paths]) + "\n").encode())
    proc.stdin.flush()
    records: list[dict] = []
    pending = b""
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    # raw reads into our own buffer: a buffered readline could hold complete lines that select() cannot see
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                record = json.loads(line)
                if record.get("done"):
                    return records
                records.append(record)
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                proc.kill()
                raise AssertionError(f"the checker did not answer within {timeout:.0f}s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise AssertionError(f"the checker exited ({proc.poll()})")
            pending += chunk
