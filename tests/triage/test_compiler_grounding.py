"""The premises of the block-size rules and the bundled examples, checked against the real Triton compiler.

TL101/TL102 say that a non-constexpr or non-power-of-two `tl.arange` size does not compile; these tests make
upstream Triton 3.6 (CUDA runner environment, sm_90, no GPU) confirm it, and check that every bundled example
compiles with the values its own launch uses (other teams' IR tests compile them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from triage_helpers import EXAMPLES

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment

PROBE = Path(__file__).with_name("probe_compile_cuda.py")
pytestmark = pytest.mark.cuda_env


@pytest.fixture(scope="module")
def cuda_python() -> str:
    try:
        return str(find_environment("cuda").python)
    except EnvironmentUnavailable as exc:
        pytest.skip(f"cuda runner environment missing: {exc}")


def compile_cuda(python: str, path: Path, kernel: str, signature: dict[str, str], constexprs: dict) -> dict:
    request = {"path": str(path), "kernel": kernel, "signature": signature, "constexprs": constexprs}
    done = subprocess.run(
        [python, str(PROBE), json.dumps(request)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.stdout.strip(), done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


PTR = "*fp32"


@pytest.mark.parametrize(
    ("name", "kernel", "signature", "constexprs"),
    [
        (
            "vector_add.py",
            "add_kernel",
            {"x_ptr": PTR, "y_ptr": PTR, "output_ptr": PTR, "n_elements": "i32"},
            {"BLOCK_SIZE": 1024},
        ),
        (
            "naive_softmax.py",
            "softmax_kernel",
            {
                "output_ptr": PTR,
                "input_ptr": PTR,
                "temperature_ptr": PTR,
                "input_row_stride": "i32",
                "output_row_stride": "i32",
                "n_cols": "i32",
            },
            {"BLOCK_SIZE": 32},
        ),
        (
            "gather.py",
            "gather_kernel",
            {"table_ptr": PTR, "idx_ptr": "*i32", "out_ptr": PTR, "n_indices": "i32"},
            {"BLOCK_SIZE": 1024},
        ),
        (
            "matmul.py",
            "matmul_kernel",
            {
                "a_ptr": PTR,
                "b_ptr": PTR,
                "c_ptr": PTR,
                **{
                    n: "i32"
                    for n in (
                        "M",
                        "N",
                        "K",
                        "stride_am",
                        "stride_ak",
                        "stride_bk",
                        "stride_bn",
                        "stride_cm",
                        "stride_cn",
                    )
                },
            },
            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8},
        ),
    ],
)
def test_examples_compile_for_sm90(
    cuda_python: str, name: str, kernel: str, signature: dict, constexprs: dict
) -> None:
    full = {**signature, **{k: "constexpr" for k in constexprs}}
    result = compile_cuda(cuda_python, EXAMPLES / name, kernel, full, constexprs)
    assert result["ok"], result.get("error")
    assert f"@{kernel}" in result["stages"]["ttir"]


KERNEL = """
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK{annotation}):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
"""


def test_tl102_premise_non_power_of_two_arange_does_not_compile(cuda_python: str, tmp_path: Path) -> None:
    path = tmp_path / "pow2.py"
    path.write_text(KERNEL.format(annotation=": tl.constexpr"), encoding="utf-8")
    signature = {"x_ptr": PTR, "n": "i32", "BLOCK": "constexpr"}
    assert compile_cuda(cuda_python, path, "k", signature, {"BLOCK": 1024})["ok"]
    failed = compile_cuda(cuda_python, path, "k", signature, {"BLOCK": 1000})
    assert not failed["ok"] and "power of 2" in failed["error"]


def test_tl101_premise_runtime_arange_size_does_not_compile(cuda_python: str, tmp_path: Path) -> None:
    path = tmp_path / "runtime.py"
    path.write_text(KERNEL.format(annotation=""), encoding="utf-8")
    failed = compile_cuda(cuda_python, path, "k", {"x_ptr": PTR, "n": "i32", "BLOCK": "i32"}, {})
    assert not failed["ok"] and "constexpr" in failed["error"]


def test_probe_is_stdlib_only() -> None:
    # The probe runs under the runner env's interpreter: it must not need tritonlens.
    assert "tritonlens" not in PROBE.read_text(encoding="utf-8").replace("tritonlens.", "")
    assert sys.executable  # keeps the import used on every platform
