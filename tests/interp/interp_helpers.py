"""Runs kbcheck.py under the upstream-Triton runner environment's Python (one subprocess for many files)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".envs" / "cuda" / "bin" / "python"
CHECKER = Path(__file__).resolve().parent / "kbcheck.py"


def interpreter_available() -> bool:
    return PYTHON.exists()


def check_files(paths: list[Path], timeout: float = 600) -> list[dict]:
    """One (file, shape) record per TEST_SHAPE of every file: ok, max_error or error."""
    if not interpreter_available():
        pytest.skip(f"no runner environment at {PYTHON} (run scripts/bootstrap --all)")
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run(
        [str(PYTHON), str(CHECKER)],
        input=json.dumps([str(p) for p in paths]),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if proc.returncode != 0:
        raise AssertionError(f"checker failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
