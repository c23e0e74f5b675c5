"""The gate's compile check rejects a candidate for failures it introduced, never for a kernel the original text
does not compile either (seen on a public library: every config move of one kernel was rejected because another
kernel of the file, launched with guessed values, does not compile in the original)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.server.engine.optimize.gate import Gate, GateConfig
from tritonlens.server.engine.optimize.shapes import plan_shapes

ORIGINAL = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 1000


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def broken_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.not_an_api(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
        return y


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
'''


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory):
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(f"cuda runner environment missing: {exc}")
    with LocalRunner({"cache_dir": str(tmp_path_factory.mktemp("inherited-cache")), "workers": 1,
                      "warm_up": False}) as r:
        yield r


@pytest.mark.cuda_env
def test_only_failures_the_candidate_introduced_reject_it(runner: LocalRunner, tmp_path: Path) -> None:
    path = tmp_path / "kb_scale.py"
    path.write_text(ORIGINAL)
    cfg = GateConfig(backend="interpret", seeds=(0,), compile_check=True, target="sm_90")
    gate = Gate(runner, cfg, plan_shapes(ORIGINAL), str(path), reference_source=ORIGINAL)
    moved = ORIGINAL.replace("BLOCK=128)", "BLOCK=256)")
    error, result = gate.compile_check(moved, None)
    assert error is None, error  # broken_kernel fails in the original too: not this candidate's doing
    assert "broken_kernel" in result.failing and "broken_kernel" in gate.original_failures()
    worse = moved.replace("* 2.0, mask", "* tl.also_not_an_api(2.0), mask")
    error, _ = gate.compile_check(worse, None)
    assert error is not None and "scale_kernel" in error, error  # a failure it introduced still rejects it
