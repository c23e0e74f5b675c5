"""A compile whose package import fails only because an earlier job of the same worker already imported it (state
that outlives the module cache, like torch's operator registry: "Tried to register an operator ... multiple
times", seen on pytorch/ao in the held-out precision run) is retried in a fresh worker process."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAIN = ROOT / "ascend_runner" / "worker" / "main.py"

# A package that refuses a second import in one process (builtins survive the worker's module-cache cleanup).
INIT = """
import builtins
if getattr(builtins, "_onceonly_registered", False):
    raise RuntimeError("Tried to register an operator (onceonly::op) multiple times")
builtins._onceonly_registered = True
SCALE = 2
"""
KERNEL = """
import triton
import triton.language as tl
from onceonly import SCALE

FACTOR = tl.constexpr(SCALE)


@triton.jit
def {name}(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)
"""


def _job(job_id: int, path: Path, name: str) -> dict:
    return {"schema": 1, "id": job_id, "kind": "compile", "backend": "cuda", "payload": {
        "source": path.read_text(), "path": str(path), "kernel": name,
        "signature": {"x_ptr": "*fp32", "n": "i32"}, "constants": {"BLOCK": 128},
        "divisibility": [], "target": "sm_90", "options": {}}}


def test_a_package_import_that_fails_only_on_reimport_is_retried_in_a_fresh_worker(
    tmp_path: Path, cuda_python: str
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "onceonly"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(INIT))
    first, second = pkg / "first.py", pkg / "second.py"
    first.write_text(KERNEL.format(name="first_kernel"))
    second.write_text(KERNEL.format(name="second_kernel"))
    jobs = "".join(json.dumps(j) + "\n" for j in (_job(1, first, "first_kernel"), _job(2, second, "second_kernel")))
    env = {**os.environ, "TRITONLENS_PARENT_PID": str(os.getpid())}
    proc = subprocess.run([cuda_python, "-u", str(MAIN)], input=jobs, capture_output=True, text=True, timeout=300,
                          env=env)
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert [r["id"] for r in replies] == [1, 2], proc.stderr[-2000:]
    assert replies[0]["ok"] and replies[0]["result"]["ok"], replies[0]
    result = replies[1]["result"]
    assert result["ok"] and not result["errors"], result["errors"]
    warnings = result["metadata"].get("module_warnings") or []
    assert not [w for w in warnings if "multiple times" in str(w.get("message"))], warnings
