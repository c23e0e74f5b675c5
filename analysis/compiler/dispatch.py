"""Levels 3-4 entry point: turn a compile result's stages into per-line attribution and compiler findings.

`analyze` dispatches on the target: CUDA targets (sm_*) go to `compiler_cuda`, Ascend SoCs to
`compiler_ascend.analyze_ascend` (same signature, imported lazily so either half works alone).
"""

from __future__ import annotations

from typing import Any

from ..core.targets import is_ascend_target, is_cuda_target
from .report import CompilerReport


def analyze(
    stages: dict[str, str],
    metadata: dict[str, Any],
    resources: dict[str, Any],
    target: str,
    source: str,
    kernel: str,
    path: str,
) -> CompilerReport:
    """Analyze one compiled kernel; never raises on malformed stage text (problems go to `notes`)."""
    if not isinstance(stages, dict):
        return CompilerReport(notes=["no compiler stages to analyze"])
    # Callers pass a runner's JSON: anything of the wrong shape is treated as absent, not trusted.
    metadata = metadata if isinstance(metadata, dict) else {}
    resources = resources if isinstance(resources, dict) else {}
    source = source if isinstance(source, str) else ""
    kernel = kernel if isinstance(kernel, str) else ""
    path = path if isinstance(path, str) else ""
    target = str(target or "")
    if is_cuda_target(target):
        from .cuda.analyze import analyze_cuda

        return analyze_cuda(stages, metadata, resources, target, source, kernel, path)
    if is_ascend_target(target):
        try:
            from .ascend.analyze import analyze_ascend
        except ImportError as exc:
            return CompilerReport(notes=[f"Ascend analysis is not available: {exc}"])
        return analyze_ascend(stages, metadata, resources, target, source, kernel, path)
    return CompilerReport(
        notes=[f"unknown target {target!r}: expected sm_80/sm_90/... or an Ascend SoC name"]
    )
