"""A worker that ran an interpret-backend job (Triton imported with TRITON_INTERPRET=1, its library kernels such as
tl.sum interpreted) still compiles for a GPU target: the compile runs in a fresh worker process. Before, the
compile failed in the front end for reasons that were not the kernel's, and the failure was cached."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

from kernel_requests import request

ROOT = Path(__file__).resolve().parents[2]
MAIN = ROOT / "ascend_runner" / "worker" / "main.py"
KB_ADD = ROOT / "tests" / "fixtures" / "run" / "kb_add.py"


def test_compile_after_an_interpreted_run_in_the_same_worker(cuda_python: str) -> None:
    run = {"schema": 1, "id": 1, "kind": "run", "backend": "interpret",
           "payload": {"harness": {"mode": "kernelbench", "path": str(KB_ADD)}}}
    compile_job = {"schema": 1, "id": 2, "kind": "compile", "backend": "cuda",
                   "payload": dataclasses.asdict(request("softmax"))}  # tl.max / tl.sum: library kernels
    jobs = "".join(json.dumps(j) + "\n" for j in (run, compile_job))
    env = {**os.environ, "TRITONLENS_PARENT_PID": str(os.getpid())}  # as the pool starts its workers
    proc = subprocess.run([cuda_python, "-u", str(MAIN)], input=jobs, capture_output=True, text=True, timeout=300,
                          env=env)
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert [r["id"] for r in replies] == [1, 2], proc.stderr[-2000:]
    assert replies[0]["ok"] and replies[0]["result"]["ok"], replies[0]
    assert replies[1]["ok"], replies[1]
    result = replies[1]["result"]
    assert result["ok"] and not result["errors"], result["errors"]
