"""Levels 3-4 engine, shared by the CLI (`check --level ir`, `ir`), the language server (compile_lsp,
escalation_lsp) and level 5 (engine/optimize's gate, evidence and config search).

    analyze_kernel(source, path, kernel, target, runner, overrides=, recorded=, cancel=) -> KernelAnalysis
    analyze_document(source, path, target, runner, ...) -> [KernelAnalysis]
    launchable_kernels(source) -> kernel names compiled on their own
    find_pyproject_overrides(path) -> [tool.tritonlens]; compile_inputs_digest(text, path, kernel) -> str
    read_compile_inputs(text, path, kernel) -> CompileInputs (digest, overrides, recorded launches; read once)

Modules: run (orchestration), compile (runner call, output analysis, report cache), inputs (which kernels,
what a compile reads: pyproject, recorded launches, and all of it as a digest), result (KernelAnalysis,
VariantResult). Policy lives in analysis: variant_findings, compile_outcome, targets.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each name is imported from its module on first use (PEP 562): the language server reads pyproject tables through
# `inputs` at start, and must not pay for the compile orchestration (`run`) before its first answer (issue 23).
_MODULE_OF = {
    "CompileInputs": "inputs",
    "compile_inputs_digest": "inputs",
    "find_pyproject": "inputs",
    "find_pyproject_overrides": "inputs",
    "kernel_overrides": "inputs",
    "launchable_kernels": "inputs",
    "read_compile_inputs": "inputs",
    "KernelAnalysis": "result",
    "VariantResult": "result",
    "MAX_COMPILED_VARIANTS": "run",
    "analyze_document": "run",
    "analyze_kernel": "run",
}

if TYPE_CHECKING:
    from .inputs import (
        CompileInputs,
        compile_inputs_digest,
        find_pyproject,
        find_pyproject_overrides,
        kernel_overrides,
        launchable_kernels,
        read_compile_inputs,
    )
    from .result import KernelAnalysis, VariantResult
    from .run import MAX_COMPILED_VARIANTS, analyze_document, analyze_kernel


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


__all__ = [
    "MAX_COMPILED_VARIANTS",
    "CompileInputs",
    "KernelAnalysis",
    "VariantResult",
    "analyze_document",
    "analyze_kernel",
    "compile_inputs_digest",
    "find_pyproject",
    "find_pyproject_overrides",
    "kernel_overrides",
    "launchable_kernels",
    "read_compile_inputs",
]
