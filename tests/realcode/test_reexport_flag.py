"""A library that re-exports Triton also says whether Triton imports (`from vllm.triton_utils import HAS_TRITON`);
where that library is missing, its stand-in answers the flag truthfully, so ops the file picks by it
(`extract_slice = tl.extract_slice if HAS_TRITON else None`, vllm-ascend's swiglu_quant.py) are the real ones."""

from __future__ import annotations

from pathlib import Path

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

SOURCE = """
from somelib_not_installed.triton_utils import HAS_TRITON, tl, triton

if HAS_TRITON:
    clamp_low = tl.maximum
else:
    clamp_low = None


@triton.jit
def relu(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, clamp_low(x, 0.0), mask=offs < n)


def launch(x):
    relu[(1,)](x, x.numel(), BLOCK=128)
"""


def test_the_has_triton_flag_of_a_missing_reexport_is_true(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    path = tmp_path / "flagged.py"
    path.write_text(SOURCE)
    result = analyze_kernel(SOURCE, str(path), "relu", "sm_90", cuda_runner, max_variants=1)
    assert result.primary is not None, [e.message for v in result.variants for e in v.errors]


ANNOTATED = """
import triton
import triton.language as tl
import tensorlib_not_installed as tlib


@triton.jit
def scale(x_ptr: tlib.Tensor, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x):
    scale[(1,)](x, x.numel(), BLOCK=128)
"""


def test_a_missing_module_read_by_the_kernel_is_a_module_triton_accepts(
    tmp_path: Path, ascend_runner: LocalRunner
) -> None:
    # `x_ptr: torch.Tensor` where torch is missing (vllm-ascend split_qkv_rmsnorm_mrope.py): Triton accepts a
    # global that is exactly a module, so the stand-in is one
    path = tmp_path / "annotated.py"
    path.write_text(ANNOTATED)
    result = analyze_kernel(ANNOTATED, str(path), "scale", "ascend910b3", ascend_runner, max_variants=1)
    assert result.primary is not None, [e.message for v in result.variants for e in v.errors]
