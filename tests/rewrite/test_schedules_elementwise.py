"""Schedules over the computation model for elementwise kernels, short rows and column reductions: kernels written
for the test in two styles each, rewritten, then run against torch under the interpreter at sizes no block divides."""

from __future__ import annotations

import pytest
from recipe_helpers import check_correct, declined, rewrite, task

EW_BLOCKED = task('''
    TEST_SHAPES = [{"N": 3001}, {"N": 77}]
    N = 3001

    @triton.jit
    def gelu_like(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        # tanh-free GELU approximation
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, x * tl.sigmoid(1.702 * x), mask=mask)

    class Model(nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(1.702 * x)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            n = x.numel()
            BLOCK = 128
            grid = (triton.cdiv(n, BLOCK),)
            gelu_like[grid](x, y, n, BLOCK=BLOCK)
            return y

    def get_inputs():
        return [torch.randn(N)]
''')

EW_SCALAR = task('''
    TEST_SHAPES = [{"M": 7, "N": 13}, {"M": 33, "N": 5}]
    M, N = 7, 13

    @triton.jit
    def axpb(x_ptr, b_ptr, out_ptr, n_cols):
        i = tl.program_id(0)
        x = tl.load(x_ptr + i)
        b = tl.load(b_ptr + i % n_cols)  # the bias repeats along each row
        tl.store(out_ptr + i, 2.0 * x + b)

    class Model(nn.Module):
        def forward(self, x, b):
            return 2.0 * x + b

    class ModelNew(nn.Module):
        def forward(self, x, b):
            out = torch.empty_like(x)
            axpb[(x.numel(),)](x, b, out, x.shape[1])
            return out

    def get_inputs():
        return [torch.randn(M, N), torch.randn(N)]
''')


@pytest.fixture(scope="module")
def ew_rewrites() -> dict[str, str]:
    out = {}
    for name, src, kernel in (("blocked", EW_BLOCKED, "gelu_like"), ("scalar", EW_SCALAR, "axpb")):
        for i, cand in enumerate(rewrite("schedule-elementwise-blocks", src, kernel)):
            out[f"ew_{name}_{i}"] = cand.source
    return out


def test_elementwise_rewrite_shape(ew_rewrites: dict[str, str]) -> None:
    blocked = ew_rewrites["ew_blocked_1"]
    assert "gelu_like[(triton.cdiv((grid[0]) * (BLOCK), 4096),)](x, y, n, BLOCK=4096, num_warps=8)" in blocked
    assert "# tanh-free GELU approximation" in blocked  # the user's comments and body are kept
    scalar = ew_rewrites["ew_scalar_0"]
    assert "def axpb(x_ptr, b_ptr, out_ptr, n_cols, n_elements_total, EW_BLOCK: tl.constexpr):" in scalar
    assert "b = tl.load(b_ptr + i % n_cols, mask=elem_ok)" in scalar
    assert "axpb[(triton.cdiv(x.numel(), 1024),)](x, b, out, x.shape[1], n_elements_total=x.numel(), " in scalar


def test_elementwise_stays_correct(ew_rewrites: dict[str, str], tmp_path) -> None:
    check_correct({**ew_rewrites, "orig_ew_scalar": EW_SCALAR}, tmp_path)


def test_elementwise_declines() -> None:
    big = EW_BLOCKED.replace("BLOCK=BLOCK)", "BLOCK=8192)")
    assert "already at blocks of 8192" in declined("schedule-elementwise-blocks", big, "gelu_like")
    row = EW_BLOCKED.replace("offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
                             "offs = tl.program_id(0) * n + tl.arange(0, BLOCK)")
    assert "row_tiles" in declined("schedule-elementwise-blocks", row, "gelu_like")
    reduce = EW_BLOCKED.replace("x * tl.sigmoid(1.702 * x)", "tl.sum(x, axis=0)")
    assert "not a elementwise" in declined("schedule-elementwise-blocks", reduce, "gelu_like")
    branch = EW_SCALAR.replace("    tl.store(out_ptr + i, 2.0 * x + b)\n",
                               "    if i < 100:\n        tl.store(out_ptr + i, 2.0 * x + b)\n")
    assert branch != EW_SCALAR
    assert "branches" in declined("schedule-elementwise-blocks", branch, "axpb")
