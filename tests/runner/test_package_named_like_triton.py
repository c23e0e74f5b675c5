"""A library's own package named like an installed module (`lib/kernel/triton/` under namespace folders without
`__init__`, as a checkout of only the kernel modules has) must not shadow the real `triton` in the worker: seen on
a public library's `kernel/triton/` folder, where every candidate failed with "No module named 'triton.language'"."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAIN = ROOT / "ascend_runner" / "worker" / "main.py"
WORKER = ROOT / "ascend_runner" / "worker"

KERNEL = """
import triton
import triton.language as tl
from .helpers import SCALE


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)
"""


def _library(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "lib" / "kernel" / "triton"  # lib/ and lib/kernel/ have no __init__ (namespace folders)
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("import triton.language as tl\n\nSCALE = tl.constexpr(2.0)\n")
    path = pkg / "scale.py"
    path.write_text(KERNEL)
    return path


def test_the_import_roots_of_such_a_package_do_not_hide_the_installed_triton(tmp_path: Path, cuda_python: str) -> None:
    # a fresh process that has not imported triton yet (the gate's reference and candidate processes): the roots
    # the worker puts first on sys.path must leave `import triton.language` to the installed Triton
    path = _library(tmp_path)
    probe = (f"import sys; sys.path.insert(0, {str(WORKER)!r}); from source_module import import_roots, package_of; "
             f"sys.path[0:0] = import_roots({str(path)!r}); import triton.language; "
             f"print(package_of({str(path)!r})[1])")
    proc = subprocess.run([cuda_python, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert proc.stdout.split()[-1] == "kernel.triton"  # the namespace folder above is part of its name


def test_a_package_named_triton_under_namespace_folders_compiles(tmp_path: Path, cuda_python: str) -> None:
    path = _library(tmp_path)
    job = {"schema": 1, "id": 1, "kind": "compile", "backend": "cuda", "payload": {
        "source": path.read_text(), "path": str(path), "kernel": "scale_kernel",
        "signature": {"x_ptr": "*fp32", "n": "i32"}, "constants": {"BLOCK": 128},
        "divisibility": [], "target": "sm_90", "options": {}}}
    env = {**os.environ, "TRITONLENS_PARENT_PID": str(os.getpid())}
    proc = subprocess.run([cuda_python, "-u", str(MAIN)], input=json.dumps(job) + "\n", capture_output=True,
                          text=True, timeout=300, env=env)
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert replies and replies[0]["ok"], proc.stderr[-2000:]
    result = replies[0]["result"]
    assert result["ok"] and not result["errors"], result["errors"]
