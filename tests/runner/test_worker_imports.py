"""Kernel files that query the GPU at import time (the Triton tutorials' style) compile on a machine with no
GPU: the CUDA compile worker stands in for the driver for the requested target, and refuses to launch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from kernel_requests import KERNELS

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.protocol import CompileRequest

pytestmark = pytest.mark.cuda_env

REPO = Path(__file__).resolve().parents[2]
WORKER = REPO / "ascend_runner" / "worker"
PTR32 = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"}


def tutorial(name: str, kernel: str, signature: dict, constants: dict, **options: object) -> CompileRequest:
    path = KERNELS / name
    ptrs = [a for a, t in signature.items() if t.startswith("*")]
    return CompileRequest(
        source=path.read_text(),
        path=str(path),
        kernel=kernel,
        signature=signature,
        constants=constants,
        divisibility=ptrs,
        target="sm_90",
        options={"sass": False, **options},
    )


def line_of(source: str, needle: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if needle in text)


def warning_lines(result: object) -> dict[int, str]:
    return {w["line"]: w["message"] for w in result.metadata["module_warnings"]}  # type: ignore[attr-defined]


def test_vector_add_with_module_level_device(cuda_runner: LocalRunner) -> None:
    req = tutorial(
        "tutorial_vector_add.py",
        "scaled_add_kernel",
        {**PTR32, "n_elements": "i32", "alpha": "fp32"},
        {"BLOCK_SIZE": 1024},
    )
    result = cuda_runner.compile(req)
    assert result.ok, result.errors
    warnings = warning_lines(result)
    assert line_of(req.source, "DEVICE = ") not in warnings  # the driver answered
    # Allocating on the device is still impossible here: torch says so, the statement is skipped.
    alloc = line_of(req.source, "x_in = torch.rand")
    assert "CUDA" in warnings[alloc]
    assert "H100" in result.metadata["device"]
    assert f'"{req.path}":{line_of(req.source, "tl.store(out_ptr")}:' in result.stages["ttgir"]


def test_softmax_sizes_from_device_properties(cuda_runner: LocalRunner) -> None:
    signature = {
        "out_ptr": "*fp32",
        "in_ptr": "*fp32",
        "in_row_stride": "i32",
        "out_row_stride": "i32",
        "n_rows": "i32",
        "n_cols": "i32",
    }
    req = tutorial("tutorial_softmax.py", "row_softmax_kernel", signature, {"BLOCK": 1024, "STAGES": 4})
    result = cuda_runner.compile(req)
    assert result.ok, result.errors
    # properties = driver.active.utils.get_device_properties(...) and everything derived from it ran.
    assert result.metadata["module_warnings"] == []


def test_matmul_autotune_configs_chosen_by_is_cuda(cuda_runner: LocalRunner) -> None:
    ints = "M N K stride_am stride_ak stride_bk stride_bn stride_cm stride_cn".split()
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **{n: "i32" for n in ints}}
    constants = {"TILE_M": 128, "TILE_N": 128, "TILE_K": 64, "GROUP": 8}
    req = tutorial(
        "tutorial_matmul_autotune.py", "tiled_matmul_kernel", signature, constants, num_warps=8, num_stages=3
    )
    result = cuda_runner.compile(req)
    assert result.ok, result.errors  # without the stand-in the @triton.autotune statement fails: no kernel
    assert "warp_group_dot" in result.stages["ttgir"]
    warnings = warning_lines(result)
    assert line_of(req.source, "SM_COUNT = ") not in warnings  # torch.cuda.get_device_properties answered
    assert line_of(req.source, "@triton.autotune") not in warnings


def test_top_level_launch_is_refused_clearly(cuda_runner: LocalRunner, tmp_path: Path) -> None:
    source = textwrap.dedent(
        """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def fill(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 1.0, mask=offs < n)


        buffer = torch.zeros(16)
        fill[(1,)](buffer, 16, BLOCK=16)
        """
    )
    path = tmp_path / "launches.py"
    req = CompileRequest(
        source=source, path=str(path), kernel="fill", signature={"x_ptr": "*fp32", "n": "i32"},
        constants={"BLOCK": 16}, target="sm_80", options={"sass": False},
    )  # fmt: skip
    result = cuda_runner.compile(req)
    assert result.ok, result.errors
    message = warning_lines(result)[line_of(source, "fill[(1,)]")]
    assert "no GPU on this machine" in message and "cannot launch a kernel" in message


def test_relative_sibling_import(cuda_runner: LocalRunner, tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(
        "import triton\n\n\n@triton.jit\ndef triple(x):\n    return x * 3.0\n"
    )
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl
        from .helpers import triple


        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, triple(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)
        """
    )
    req = CompileRequest(
        source=source, path=str(tmp_path / "k.py"), kernel="k", signature={"x_ptr": "*fp32", "n": "i32"},
        constants={"BLOCK": 128}, options={"sass": False},
    )  # fmt: skip
    result = cuda_runner.compile(req)
    assert result.ok, result.errors
    assert "3.000000e+00" in result.stages["ttir"]
    assert not list(tmp_path.rglob("__pycache__"))  # the worker writes nothing into the user's folder


