"""What a result was produced with: the worker's Python, Triton, PyTorch and NumPy, and per backend the CUDA
runtime and driver (NVIDIA) or torch_npu and CANN (Ascend). Best effort: a version that cannot be read is left
out, never guessed. Runs in the worker (it imports what the worker already imported)."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any


def _module_version(name: str) -> str | None:
    module = sys.modules.get(name)
    if module is None:
        try:
            module = __import__(name)
        except Exception:  # absent or broken: not reported
            return None
    value = getattr(module, "__version__", None)
    return str(value) if value else None


def _nvidia_driver() -> str | None:
    try:  # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..."
        first = Path("/proc/driver/nvidia/version").read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return None
    parts = [p for p in first.split() if p[:1].isdigit() and "." in p]
    return parts[0] if parts else None


def _cann() -> str | None:
    home = os.environ.get("ASCEND_TOOLKIT_HOME") or os.environ.get("ASCEND_HOME_PATH")
    for candidate in ([Path(home) / "version.cfg", Path(home) / "compiler" / "version.info"] if home else []):
        try:
            for line in candidate.read_text(encoding="utf-8").splitlines():
                if "version" in line.lower() and "=" in line:
                    return line.split("=", 1)[1].strip()
        except OSError:
            continue
    return None


def versions(backend: str, torch: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"python": platform.python_version(), "executable": sys.executable}
    for name in ("triton", "torch", "numpy"):
        value = _module_version(name)
        if value:
            out[name] = value
    if backend == "cuda":
        runtime = getattr(getattr(torch, "version", None), "cuda", None)
        if runtime:
            out["cuda_runtime"] = str(runtime)
        driver = _nvidia_driver()
        if driver:
            out["driver"] = driver
    elif backend == "npu":
        value = _module_version("torch_npu")
        if value:
            out["torch_npu"] = value
        cann = _cann()
        if cann:
            out["cann"] = cann
    elif backend == "interpret":
        out["driver"] = "none (TRITON_INTERPRET=1 on the CPU)"
    return out
