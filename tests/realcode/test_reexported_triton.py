"""Libraries that re-export Triton (`from vllm.triton_utils import tl, triton`) are Triton files: their kernels
are found by level 1 and compiled by the runner even where the re-exporting package is not installed."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.kernels import parse_module
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

SOURCE = """
from somelib_not_installed.triton_utils import tl, triton


@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def launch(x):
    add_one[(1,)](x, x.numel(), BLOCK=128)
"""


def test_reexported_triton_names_make_kernels() -> None:
    assert "add_one" in [k.name for k in parse_module(SOURCE).kernels]


def test_unrelated_names_from_other_modules_do_not() -> None:
    other = SOURCE.replace("import tl, triton", "import tl, jit as triton_jit").replace(
        "@triton.jit", "@triton_jit"
    )
    other = other.replace("from somelib", "import triton\nfrom somelib")
    assert "add_one" not in [k.name for k in parse_module(other).kernels]


def test_runner_compiles_a_kernel_written_against_a_missing_reexport(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    path = tmp_path / "reexport.py"
    path.write_text(SOURCE)
    result = analyze_kernel(SOURCE, str(path), "add_one", "sm_90", cuda_runner, max_variants=1)
    assert result.primary is not None, [v.errors for v in result.variants]