# The stand-in itself, driven in the CUDA environment's Python (where triton and torch live).
STAND_IN_CHECKS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from compile_only_cuda import NoDeviceError, compile_only
from triton.runtime.driver import driver

out = {}
assert "torch" not in sys.modules
with compile_only("sm_80") as on:
    out["on"] = on
    active = driver.active
    t = active.get_current_target()
    out["target"] = [t.backend, t.arch, t.warp_size]
    out["props"] = active.utils.get_device_properties(0)
    import torch  # imported while the stand-in is in place: torch.cuda answers for the target
    out["torch"] = [torch.cuda.is_available(), list(torch.cuda.get_device_capability()),
                    torch.cuda.get_device_properties(0).multi_processor_count, str(active.get_active_torch_device())]
    refused = []
    for name, call in [("bench", lambda: active.get_benchmarker()(lambda: None, quantiles=None)),
                       ("stream", lambda: active.get_current_stream(0)),
                       ("launcher", lambda: active.launcher_cls),
                       ("binary", lambda: active.utils.load_binary)]:
        try:
            call()
        except NoDeviceError as exc:
            refused.append([name, str(exc)])
    out["refused"] = refused
out["after"] = [driver._active is None, torch.cuda.is_available()]
with compile_only("sm_100") as on:
    out["sm_100"] = [on, driver.active.get_current_target().arch, torch.cuda.get_device_capability()[0]]
with compile_only("sm_90", has_gpu=lambda: True) as on:
    out["gpu_host"] = [on, driver._active is None]
real = object()
driver.set_active(real)
with compile_only("sm_90") as on:
    out["preset"] = [on, driver.active is real]
print(json.dumps(out))
"""


def test_stand_in_answers_for_the_target_and_is_undone(cuda_python: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run(
        [cuda_python, "-c", STAND_IN_CHECKS, str(WORKER)],
        capture_output=True, text=True, timeout=180, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["on"] is True
    assert out["target"] == ["cuda", 80, 32]
    assert out["props"]["multiprocessor_count"] == 108 and out["props"]["warpSize"] == 32
    assert out["props"]["max_shared_mem"] == 166912 and out["props"]["max_num_regs"] == 65536
    assert out["torch"] == [True, [8, 0], 108, "cuda:0"]
    assert [name for name, _ in out["refused"]] == ["bench", "stream", "launcher", "binary"]
    assert all("sm_80" in msg and "no GPU" in msg for _, msg in out["refused"])
    assert out["after"] == [True, False]  # driver and torch.cuda back as they were
    assert out["sm_100"] == [True, 100, 10]  # torch already imported: patched on entry
    assert out["gpu_host"] == [False, True]  # a real GPU: nothing replaced
    assert out["preset"] == [False, True]  # an active driver is never replaced


def test_check_ir_reports_compiler_findings(tmp_path: Path, cuda_python: str) -> None:
    files = [KERNELS / f"tutorial_{n}.py" for n in ("vector_add", "softmax", "matmul_autotune")]
    env = {**os.environ, "TRITONLENS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "tritonlens.server.cli", "check", "--level", "ir", "--target", "sm_90",
         "--format", "json", *map(str, files)],
        capture_output=True, text=True, timeout=400, env=env, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "not analyzed" not in proc.stderr and "failed" not in proc.stderr, proc.stderr[-3000:]
    findings = json.loads(proc.stdout)
    by_file: dict[str, set[str]] = {}
    for f in findings:
        by_file.setdefault(Path(f["path"]).name, set()).add(f["code"])
    assert not {c for codes in by_file.values() for c in codes} & {"TL300", "TL002", "TL003"}, by_file
    # Compiler-grounded findings (levels 3-4) for the two kernels that have something to report.
    assert any(f["level"] >= 3 for f in findings if f["path"].endswith("tutorial_matmul_autotune.py"))
    assert any(f["level"] >= 3 for f in findings if f["path"].endswith("tutorial_softmax.py"))
