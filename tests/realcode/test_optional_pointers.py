"""Optional tensor arguments (passed None or a tensor) and the flags that guard their use are specialized
consistently: names bound in both branches of one `if` in the launching function resolve on the same branch,
and a None the kernel body still reads (no guard, or a guard that holds) is replaced by a labeled tensor guess
or, when the None is what the launch shows, the weak flag guarding the read is turned the other way. Seen on
vllm-ascend (batch_invariant/matmul.py, fla/chunk_delta_hupdate.py: `'NoneType' object has no attribute
'type'`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tritonlens.analysis.compiler.variants import variant_guesses
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_bias(x_ptr, bias_ptr, out_ptr, n, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if HAS_BIAS:
        x += tl.load(bias_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)


def run(x, bias=None):
    out = torch.empty_like(x)
    if bias is None:
        has_bias = False
        bias_arg = torch.empty(0, dtype=torch.float16)
    else:
        has_bias = True
        bias_arg = bias
    add_bias[(1,)](x, bias_arg, out, x.numel(), has_bias, BLOCK=128)
    return out
"""

WITHOUT_BIAS = KERNEL + """

def demo():
    return run(torch.randn(1000, dtype=torch.float16))
"""

WITH_BIAS = KERNEL + """

def demo():
    x = torch.randn(1000, dtype=torch.float16)
    return run(x, torch.randn(1000, dtype=torch.float16))
"""

UNGUARDED = """
import torch
import triton
import triton.language as tl


@triton.heuristics({"USE_SCALE": lambda args: args["scale_ptr"] is not None,
                    "VARLEN": lambda args: args["offsets_ptr"] is not None})
@triton.jit
def segment_copy(x_ptr, offsets_ptr, scale_ptr, out_ptr, VARLEN: tl.constexpr, USE_SCALE: tl.constexpr,
                 BLOCK: tl.constexpr):
    seg = tl.program_id(0)
    start = tl.load(offsets_ptr + seg).to(tl.int32)
    offs = start + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if USE_SCALE:
        x = x * tl.load(scale_ptr + seg)
    tl.store(out_ptr + offs, x)


def segment_copy_op(x, offsets=None, scale=None):
    out = torch.empty_like(x)
    segment_copy[(4,)](x, offsets, scale, out, BLOCK=64)
    return out
"""

LITERAL_NONE = """
import torch
import triton
import triton.language as tl


@triton.jit
def maybe_add(x_ptr, y_ptr, out_ptr, SKIP_Y: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if not SKIP_Y:
        x += tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x)


def only_x(x):
    out = torch.empty_like(x)
    maybe_add[(1,)](x, None, out, BLOCK=64)
    return out
"""

NONE_TESTED = """
import torch
import triton
import triton.language as tl


@triton.jit
def maybe_residual(x_ptr, res_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if res_ptr is not None:
        x += tl.load(res_ptr + offs)
    tl.store(out_ptr + offs, x)


def no_residual(x):
    out = torch.empty_like(x)
    maybe_residual[(1,)](x, None, out, BLOCK=64)
    return out
"""


def spec_of(source: str, kernel: str):
    return next(s for s in specializations(source, kernel) if s.complete)


def test_names_bound_under_one_if_resolve_on_the_branch_the_caller_takes() -> None:
    spec = spec_of(WITHOUT_BIAS, "add_bias")
    assert spec.constants["HAS_BIAS"] is False
    assert spec.signature["bias_ptr"] == "*fp16"  # the dummy tensor of the same branch, never None
    spec = spec_of(WITH_BIAS, "add_bias")
    assert spec.constants["HAS_BIAS"] is True
    assert spec.signature["bias_ptr"] == "*fp16"


def test_a_branch_test_that_cannot_be_read_keeps_one_branch_for_every_name() -> None:
    spec = spec_of(KERNEL, "add_bias")  # nobody calls run(): `bias` is its default None
    assert spec.constants["HAS_BIAS"] is False and spec.signature["bias_ptr"] == "*fp16"


