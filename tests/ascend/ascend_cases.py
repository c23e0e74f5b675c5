"""Helpers for the Ascend tests: committed triton-ascend fixtures and the live worker (ascend_env)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "ascend"
KERNELS = ROOT / "tests" / "ascend" / "kernels"
WORKER = ROOT / "ascend_runner" / "worker" / "compile_ascend.py"
ASCEND_PYTHON = ROOT / ".envs" / "ascend" / "bin" / "python"


def fixture_case(name: str) -> dict[str, Any]:
    """A committed compile: stages, metadata, resources, request, and the kernel's source text."""
    meta = json.loads((FIXTURES / f"{name}.json").read_text())
    stages = {}
    for stage in ("ttir", "ttadapter"):
        path = FIXTURES / f"{name}.{stage}"
        if path.exists():
            stages[stage] = path.read_text()
    req = meta["request"]
    meta["stages"] = stages
    meta["source"] = (ROOT / req["path"]).read_text()
    return meta


def run_worker(python: Path, req: dict[str, Any]) -> dict[str, Any]:
    """Run compile_ascend.py as the runner does (its own interpreter, JSON on stdin/stdout)."""
    proc = subprocess.run(
        [str(python), str(WORKER)],
        input=json.dumps(req),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)
