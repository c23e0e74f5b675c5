"""Compile requests for the test kernels in tests/runner/kernels (shared by tests and the benchmark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tritonlens.ascend_runner.protocol import CompileRequest

KERNELS = Path(__file__).resolve().parent / "kernels"

_PTRS16 = {"*fp16", "*fp32", "*bf16"}
SPECS: dict[str, dict[str, Any]] = {
    "elementwise": {
        "file": "elementwise.py",
        "kernel": "add_kernel",
        "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32"},
        "constants": {"BLOCK_SIZE": 1024},
        "options": {"num_warps": 4},
    },
    "softmax": {
        "file": "softmax.py",
        "kernel": "softmax_kernel",
        "signature": {
            "out_ptr": "*fp32",
            "in_ptr": "*fp32",
            "in_stride": "i32",
            "out_stride": "i32",
            "n_cols": "i32",
        },
        "constants": {"BLOCK_SIZE": 1024},
        "options": {"num_warps": 4},
    },
    "matmul": {
        "file": "matmul.py",
        "kernel": "matmul_kernel",
        "signature": {
            "a_ptr": "*fp16",
            "b_ptr": "*fp16",
            "c_ptr": "*fp16",
            "M": "i32",
            "N": "i32",
            "K": "i32",
            "stride_am": "i32",
            "stride_ak": "i32",
            "stride_bk": "i32",
            "stride_bn": "i32",
            "stride_cm": "i32",
            "stride_cn": "i32",
        },
        "constants": {
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_K": 64,
            "stride_ak": 1,
            "stride_bn": 1,
            "stride_cn": 1,
        },
        "options": {"num_warps": 8, "num_stages": 3},
    },
}


def request(
    name: str, target: str = "sm_90", path: str | None = None, source: str | None = None
) -> CompileRequest:
    spec = SPECS[name]
    file = KERNELS / spec["file"]
    signature = {k: v for k, v in spec["signature"].items() if k not in spec["constants"]}
    divisible = [k for k, v in signature.items() if v in _PTRS16 or k in ("M", "N", "K", "n_elements")]
    return CompileRequest(
        source=file.read_text() if source is None else source,
        path=str(file) if path is None else path,
        kernel=spec["kernel"],
        signature=signature,
        constants=dict(spec["constants"]),
        divisibility=divisible,
        target=target,
        options=dict(spec["options"]),
    )
