"""vector-accumulator: per-lane partials in the loop, one reduction after it."""

from __future__ import annotations

import pytest
from recipe_helpers import check_correct, declined, rewrite, task

ROW_STATS = task('''
    M = 8
    N = 300
    TEST_SHAPES = [{"M": 4, "N": 256}, {"M": 5, "N": 301}]


    @triton.jit
    def stats_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        total = 0.0
        biggest = -float("inf")
        # a comment that must survive
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
            total = total + tl.sum(x * x, axis=0)
            biggest = tl.maximum(biggest, tl.max(tl.where(cols < n_cols, x, -float("inf")), axis=0))
        tl.store(out_ptr + row * 2, total)
        tl.store(out_ptr + row * 2 + 1, biggest)


    class Model(nn.Module):
        def forward(self, x):
            return torch.stack([(x * x).sum(1), x.max(1).values], dim=1)


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[0], 2)
            stats_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=64)
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')

SUM_AUG = task('''
    M = 8
    N = 300
    TEST_SHAPES = [{"M": 3, "N": 100}]


    @triton.jit
    def sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0)
        acc = 0.0
        for start in range(0, n_cols, BLOCK_SIZE):
            offs = start + tl.arange(0, BLOCK_SIZE)
            acc += tl.sum(tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0))
        tl.store(out_ptr + row, acc)


    class Model(nn.Module):
        def forward(self, x):
            return x.sum(1)


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[0])
            sum_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK_SIZE=32)
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')


@pytest.fixture(scope="module")
def rewrites() -> dict[str, str]:
    return {
        "row_stats": rewrite("vector-accumulator", ROW_STATS, "stats_kernel")[0].source,
        "sum_aug": rewrite("vector-accumulator", SUM_AUG, "sum_kernel")[0].source,
    }


def test_rewrite_shape(rewrites: dict[str, str]) -> None:
    new = rewrites["row_stats"]
    assert "total = tl.zeros([BLOCK], dtype=tl.float32)" in new
    assert 'biggest = tl.full([BLOCK], -float("inf"), dtype=tl.float32)' in new
    assert "total = total + (x * x)" in new
    assert "\n    total = tl.sum(total, axis=0)\n    biggest = tl.max(biggest, axis=0)\n" in new
    assert "# a comment that must survive" in new
    # everything outside the kernel is unchanged, byte for byte
    assert new.split("@triton.jit")[0] == ROW_STATS.split("@triton.jit")[0]
    assert new.split("class Model")[1] == ROW_STATS.split("class Model")[1]
    assert "acc += tl.load(" in rewrites["sum_aug"]


def test_rewrites_stay_correct(rewrites: dict[str, str], tmp_path) -> None:
    check_correct({"orig_row_stats": ROW_STATS, **rewrites}, tmp_path)


def test_integer_accumulator_stays_integer() -> None:
    counting = SUM_AUG.replace("acc = 0.0", "acc = 0")
    assert "acc = tl.zeros([BLOCK_SIZE], dtype=tl.int32)" in rewrite("vector-accumulator", counting, "sum_kernel")[0].source


def test_declines_when_accumulator_is_read_in_the_loop() -> None:
    source = SUM_AUG.replace("        acc += tl.sum(", "        tl.store(out_ptr + row, acc)\n        acc += tl.sum(")
    assert "used elsewhere" in declined("vector-accumulator", source, "sum_kernel")


def test_declines_2d_reduction_and_missing_loop() -> None:
    source = SUM_AUG.replace("tl.sum(tl.load(x_ptr + row * n_cols + offs", "tl.sum(tl.load(x_ptr + row * n_cols + offs[:, None]")
    assert declined("vector-accumulator", source, "sum_kernel")
    no_loop = task('''
        @triton.jit
        def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
            tl.store(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0))
    ''')
    assert "no block reduction" in declined("vector-accumulator", no_loop, "k")
