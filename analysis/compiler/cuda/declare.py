"""What every TL3xx rule module shares: the check family the NVIDIA analysis runs (each rule is declared next to
the check that emits it, `@register_check(CHECK_FAMILY, RULE)`), the rule constructor and the references rules
cite."""

from __future__ import annotations

from typing import Any

from ...core.findings import Level, Severity
from ...core.rules import Rule, register

CHECK_FAMILY = "cuda"  # rules.checks family: the TL3xx checks run over one NVIDIA compile

_AXIS = "https://github.com/triton-lang/triton/blob/main/lib/Analysis/AxisInfo.cpp"
_COALESCE = "https://github.com/triton-lang/triton/blob/main/lib/Dialect/TritonGPU/Transforms/Coalesce.cpp"
_LOADSTORE = "https://github.com/triton-lang/triton/blob/main/third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp"
_GUIDE_MEM = (
    "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#coalesced-access-to-global-memory"
)
_SPECS = (
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications"
)
_OCC = "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#occupancy"
_ACCEL = (
    "https://github.com/triton-lang/triton/blob/main/lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp"
)
_PIPE = "https://github.com/triton-lang/triton/tree/main/lib/Dialect/TritonGPU/Transforms/Pipeliner"
_RLC = "https://github.com/triton-lang/triton/blob/main/lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp"
_PTX_ISA = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"
_TUTORIAL_MM = "https://triton-lang.org/main/getting-started/tutorials/03-matrix-multiplication.html"

CUDA = ("cuda",)


def cuda_rule(code: str, name: str, title: str, severity: Severity, rationale: str, *refs: str, **more: Any) -> Rule:
    return register(Rule(code, name, title, Level.COMPILER, severity, CUDA, rationale, tuple(refs), **more))
