"""`f = triton.jit(f)`, `k = triton.autotune(...)(triton.jit(f))` and bare `triton.jit(f)` are kernels."""

from __future__ import annotations

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.kernels import kernel_table

SOURCE = """
import triton
import triton.language as tl


def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


scale = triton.jit(scale)


def tuned(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)


tuned_kernel = triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])(
    triton.jit(tuned)
)


def not_a_kernel(x):
    return x


wrapped = some_decorator(not_a_kernel)
"""


def test_call_forms_are_kernels_in_triage_and_specialization() -> None:
    module = parse_module(SOURCE)
    names = [k.name for k in module.kernels]
    assert names == ["scale", "tuned"]
    tuned = module.kernel("tuned")
    assert tuned is not None and tuned.autotune_configs[0]["kwargs"] == {"BLOCK": 128}
    parsed = kernel_table(SOURCE)
    assert set(parsed.kernels) == {"scale", "tuned"}
    specs = specializations(parsed, "tuned")
    assert specs and specs[0].constants["BLOCK"] == 128 and specs[0].options["num_warps"] == 4


def test_a_plain_decorator_call_is_not_a_kernel() -> None:
    assert "not_a_kernel" not in {k.name for k in parse_module(SOURCE).kernels}


def test_device_functions_and_combine_functions_are_not_compiled_alone() -> None:
    from tritonlens.server.engine.diagnose import launchable_kernels

    source = """
import triton
import triton.language as tl


@triton.jit
def cosh(x):
    return (tl.exp(x) + tl.exp(-x)) * 0.5


@triton.jit
def _or(a, b):
    return a | b


@triton.jit
def any_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.reduce(v != 0, 0, _or))
"""
    assert launchable_kernels(source) == ["any_kernel"]
