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