def test_a_none_the_kernel_reads_unguarded_becomes_a_labeled_tensor_and_heuristics_follow() -> None:
    spec = spec_of(UNGUARDED, "segment_copy")
    assert spec.signature["offsets_ptr"].startswith("*")
    assert "reads offsets_ptr at line" in spec.provenance["offsets_ptr"]
    assert "offsets_ptr" in variant_guesses(spec)  # named as a guess wherever a finding depends on it
    assert spec.constants["VARLEN"] is True  # `args["offsets_ptr"] is not None` on what is passed now
    # scale_ptr is read only under USE_SCALE, which its own None turns off: None stays (the JIT's constant)
    assert spec.signature["scale_ptr"] == "constexpr" and spec.constants["scale_ptr"] is None
    assert spec.constants["USE_SCALE"] is False


def test_a_none_shown_by_the_launch_turns_the_guessed_guard_off() -> None:
    spec = spec_of(LITERAL_NONE, "maybe_add")
    assert spec.constants["y_ptr"] is None
    assert spec.constants["SKIP_Y"] is True  # guessed False would read y_ptr under `if not SKIP_Y`


def test_a_none_tested_by_the_kernel_itself_stays_none() -> None:
    spec = spec_of(NONE_TESTED, "maybe_residual")
    assert spec.signature["res_ptr"] == "constexpr" and spec.constants["res_ptr"] is None


def test_the_consistent_variants_compile(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    for source, kernel in (
        (WITHOUT_BIAS, "add_bias"),
        (UNGUARDED, "segment_copy"),
        (LITERAL_NONE, "maybe_add"),
    ):
        path = tmp_path / f"{kernel}.py"
        path.write_text(textwrap.dedent(source))
        result = analyze_kernel(path.read_text(), str(path), kernel, "sm_90", cuda_runner, max_variants=1)
        assert result.primary is not None, [e.message for v in result.variants for e in v.errors]
        assert "failed_guesses" not in result.primary.metadata


VALUE_OR_POINTER = """
import torch
import triton
import triton.language as tl


@triton.jit
def fill(out_ptr, n, value_or_ptr, VALUE_IS_PTR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if VALUE_IS_PTR:
        value = tl.load(value_or_ptr)
    else:
        value = value_or_ptr
    tl.store(out_ptr + offs, value, mask=offs < n)


def fill_op(out, value):
    fill[(1,)](out, out.numel(), value, VALUE_IS_PTR=isinstance(value, torch.Tensor), BLOCK=128)
"""


def test_a_pointer_read_as_an_address_only_under_a_guessed_off_flag_turns_the_flag_on(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    spec = spec_of(VALUE_OR_POINTER, "fill")
    assert spec.signature["value_or_ptr"].startswith("*") and spec.constants["VALUE_IS_PTR"] is True
    assert "VALUE_IS_PTR" in variant_guesses(spec)  # still named as a guess
    path = tmp_path / "fill.py"
    path.write_text(textwrap.dedent(VALUE_OR_POINTER))
    result = analyze_kernel(path.read_text(), str(path), "fill", "sm_90", cuda_runner, max_variants=1)
    assert result.primary is not None, [e.message for v in result.variants for e in v.errors]


def test_a_flag_guarding_the_only_use_of_an_unread_pointer_stays_the_typical_guess() -> None:
    spec = spec_of(KERNEL.replace("bias_arg, out", "x, out").replace(", has_bias, BLOCK", ", BLOCK"), "add_bias")
    assert spec.constants["HAS_BIAS"] is False  # nothing reads bias_ptr with the flag off: nothing to fix


ELEMENT_TY = """
import triton
import triton.language as tl


@triton.jit
def _inner(acc, v_ptrs, IS_FP8: tl.constexpr):
    v = tl.load(v_ptrs)
    if IS_FP8:
        v = v.to(tl.float16)
    return acc + v


@triton.jit
def outer(V, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    acc = _inner(acc, V + offs, V.dtype.element_ty == tl.float8e5)
    tl.store(out_ptr + offs, acc)
"""


def test_a_parameter_whose_element_type_the_kernel_reads_is_a_pointer(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    # FlagGems attention: `V.dtype.element_ty == tl.float8e5`, V otherwise only passed to a helper (the rule
    # lives in specialization_asserts.element_type_reads)
    spec = spec_of(ELEMENT_TY, "outer")
    assert spec.signature["V"].startswith("*")
    path = tmp_path / "outer.py"
    path.write_text(textwrap.dedent(ELEMENT_TY))
    result = analyze_kernel(path.read_text(), str(path), "outer", "sm_90", cuda_runner, max_variants=1)
    assert result.primary is not None, [e.message for v in result.variants for e in v.errors]
