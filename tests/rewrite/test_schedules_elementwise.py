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


EW_ONE_PROGRAM = task('''
    TEST_SHAPES = [{"N": 5000}, {"N": 3}]
    N = 5000

    @triton.jit
    def scale_all(src, dst, n, B: tl.constexpr):
        for s in range(0, n, B):  # one program walks everything
            o = s + tl.arange(0, B)
            tl.store(dst + o, tl.abs(tl.load(src + o, mask=o < n)) * 3.0, mask=o < n)

    class Model(nn.Module):
        def forward(self, x):
            return x.abs() * 3.0

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            scale_all[(1,)](x, y, x.numel(), B=256)
            return y

    def get_inputs():
        return [torch.randn(N)]
''')


@pytest.fixture(scope="module")
def ew_rewrites() -> dict[str, str]:
    out = {}
    lam = EW_BLOCKED.replace("grid = (triton.cdiv(n, BLOCK),)", 'grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)')
    assert lam != EW_BLOCKED
    for name, src, kernel in (("blocked", EW_BLOCKED, "gelu_like"), ("scalar", EW_SCALAR, "axpb"),
                              ("lambda", lam, "gelu_like"), ("stride", EW_ONE_PROGRAM, "scale_all")):
        for i, cand in enumerate(rewrite("schedule-elementwise-blocks", src, kernel)):
            out[f"ew_{name}_{i}"] = cand.source
    return out


def test_elementwise_rewrite_shape(ew_rewrites: dict[str, str]) -> None:
    blocked = ew_rewrites["ew_blocked_1"]
    assert "gelu_like[(triton.cdiv((grid[0]) * (BLOCK), 4096),)](x, y, n, BLOCK=4096, num_warps=8)" in blocked
    assert "# tanh-free GELU approximation" in blocked  # the user's comments and body are kept
    assert "gelu_like[grid](x, y, n, BLOCK=1024, num_warps=4)" in ew_rewrites["ew_lambda_0"]
    stride = ew_rewrites["ew_stride_0"]
    assert "for s in range(tl.program_id(0) * B, n, tl.num_programs(0) * B):  # one program walks" in stride
    assert "scale_all[(528,)](x, y, x.numel(), B=1024, num_warps=4)" in stride
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
    assert "not an elementwise" in declined("schedule-elementwise-blocks", reduce, "gelu_like")
    pid_used = EW_ONE_PROGRAM.replace("range(0, n, B)", "range(tl.program_id(0) * B, n, B)")
    assert "per-program loop" in declined("schedule-elementwise-blocks", pid_used, "scale_all")
    branch = EW_SCALAR.replace("    tl.store(out_ptr + i, 2.0 * x + b)\n",
                               "    if i < 100:\n        tl.store(out_ptr + i, 2.0 * x + b)\n")
    assert branch != EW_SCALAR
    assert "branches" in declined("schedule-elementwise-blocks", branch, "axpb")


ROWS_SOFTMAX = task('''
    TEST_SHAPES = [{"M": 37, "N": 19}, {"M": 5, "N": 100}]
    M, N = 37, 19

    @triton.jit
    def softmax_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        ok = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=ok, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=ok)

    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=1)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            softmax_rows[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
            return y

    def get_inputs():
        return [torch.randn(M, N)]
''')

ROWS_HELPER_BIAS = task('''
    TEST_SHAPES = [{"M": 70, "N": 30}, {"M": 3, "N": 65}]
    M, N = 70, 30

    @triton.jit
    def _row_ptr(base, r, stride):
        return base + r * stride

    @triton.jit
    def norm_bias(x_ptr, b_ptr, out_ptr, sums_ptr, N, stride, BN: tl.constexpr):
        r = tl.program_id(0)
        offs = tl.arange(0, BN)
        m = offs < N
        x = tl.load(_row_ptr(x_ptr, r, stride) + offs, mask=m, other=0.0)
        b = tl.load(b_ptr + offs, mask=m, other=0.0)  # the same bias for every row
        mean = tl.sum(x) / N
        tl.store(_row_ptr(out_ptr, r, stride) + offs, x - mean + b, mask=m)
        tl.store(sums_ptr + r, mean)

    class Model(nn.Module):
        def forward(self, x, b):
            return x - x.mean(dim=1, keepdim=True) + b

    class ModelNew(nn.Module):
        def forward(self, x, b):
            out = torch.empty_like(x)
            sums = torch.empty(x.shape[0])
            norm_bias[(x.shape[0],)](x, b, out, sums, x.shape[1], x.stride(0), BN=128)
            return out

    def get_inputs():
        return [torch.randn(M, N), torch.randn(N)]
''')


