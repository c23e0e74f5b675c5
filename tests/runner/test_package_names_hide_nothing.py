"""A library's own package named like an installed module (`lib/kernel/triton/` under namespace folders without
`__init__`, as a checkout of only the kernel modules has) must not shadow the real `triton` in the worker: seen on
a public library's `kernel/triton/` folder, where every candidate failed with "No module named 'triton.language'";
nor may a sibling module named like an installed one (below)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _library(tmp_path: Path) -> Path:
    # lib/ and lib/kernel/ have no __init__ (namespace folders)
    _tree(tmp_path, {"pyproject.toml": "", "lib/kernel/triton/__init__.py": "",
                     "lib/kernel/triton/helpers.py": "import triton.language as tl\n\nSCALE = tl.constexpr(2.0)\n",
                     "lib/kernel/triton/scale.py": KERNEL})
    return tmp_path / "lib/kernel/triton/scale.py"


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


# A package's module beside a sibling named like an installed module (`pkg/torch.py` holding the package's torch
# wrappers, next to `pkg/kernels.py` doing `import torch`): Python imports the module through its package, so the
# real torch loads. The worker put the module's own folder first on sys.path, `import torch` found the sibling and
# the imports were reported as failed ("'torch' is not a package"), seen on a public repository's package.
# torch and torch.library as the package's modules import them, and a bare sibling import as scripts there do
SIBLING_KERNEL = "import torch\nimport torch.library\nimport helper_script_style\n" + KERNEL.replace(
    "from .helpers import SCALE", "from pkg.consts import SCALE")


def _package(tmp_path: Path) -> Path:
    _tree(tmp_path, {"pyproject.toml": "", "src/pkg/__init__.py": "",
                     "src/pkg/torch.py": "raise ImportError('the sibling torch.py was imported')\n",
                     "src/pkg/consts.py": "import triton.language as tl\n\nSCALE = tl.constexpr(2.0)\n",
                     "src/pkg/helper_script_style.py": "VALUE = 1\n", "src/pkg/kernels.py": SIBLING_KERNEL})
    return tmp_path / "src/pkg/kernels.py"


def test_the_installed_module_wins_over_the_sibling(tmp_path: Path, cuda_python: str) -> None:
    path = _package(tmp_path)
    probe = (f"import sys; sys.path.insert(0, {str(WORKER)!r}); "
             "from source_module import import_roots, sibling_fallback; "
             f"sys.path[0:0] = import_roots({str(path)!r}); sys.path.append(sibling_fallback({str(path)!r})); "
             "import torch, torch.library, helper_script_style, pkg.consts; print(torch.__file__)")
    proc = subprocess.run([cuda_python, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert str(tmp_path) not in proc.stdout


def test_check_reports_no_failed_import(tmp_path: Path, cuda_python: str) -> None:
    # the path a user's `check --level ir` takes (the worker loads the module, then compiles its kernel)
    path = _package(tmp_path)
    env = {**os.environ, "TRITONLENS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "tritonlens.server.cli", "check", "--level", "ir", "--target", "sm_90",
         "--format", "json", str(path)],
        capture_output=True, text=True, timeout=400, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    findings = json.loads(proc.stdout)
    assert not [f for f in findings if f["code"] == "TL004"], findings