# row gathers: a row index read at the program's row, then that row of a table (two styles)
GATHER_ROWS = task('''
    TEST_SHAPES = [{"V": 50, "D": 37, "K": 13}, {"V": 9, "D": 100, "K": 70}]
    V, D, K = 50, 37, 13

    @triton.jit
    def take_rows(table_ptr, idx_ptr, out_ptr, d, stride_t, stride_o, BD: tl.constexpr):
        i = tl.program_id(0)
        src = tl.load(idx_ptr + i)
        c = tl.arange(0, BD)
        v = tl.load(table_ptr + src * stride_t + c, mask=c < d, other=0.0)
        tl.store(out_ptr + i.to(tl.int64) * stride_o + c, v, mask=c < d)

    class Model(nn.Module):
        def forward(self, table, idx):
            return table[idx]

    class ModelNew(nn.Module):
        def forward(self, table, idx):
            out = torch.empty(idx.shape[0], table.shape[1], dtype=table.dtype)
            take_rows[(idx.shape[0],)](table, idx, out, table.shape[1], table.stride(0), out.stride(0),
                                       BD=triton.next_power_of_2(table.shape[1]))
            return out

    def get_inputs():
        return [torch.randn(V, D), torch.randint(0, V, (K,))]
''')

GATHER_SCALED = task('''
    TEST_SHAPES = [{"V": 31, "D": 64, "K": 5}, {"V": 7, "D": 33, "K": 129}]
    V, D, K = 31, 64, 5

    @triton.jit
    def embed_scaled(w_ptr, tok_ptr, scale_ptr, y_ptr, D, BLOCK: tl.constexpr):
        t = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        keep = offs < D
        row = tl.load(w_ptr + tl.load(tok_ptr + t) * D + offs, mask=keep, other=0.0)
        s = tl.load(scale_ptr + t)
        tl.store(y_ptr + t * D + offs, row * s, mask=keep)

    class Model(nn.Module):
        def forward(self, w, tok, scale):
            return w[tok] * scale[:, None]

    class ModelNew(nn.Module):
        def forward(self, w, tok, scale):
            y = torch.empty(tok.shape[0], w.shape[1])
            embed_scaled[(tok.shape[0],)](w, tok, scale, y, w.shape[1], BLOCK=triton.next_power_of_2(w.shape[1]))
            return y

    def get_inputs():
        return [torch.randn(V, D), torch.randint(0, V, (K,)), torch.rand(K)]
''')


@pytest.fixture(scope="module")
def row_rewrites() -> dict[str, str]:
    out = {}
    for name, src, kernel in (("softmax", ROWS_SOFTMAX, "softmax_rows"), ("bias", ROWS_HELPER_BIAS, "norm_bias"),
                              ("gather", GATHER_ROWS, "take_rows"), ("embed", GATHER_SCALED, "embed_scaled")):
        for i, cand in enumerate(rewrite("schedule-row-tiles", src, kernel)):
            out[f"rows_{name}_{i}"] = cand.source
    return out


def test_row_tiles_rewrite_shape(row_rewrites: dict[str, str]) -> None:
    soft = row_rewrites["rows_softmax_0"]
    assert "def softmax_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr, n_rows_total, ROWS: tl.constexpr):" \
        in soft
    assert "e = tl.exp(x - tl.max(x, axis=1, keep_dims=True))" in soft
    assert "rows_per_program = max(1, min(64, 2048 // triton.next_power_of_2(" in soft
    bias = row_rewrites["rows_bias_1"]
    assert "b = tl.load(b_ptr + offs, mask=m, other=0.0)  # the same bias for every row" in bias  # loaded once
    assert "mean = tl.sum(x, axis=1, keep_dims=True) / N" in bias
    assert "tl.store(sums_ptr + r, mean, mask=row_ok)" in bias
    gather = row_rewrites["rows_gather_0"]  # the row index is read as a (ROWS, 1) column, masked by the row count
    assert "i = row_ids[:, None]" in gather and "src = tl.load(idx_ptr + i, mask=row_ok)" in gather
    assert "v = tl.load(table_ptr + src * stride_t + c, mask=(c < d) & row_ok, other=0.0)" in gather


def test_row_tiles_stay_correct(row_rewrites: dict[str, str], tmp_path) -> None:
    check_correct(row_rewrites, tmp_path)


def test_row_tiles_declines() -> None:
    from test_schedules_reduce import ROWS_RAW

    assert "loops over the row" in declined("schedule-row-tiles", ROWS_RAW, "rms")
    assert "elementwise_blocks" in declined("schedule-row-tiles", EW_BLOCKED, "gelu_like")
    two_d = ROWS_SOFTMAX.replace("cols = tl.arange(0, BLOCK)", "cols = tl.arange(0, BLOCK)[None, :]").replace(
        "axis=0", "axis=1")
    assert "2-D" in declined("schedule-row-tiles", two_d, "softmax_rows")
    same = ROWS_HELPER_BIAS.replace("tl.store(sums_ptr + r, mean)", "tl.store(sums_ptr, mean)")
    assert "same" in declined("schedule-row-tiles", same, "norm_bias")


COLUMN_SCALAR_MEAN = task('''
    TEST_SHAPES = [{"M": 41, "N": 37}, {"M": 9, "N": 300}]
    M, N = 41, 37

    @triton.jit
    def col_mean(x_ptr, out_ptr, M, stride_m):
        col = tl.program_id(0)
        acc = 0.0
        for r in range(M):
            acc += tl.load(x_ptr + r * stride_m + col)  # a strided walk down the column
        tl.store(out_ptr + col, acc / M)

    class Model(nn.Module):
        def forward(self, x):
            return x.mean(dim=0)

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[1], device=x.device, dtype=torch.float32)
            col_mean[(x.shape[1],)](x, out, x.shape[0], x.stride(0))
            return out

    def get_inputs():
        return [torch.randn(M, N)]
''')

COLUMN_LANES_MAX = task('''
    TEST_SHAPES = [{"M": 100, "N": 23}, {"M": 7, "N": 130}]
    M, N = 100, 23

    @triton.jit
    def col_max(x_ptr, out_ptr, n_rows, stride, BLOCK_M: tl.constexpr):
        c = tl.program_id(0)
        best = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
        for s in range(0, n_rows, BLOCK_M):
            rows = s + tl.arange(0, BLOCK_M)
            v = tl.load(x_ptr + rows * stride + c, mask=rows < n_rows, other=-float("inf"))
            best = tl.maximum(best, v)
        tl.store(out_ptr + c, tl.max(best, axis=0) * 2.0)

    class Model(nn.Module):
        def forward(self, x):
            return x.max(dim=0).values * 2.0

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[1], device=x.device, dtype=torch.float32)
            col_max[(x.shape[1],)](x, out, x.shape[0], x.stride(0), BLOCK_M=32)
            return out

    def get_inputs():
        return [torch.randn(M, N)]
''')


@pytest.fixture(scope="module")
def col_rewrites() -> dict[str, str]:
    out = {}
    for name, src, kernel in (("mean", COLUMN_SCALAR_MEAN, "col_mean"), ("max", COLUMN_LANES_MAX, "col_max")):
        for i, cand in enumerate(rewrite("schedule-column-tiles", src, kernel)):
            out[f"cols_{name}_{i}"] = cand.source
    return out


def test_column_tiles_rewrite_shape(col_rewrites: dict[str, str]) -> None:
    mean = col_rewrites["cols_mean_0"]
    assert "acc = tl.full((1, BLOCK_C), 0.0, dtype=tl.float32)" in mean
    assert "acc += tl.load(x_ptr + r * stride_m + col, mask=col_ok)  # a strided walk down the column" in mean
    assert "cols_per_program = max(16, min(256, 2048 // triton.next_power_of_2(1)))" in mean
    mx = col_rewrites["cols_max_1"]
    assert 'best = tl.full((BLOCK_M, BLOCK_C), -float("inf"), dtype=tl.float32)' in mx
    assert "tl.store(out_ptr + c, tl.max(best, axis=0, keep_dims=True) * 2.0, mask=col_ok)" in mx
    assert "8192 // triton.next_power_of_2(32)" in mx


def test_column_tiles_stay_correct(col_rewrites: dict[str, str], tmp_path) -> None:
    check_correct(col_rewrites, tmp_path)


def test_column_tiles_declines() -> None:
    from test_schedules_reduce import COLUMN_BLOCKPTR

    assert "already read coalesced" in declined("schedule-column-tiles", COLUMN_BLOCKPTR, "colscaled")
    assert "not a column reduction" in declined("schedule-column-tiles", ROWS_SOFTMAX, "softmax_rows")
    branch = COLUMN_SCALAR_MEAN.replace("    tl.store(out_ptr + col, acc / M)\n",
                                        "    if col >= 0:\n        tl.store(out_ptr + col, acc / M)\n")
    assert branch != COLUMN_SCALAR_MEAN
    assert "branches" in declined("schedule-column-tiles", branch, "col_mean")


def test_column_tiles_then_reduction_split_on_the_next_round(col_rewrites: dict[str, str], tmp_path) -> None:
    # the coalesced column tiles are the form reduction_split takes: few column blocks are split over grid axis 1
    split = rewrite("schedule-reduction-split", col_rewrites["cols_mean_0"], "col_mean")[0].source
    assert "tl.atomic_add(out_ptr + col, acc / M, mask=col_ok)" in split
    check_correct({"cols_then_split": split}, tmp_path)
