"""Schedules over the computation model for scans, column reductions and multi-pass rows: kernels written for the
test in two styles each, rewritten, then run against torch under the interpreter at sizes no block divides."""

from __future__ import annotations

import textwrap

import pytest
from recipe_helpers import check_correct, declined, rewrite, task

SCAN_RAW = task('''
    TEST_SHAPES = [{"M": 3, "N": 300}, {"M": 5, "N": 77}]
    M, N = 3, 300

    @triton.jit
    def running_max(x_ptr, y_ptr, n, stride):
        r = tl.program_id(0)
        best = -1e30
        for j in range(n):
            best = tl.maximum(best, tl.load(x_ptr + r * stride + j) * 2.0)
            tl.store(y_ptr + r * stride + j, best + 1.0)

    class Model(nn.Module):
        def forward(self, x):
            return torch.cummax(x * 2.0, dim=1).values + 1.0

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            running_max[(x.shape[0],)](x, y, x.shape[1], x.stride(0))
            return y

    def get_inputs():
        return [torch.randn(M, N)]
''')

SCAN_HELPER = task('''
    TEST_SHAPES = [{"M": 4, "N": 333}, {"M": 2, "N": 1030}]
    M, N = 4, 333

    @triton.jit
    def _row(ptr, stride):
        return ptr + tl.program_id(0) * stride

    @triton.jit
    def prefix(src, dst, n_cols, stride):
        a = _row(src, stride)
        b = _row(dst, stride)
        total = 0.0
        for k in range(0, n_cols):
            v = tl.load(a + k)
            total = total + v
            tl.store(b + k, total)

    class Model(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, dim=1)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            prefix[(x.shape[0],)](x, y, x.shape[1], x.stride(0))
            return y

    def get_inputs():
        return [torch.randn(M, N)]
''')

COLUMN_SCALAR = task('''
    TEST_SHAPES = [{"M": 41, "N": 7}, {"M": 130, "N": 3}]
    M, N = 41, 7

    @triton.jit
    def colmin(x_ptr, out_ptr, rows, s0):
        c = tl.program_id(0)
        lo = 1e30
        for r in range(rows):
            lo = tl.minimum(lo, tl.load(x_ptr + r * s0 + c))
        tl.store(out_ptr + c, lo)

    class Model(nn.Module):
        def forward(self, x):
            return x.min(dim=0).values

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[1], device=x.device, dtype=x.dtype)
            colmin[(x.shape[1],)](x, out, x.shape[0], x.stride(0))
            return out

    def get_inputs():
        return [torch.randn(M, N)]
''')

# the same kernel on fp16 columns: Triton has no fp16 atomic min, so the slices combine in an fp32 buffer
COLUMN_SCALAR_FP16 = COLUMN_SCALAR.replace("return [torch.randn(M, N)]", "return [torch.randn(M, N).half()]")

COLUMN_BLOCKPTR = task('''
    TEST_SHAPES = [{"M": 77, "N": 45}, {"M": 300, "N": 20}]
    M, N = 77, 45

    @triton.jit
    def colscaled(x_ptr, y_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
        pid = tl.program_id(0)
        acc = tl.zeros((BN,), dtype=tl.float32)
        for i in range(0, M, BM):
            blk = tl.make_block_ptr(x_ptr, (M, N), (stride_m, 1), (i, pid * BN), (BM, BN), (1, 0))
            acc += tl.sum(tl.load(blk, boundary_check=(0, 1), padding_option="zero"), axis=0)
        cols = pid * BN + tl.arange(0, BN)
        tl.store(y_ptr + cols, acc * 0.5 / M, mask=cols < N)

    class Model(nn.Module):
        def forward(self, x):
            return x.mean(dim=0) * 0.5

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty(x.shape[1], device=x.device, dtype=torch.float32)
            colscaled[(triton.cdiv(x.shape[1], 16),)](x, y, x.shape[0], x.shape[1], x.stride(0), BM=8, BN=16)
            return y

    def get_inputs():
        return [torch.randn(M, N)]
''')

ROWS_RAW = task('''
    TEST_SHAPES = [{"M": 5, "N": 333}, {"M": 2, "N": 8200}]
    M, N = 5, 333

    @triton.jit
    def rms(x_ptr, w_ptr, o_ptr, n, stride, B: tl.constexpr):
        p = tl.program_id(0)
        ss = tl.zeros((B,), dtype=tl.float32)
        for s in range(0, n, B):
            idx = s + tl.arange(0, B)
            v = tl.load(x_ptr + p * stride + idx, mask=idx < n, other=0.0)
            ss += v * v
        scale = 1.0 / tl.sqrt(tl.sum(ss, axis=0) / n + 1e-5)
        for s in range(0, n, B):
            idx = s + tl.arange(0, B)
            ok = idx < n
            v = tl.load(x_ptr + p * stride + idx, mask=ok, other=0.0)
            tl.store(o_ptr + p * stride + idx, v * scale * tl.load(w_ptr + idx, mask=ok), mask=ok)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.linspace(0.5, 1.5, N))

        def forward(self, x):
            w = torch.linspace(0.5, 1.5, x.shape[1])
            return x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + 1e-5) * w

    class ModelNew(nn.Module):
        def forward(self, x):
            w = torch.linspace(0.5, 1.5, x.shape[1])
            o = torch.empty_like(x)
            rms[(x.shape[0],)](x, w, o, x.shape[1], x.stride(0), B=64)
            return o

    def get_inputs():
        return [torch.randn(M, N)]
''')

# two sums per column (x and x*x) and a square root after them: the slices meet in a workspace and the last one
# finishes; the block is a literal at the launch and in the grid
COLUMN_STD_TWO_SUMS = task('''
    TEST_SHAPES = [{"M": 301, "N": 45}, {"M": 77, "N": 100}]
    M, N = 301, 45

    @triton.jit
    def colstd(x_ptr, out_ptr, rows, n_cols, sx, BR: tl.constexpr, BC: tl.constexpr):
        pid = tl.program_id(0)
        cols = pid * BC + tl.arange(0, BC)
        s = tl.zeros((BC,), dtype=tl.float32)
        sq = tl.zeros((BC,), dtype=tl.float32)
        for r in range(0, rows, BR):
            rr = r + tl.arange(0, BR)
            ok = (rr[:, None] < rows) & (cols[None, :] < n_cols)
            v = tl.load(x_ptr + rr[:, None] * sx + cols[None, :], mask=ok, other=0.0)
            s += tl.sum(v, axis=0)
            sq += tl.sum(v * v, axis=0)
        mean = s / rows
        tl.store(out_ptr + cols, tl.sqrt(sq / rows - mean * mean), mask=cols < n_cols)

    class Model(nn.Module):
        def forward(self, x):
            return x.std(dim=0, unbiased=False)

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[1], device=x.device, dtype=torch.float32)
            colstd[(triton.cdiv(x.shape[1], 32),)](x, out, x.shape[0], x.shape[1], x.stride(0), BR=16, BC=32)
            return out

    def get_inputs():
        return [torch.randn(M, N)]
''')

# the same with a start value the rest overwrites before reading it (a LayerNorm habit): dropped, see below
COLUMN_STD_DEAD_START = COLUMN_STD_TWO_SUMS.replace("    s = tl.zeros((BC,)", "    mean = 0\n    s = tl.zeros((BC,)")

# per-channel statistics of an NCHW batch (a scalar sum and a scalar max over a loop over the batch around a loop
# over the plane), then a second pass that normalises: the batch loop is split, the last slice runs the second pass
CHANNEL_STATS_NESTED = task('''
    TEST_SHAPES = [{"B": 3, "C": 4, "HW": 70}, {"B": 5, "C": 2, "HW": 33}]
    B, C, HW = 3, 4, 70

    @triton.jit
    def chan_norm(x_ptr, y_ptr, n_batch, n_chan, hw, BLOCK: tl.constexpr):
        c = tl.program_id(0)
        total = 0.0
        peak = float("-inf")
        for n in range(0, n_batch):
            for h in range(0, hw, BLOCK):
                offs = h + tl.arange(0, BLOCK)
                v = tl.load(x_ptr + (n * n_chan + c) * hw + offs, mask=offs < hw, other=0.0)
                total += tl.sum(v, axis=0)
                peak = tl.maximum(peak, tl.max(tl.where(offs < hw, v, float("-inf")), axis=0))
        mean = total / (n_batch * hw)
        for n in range(0, n_batch):
            for h in range(0, hw, BLOCK):
                offs = h + tl.arange(0, BLOCK)
                v = tl.load(x_ptr + (n * n_chan + c) * hw + offs, mask=offs < hw, other=0.0)
                tl.store(y_ptr + (n * n_chan + c) * hw + offs, (v - mean) / peak, mask=offs < hw)

    class Model(nn.Module):
        def forward(self, x):
            return (x - x.mean(dim=(0, 2), keepdim=True)) / x.amax(dim=(0, 2), keepdim=True)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            chan_norm[(x.shape[1],)](x, y, x.shape[0], x.shape[1], x.shape[2], BLOCK=32)
            return y

    def get_inputs():
        return [torch.rand(B, C, HW) + 0.5]
''')

# a two-pass column variance (the mean, then the sum of squared deviations from it) with 2-D accumulators: both
# passes split, one launch each, and a third that stores
COLUMN_VAR_TWO_PASS = task('''
    TEST_SHAPES = [{"M": 203, "N": 37}, {"M": 50, "N": 70}]
    M, N = 203, 37

    @triton.jit
    def colvar(x_ptr, mean_ptr, var_ptr, rows, cols_n, sr, BR: tl.constexpr, BC: tl.constexpr):
        pid = tl.program_id(0)
        cols = pid * BC + tl.arange(0, BC)
        acc = tl.zeros((BR, BC), dtype=tl.float32)
        for r0 in range(0, rows, BR):
            rr = r0 + tl.arange(0, BR)
            ok = (rr[:, None] < rows) & (cols[None, :] < cols_n)
            acc += tl.load(x_ptr + rr[:, None] * sr + cols[None, :], mask=ok, other=0.0)
        mean = tl.sum(acc, axis=0) / rows
        # second pass: squared deviations from the mean
        dev = tl.zeros((BR, BC), dtype=tl.float32)
        for r0 in range(0, rows, BR):
            rr = r0 + tl.arange(0, BR)
            ok = (rr[:, None] < rows) & (cols[None, :] < cols_n)
            v = tl.load(x_ptr + rr[:, None] * sr + cols[None, :], mask=ok, other=0.0)
            d = tl.where(ok, v - mean[None, :], 0.0)
            dev += d * d
        tl.store(mean_ptr + cols, mean, mask=cols < cols_n)
        tl.store(var_ptr + cols, tl.sum(dev, axis=0) / (rows - 1), mask=cols < cols_n)

    class Model(nn.Module):
        def forward(self, x):
            return x.mean(dim=0), x.var(dim=0)

    class ModelNew(nn.Module):
        def forward(self, x):
            mean = torch.empty(x.shape[1], device=x.device, dtype=torch.float32)
            var = torch.empty(x.shape[1], device=x.device, dtype=torch.float32)
            colvar[(triton.cdiv(x.shape[1], 16),)](x, mean, var, x.shape[0], x.shape[1], x.stride(0), BR=8, BC=16)
            return mean, var

    def get_inputs():
        return [torch.randn(M, N)]
''')

# few long rows: a mean per row in fp16 out of a block accumulator, and a max per row by a scalar loop
ROW_MEAN_FP16 = task('''
    TEST_SHAPES = [{"B": 2, "N": 3001}, {"B": 3, "N": 777}]
    B, N = 2, 3001

    @triton.jit
    def row_mean(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + r * stride + cols, mask=cols < n, other=0.0).to(tl.float32)
        total = tl.sum(acc, axis=0)
        tl.store(out_ptr + r, (total / n).to(tl.float16))

    class Model(nn.Module):
        def forward(self, x):
            return x.float().mean(dim=1).half()

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
            row_mean[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=128)
            return out

    def get_inputs():
        return [torch.randn(B, N).half()]
''')

ROW_MAX_SCALAR = task('''
    TEST_SHAPES = [{"B": 2, "N": 1500}, {"B": 5, "N": 301}]
    B, N = 2, 1500

    @triton.jit
    def row_max(x_ptr, out_ptr, n, stride):
        r = tl.program_id(0)
        best = float("-inf")
        for j in range(n):
            best = tl.maximum(best, tl.load(x_ptr + r * stride + j))
        tl.store(out_ptr + r, best)

    class Model(nn.Module):
        def forward(self, x):
            return x.amax(dim=1)

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
            row_max[(x.shape[0],)](x, out, x.shape[1], x.stride(0))
            return out

    def get_inputs():
        return [torch.randn(B, N)]
''')

ROWS_BLOCKPTR_HELPER = task('''
    TEST_SHAPES = [{"M": 6, "N": 129}, {"M": 3, "N": 1000}]
    M, N = 6, 129

    @triton.jit
    def _shifted(v, m):
        return tl.exp(v - m)

    @triton.jit
    def smax(inp, out, n_cols, row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        base = inp + row * row_stride
        m = tl.full((BLOCK,), -float("inf"), dtype=tl.float32)
        for c in range(0, n_cols, BLOCK):
            offs = c + tl.arange(0, BLOCK)
            m = tl.maximum(m, tl.load(base + offs, mask=offs < n_cols, other=-float("inf")))
        mx = tl.max(m, axis=0)
        d = tl.zeros((BLOCK,), dtype=tl.float32)
        for c in range(0, n_cols, BLOCK):
            offs = c + tl.arange(0, BLOCK)
            d += tl.where(offs < n_cols, _shifted(tl.load(base + offs, mask=offs < n_cols, other=-float("inf")), mx), 0.0)
        den = tl.sum(d, axis=0)
        for c in range(0, n_cols, BLOCK):
            offs = c + tl.arange(0, BLOCK)
            x = tl.load(base + offs, mask=offs < n_cols, other=-float("inf"))
            tl.store(out + row * row_stride + offs, _shifted(x, mx) / den, mask=offs < n_cols)

    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=1)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            smax[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=128)
            return y

    def get_inputs():
        return [torch.randn(M, N)]
''')


# the scalar form of an online pair: a row's logsumexp one element at a time (one slot per slice)
ROW_LSE_SCALAR = ROW_MAX_SCALAR.replace("        best = tl.maximum(best, tl.load(x_ptr + r * stride + j))\n", (
    "        v = tl.load(x_ptr + r * stride + j)\n        new = tl.maximum(best, v)\n"
    "        total = total * tl.exp(best - new) + tl.exp(v - new)\n        best = new\n")).replace(
    "best = float(\"-inf\")\n", "best = float(\"-inf\")\n    total = 0.0\n").replace(
    "tl.store(out_ptr + r, best)", "tl.store(out_ptr + r, best + tl.log(total))").replace(
    "return x.amax(dim=1)", "return torch.logsumexp(x, dim=1)")

# an online logsumexp over the rows of each column block (a running max and a sum kept relative to it, rescaled by
# exp2 through a named factor, no -inf guard): each slice keeps its own (max, sum), the last slice folds them with
# the loop's own step
COLUMN_LSE_ONLINE = task('''
    TEST_SHAPES = [{"M": 203, "N": 37}, {"M": 9, "N": 70}]
    M, N = 203, 37

    @triton.jit
    def col_lse(x_ptr, out_ptr, n_rows, n_cols, stride_m, BM: tl.constexpr, BN: tl.constexpr):
        cols = tl.program_id(0) * BN + tl.arange(0, BN)
        run_max = tl.full((BN,), float("-inf"), tl.float32)
        run_sum = tl.zeros((BN,), dtype=tl.float32)
        for start in range(0, n_rows, BM):
            rows = start + tl.arange(0, BM)
            ok = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
            tile = tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=ok, other=float("-inf"))
            new_max = tl.maximum(run_max, tl.max(tile, axis=0))
            alpha = tl.exp2((run_max - new_max) * 1.4426950408889634)
            run_sum = alpha * run_sum + tl.sum(tl.exp2((tile - new_max[None, :]) * 1.4426950408889634), axis=0)
            run_max = new_max
        tl.store(out_ptr + cols, run_max + tl.log(run_sum), mask=cols < n_cols)

    class Model(nn.Module):
        def forward(self, x):
            return torch.logsumexp(x, dim=0)

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[1], device=x.device, dtype=torch.float32)
            col_lse[(triton.cdiv(x.shape[1], 16),)](x, out, x.shape[0], x.shape[1], x.stride(0), BM=8, BN=16)
            return out

    def get_inputs():
        return [torch.randn(M, N)]
''')

# a softmax over the rows of each column (dim 0): the online statistics, then a pass that writes every element;
# kernel fission: launch 1 stores each slice's pair, launch 2 folds them and normalises in slices
COLUMN_SOFTMAX_ONLINE = task('''
    TEST_SHAPES = [{"M": 203, "N": 37}, {"M": 9, "N": 70}]
    M, N = 203, 37

    @triton.jit
    def col_softmax(x_ptr, y_ptr, n_rows, n_cols, BM: tl.constexpr, BN: tl.constexpr):
        cols = tl.program_id(0) * BN + tl.arange(0, BN)
        hi = tl.full((BN,), float("-inf"), tl.float32)
        den = tl.zeros((BN,), dtype=tl.float32)
        for r in range(0, n_rows, BM):
            rows = r + tl.arange(0, BM)
            ok = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
            v = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=ok, other=float("-inf"))
            hi_new = tl.maximum(tl.max(v, axis=0), hi)
            safe = tl.where(hi_new == float("-inf"), 0.0, hi_new)
            den = den * tl.exp(hi - safe) + tl.sum(tl.exp(v - safe[None, :]), axis=0)
            hi = hi_new
        for r in range(0, n_rows, BM):
            rows = r + tl.arange(0, BM)
            ok = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
            v = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=ok, other=0.0)
            tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], tl.exp(v - hi[None, :]) / den[None, :], mask=ok)

    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=0)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            col_softmax[(triton.cdiv(x.shape[1], 16),)](x, y, x.shape[0], x.shape[1], BM=8, BN=16)
            return y

    def get_inputs():
        return [torch.randn(M, N)]
''')


@pytest.fixture(scope="module")
def rewrites() -> dict[str, str]:
    out = {}
    for name, src, kernel, schedule in (
        ("scan_raw", SCAN_RAW, "running_max", "schedule-blocked-scan"),
        ("scan_helper", SCAN_HELPER, "prefix", "schedule-blocked-scan"),
        ("column_scalar", COLUMN_SCALAR, "colmin", "schedule-reduction-split"),
        ("column_scalar_fp16", COLUMN_SCALAR_FP16, "colmin", "schedule-reduction-split"),
        ("column_blockptr", COLUMN_BLOCKPTR, "colscaled", "schedule-reduction-split"),
        ("row_mean_fp16", ROW_MEAN_FP16, "row_mean", "schedule-reduction-split"),
        ("row_max_scalar", ROW_MAX_SCALAR, "row_max", "schedule-reduction-split"),
        ("column_std", COLUMN_STD_TWO_SUMS, "colstd", "schedule-reduction-split"),
        ("channel_stats", CHANNEL_STATS_NESTED, "chan_norm", "schedule-reduction-split"),
        ("rms_split", ROWS_RAW, "rms", "schedule-reduction-split"),
        ("softmax_passes", ROWS_BLOCKPTR_HELPER, "smax", "schedule-reduction-split"),
        ("column_var_passes", COLUMN_VAR_TWO_PASS, "colvar", "schedule-reduction-split"),
        ("column_std_dead_start", COLUMN_STD_DEAD_START, "colstd", "schedule-reduction-split"),
        ("column_lse_online", COLUMN_LSE_ONLINE, "col_lse", "schedule-reduction-split"),
        ("row_lse_scalar", ROW_LSE_SCALAR, "row_max", "schedule-reduction-split"),
        ("column_softmax_online", COLUMN_SOFTMAX_ONLINE, "col_softmax", "schedule-reduction-split"),
        ("column_sqrt", COLUMN_BLOCKPTR.replace("acc * 0.5 / M", "tl.sqrt(acc)").replace(
            "x.mean(dim=0) * 0.5", "x.sum(dim=0).sqrt()").replace("torch.randn(M, N)", "torch.rand(M, N)"),
         "colscaled", "schedule-reduction-split"),
        ("rows_raw", ROWS_RAW, "rms", "schedule-row-on-chip"),
        ("rows_helper", ROWS_BLOCKPTR_HELPER, "smax", "schedule-row-on-chip"),
    ):
        for i, cand in enumerate(rewrite(schedule, src, kernel)):
            out[f"{name}_{i}"] = cand.source
    return out


def test_rewrite_shape(rewrites: dict[str, str]) -> None:
    scan = rewrites["scan_raw_0"]
    assert "def running_max(x_ptr, y_ptr, n, stride, SCAN_BLOCK: tl.constexpr):" in scan
    assert "best_scan = tl.maximum(best, tl.associative_scan(best_step, 0, _scan_max))" in scan
    assert "tl.store(y_ptr + r * stride + j, best_scan + 1.0, mask=j_ok)" in scan  # the user's epilogue kept
    assert "running_max[(x.shape[0],)](x, y, x.shape[1], x.stride(0), SCAN_BLOCK=256)" in scan
    assert "total_scan = total + tl.cumsum(total_step, axis=0)" in rewrites["scan_helper_1"]
    col = rewrites["column_scalar_0"]
    assert "tl.atomic_min(out_ptr + c, lo)" in col and 'combined.fill_(float("inf"))' in col
    assert "combined = out if out.dtype == torch.float32 else torch.empty_like(out, dtype=torch.float32)" in col
    assert "colmin[(x.shape[1], row_splits)](x, combined, x.shape[0], x.stride(0))" in col
    assert "if combined is not out:\n            out.copy_(combined)" in col
    assert "tl.atomic_add(y_ptr + cols, acc * 0.5 / M, mask=cols < N)" in rewrites["column_blockptr_0"]
    row = rewrites["row_mean_fp16_0"]  # a row reduction over few long rows: the same split of its loop
    assert "tl.atomic_add(out_ptr + r, total / n)" in row  # the partials meet in fp32, rounded once after
    assert "row_mean[(x.shape[0], row_splits)](x, combined, x.shape[1], x.stride(0), BLOCK=128)" in row
    assert "tl.atomic_max(out_ptr + r, best)" in rewrites["row_max_scalar_0"]
    std = rewrites["column_std_0"]  # two partials through a workspace; the last slice runs the user's epilogue
    assert "tl.atomic_add(s_partials + slot, s, sem=\"relaxed\")" in std
    assert "tl.atomic_add(sq_partials + slot, sq, sem=\"relaxed\")" in std
    assert "finishes = tl.atomic_add(arrivals + tl.program_id(0), 1) == tl.num_programs(1) - 1" in std
    assert "            sq = tl.load(sq_partials + slot, cache_modifier=\".cg\")" in std
    assert "    if finishes:\n        mean = s / rows\n" in std
    # the block literal of the launch and the grid is hoisted into one local the workspace size reads too
    assert "bc = 32  # one value for the launch and the workspace size" in std
    assert "colstd[(triton.cdiv(x.shape[1], bc), row_splits)](" in std and "BR=16, BC=bc," in std
    assert "s_partials = torch.zeros(triton.cdiv(x.shape[1], bc) * bc if row_splits > 1 else 1" in std
    stats = rewrites["channel_stats_0"]  # the outer (batch) loop is split; scalar partials, one slot per program
    assert "for n in range(n_first, tl.minimum(n_first + n_slice, n_batch)):" in stats
    assert "tl.atomic_max(peak_partials + slot, peak, sem=\"relaxed\")" in stats
    assert "peak_partials = torch.full((x.shape[1] if row_splits > 1 else 1,), float(\"-inf\")" in stats
    # the pass after the statistics stores every element: kernel fission at the combine. One kernel, launched
    # twice (PHASE 1 adds the slices' partials, PHASE 2 reads the totals) with the normalising loop split too
    assert "arrivals" not in stats and "PHASE: tl.constexpr" in stats
    assert "        if row_splits > 1:  # one launch per pass over the slices, then one that finishes" in stats
    assert [stats.count(f"peak_partials=peak_partials, PHASE={p})") for p in (0, 1, 2)] == [1, 1, 1]
    assert stats.count("for n in range(n_first, tl.minimum(n_first + n_slice, n_batch)):") == 2
    assert "    if PHASE > 1:  # a later launch: every slice reads the totals back\n        slot = tl.program_id(0)\n" \
        "        total = tl.load(total_partials + slot)\n" in stats
    assert "    if PHASE == 0 or PHASE > 1:\n        mean = total / (n_batch * hw)\n" in stats
    rms = rewrites["rms_split_0"]  # a row sum of squares, then a pass that scales every element
    assert "for s in range(s_first, tl.minimum(s_first + s_slice, n), B):" in rms and rms.count("s_first =") == 2
    # a softmax over few long rows: max, then the sum of exponentials, then the normalising pass; each reduction
    # is a launch of its own, the last launch writes in slices
    smax = rewrites["softmax_passes_0"]
    assert [smax.count(f"d_partials=d_partials, PHASE={p})") for p in (0, 1, 2, 3)] == [1, 1, 1, 1]
    assert "        if PHASE == 0 or PHASE == 2:\n            # this pass is split over grid axis 1 too\n" in smax
    assert "            tl.atomic_add(d_partials + slot, d, sem=\"relaxed\")" in smax
    var = rewrites["column_var_passes_0"]  # the comment above the second pass stays with it
    assert "        # second pass: squared deviations from the mean\n        dev = tl.zeros" in var
    assert "            dev = tl.load(dev_partials + slot)\n" in var and "PHASE=3)" in var
    dead = rewrites["column_std_dead_start_0"]
    assert COLUMN_STD_DEAD_START != COLUMN_STD_TWO_SUMS and "mean = 0\n" not in dead
    rows = rewrites["rows_raw_0"]
    assert rows.count("v = x_tile") == 2 and "for s in range" not in rows.split("def rms_multipass")[0]
    assert "B=triton.next_power_of_2(x.shape[1]), num_warps=8)" in rows
    assert "rms_multipass[(x.shape[0],)](x, w, o, x.shape[1], x.stride(0), B=64)" in rows


def test_online_pairs_fold_with_the_users_step(rewrites: dict[str, str]) -> None:
    lse = rewrites["column_lse_online_0"]  # no loop after it: the last slice to arrive folds and finishes
    assert "tl.store(run_max_partials + slot, run_max)" in lse and "tl.store(run_sum_partials + slot, run_sum)" in lse
    assert "slot = (tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)) * BN + tl.arange(0, BN)" in lse
    fold = lse[lse.index("busy_slices = "):lse.index("    if finishes:\n")]
    assert "new_max = tl.maximum(run_max, run_max_slice)" in fold  # the user's step, a slice's max for the block's
    assert "alpha = tl.exp2((run_max - new_max) * 1.4426950408889634)" in fold  # its factor, copied
    assert "run_sum = run_sum * alpha + run_sum_slice * tl.exp2((run_max_slice - new_max) * 1.4426950408889634)" \
        in fold
    assert "run_max_partials = torch.empty(" in lse and "* row_splits if row_splits > 1 else 1" in lse
    # a factor built in two statements: the chain is followed to the old maximum, and both are copied
    chained = COLUMN_LSE_ONLINE.replace(
        "alpha = tl.exp2((run_max - new_max) * 1.4426950408889634)",
        "gap = run_max - new_max\n        alpha = tl.exp2(gap * 1.4426950408889634)")
    assert chained != COLUMN_LSE_ONLINE
    folded = rewrite("schedule-reduction-split", chained, "col_lse")[0].source
    assert "run_sum_slice * tl.exp2((run_max_slice - new_max) * 1.4426950408889634)" in folded
    scalar = rewrites["row_lse_scalar_0"]
    assert "total = total * tl.exp(best - new) + total_slice * tl.exp(best_slice - new)" in scalar
    assert "slot = (tl.program_id(0) * tl.num_programs(1) + tl.program_id(1))\n" in scalar
    soft = rewrites["column_softmax_online_0"]  # a normalising pass follows: one launch per pass
    assert "PHASE: tl.constexpr" in soft and "arrivals" not in soft
    assert "tl.store(den_partials + slot, den)" in soft and "hi_new = tl.maximum(hi_slice, hi)" in soft
    assert "den = den * tl.exp(hi - safe) + den_slice * tl.exp(hi_slice - tl.where(hi_new == float(\"-inf\"), " \
        "0.0, hi_new))\n" in soft


def test_stay_correct(rewrites: dict[str, str], tmp_path) -> None:
    # no test size is a multiple of any block; ROWS_RAW's 8200-column shape takes the multi-pass fallback and
    # the column kernels run with many empty slices (more slices than row blocks)
    check_correct({**rewrites, "orig_scan": SCAN_RAW, "orig_rows": ROWS_RAW}, tmp_path)


def _under_if(source: str, line: str, nth: int) -> str:
    """The kernel with everything from the nth occurrence of `line` to the kernel's end moved under `if True:`."""
    at = -1
    for _ in range(nth):
        at = source.index(line, at + 1)
    end = source.index("\n\nclass Model")
    indent = line[: len(line) - len(line.lstrip())]
    return source[:at] + f"{indent}if True:\n" + textwrap.indent(source[at:end], "    ") + source[end:]


def test_declines() -> None:
    new_blk = "        blk = tl.make_block_ptr(x_ptr, (M, N), (stride_m, 1), (i, pid * BN), (BM, BN), (1, 0))\n"
    blocked = SCAN_HELPER.replace("for k in range(0, n_cols):", "for k in range(0, n_cols, 1):")
    assert rewrite("schedule-blocked-scan", blocked, "prefix")  # a step of 1 is still a scalar loop
    exclusive = SCAN_HELPER.replace("        v = tl.load(a + k)\n", "        v = tl.load(a + k) + total * 0\n")
    assert "read before its update" in declined("schedule-blocked-scan", exclusive, "prefix")
    assert "not a scan" in declined("schedule-blocked-scan", ROWS_RAW, "rms")
    sqrt = COLUMN_BLOCKPTR.replace("acc * 0.5 / M", "tl.sqrt(acc)")
    # Ascend: the workspace combine needs cross-core ordering no device here checks; the direct form stays
    why = declined("schedule-reduction-split", sqrt, "colscaled", target="ascend910b3")
    assert "does not combine" in why and "Ascend" in why
    assert rewrite("schedule-reduction-split", COLUMN_BLOCKPTR, "colscaled", target="ascend910b3")
    not_identity = COLUMN_BLOCKPTR.replace("acc = tl.zeros((BN,), dtype=tl.float32)", "acc = tl.full((BN,), 1.0, tl.float32)")
    assert "identity" in declined("schedule-reduction-split", not_identity, "colscaled")
    advanced = COLUMN_BLOCKPTR.replace(new_blk, "").replace(
        "    for i in range(0, M, BM):\n",
        "    blk = tl.make_block_ptr(x_ptr, (M, N), (stride_m, 1), (0, pid * BN), (BM, BN), (1, 0))\n"
        "    for i in range(0, M, BM):\n").replace(
        "axis=0)\n    cols", "axis=0)\n        blk = tl.advance(blk, (BM, 0))\n    cols")
    assert "advances blk" in declined("schedule-reduction-split", advanced, "colscaled")
    stored_early = CHANNEL_STATS_NESTED.replace("    c = tl.program_id(0)\n",
                                                "    c = tl.program_id(0)\n    tl.store(y_ptr + c, 0.0)\n")
    assert "writes memory before" in declined("schedule-reduction-split", stored_early, "chan_norm")
    assert stored_early != CHANNEL_STATS_NESTED
    # a statistics loop followed by a pass that stores values free of the partial (a normalisation): never the
    # direct atomics (each slice would add its copy); the workspace form finishes it in the last slice instead
    two_pass = rewrite("schedule-reduction-split", ROWS_RAW.replace("scale = 1.0 / tl.sqrt(tl.sum(ss, axis=0) / n + 1e-5)",
                                                                     "scale = tl.sum(ss, axis=0) / n"), "rms")
    assert all("workspace" in c.rationale and "tl.atomic_add(o_ptr" not in c.source for c in two_pass)
    # a second pass whose running value is not a plain sum cannot be split: the last slice to arrive runs it alone
    rescaled = ROWS_BLOCKPTR_HELPER.replace("d += tl.where(", "d = d * 0.5 + tl.where(")
    assert rescaled != ROWS_BLOCKPTR_HELPER
    smax = rewrite("schedule-reduction-split", rescaled, "smax")[0]
    assert "the last slice finishes" in smax.title and "is not a plain sum update of `d`" in smax.rationale
    assert "PHASE" not in smax.source
    # the rest repeats in every slice of the second launch: an atomic there, or a loop under an `if`, keeps it alone
    for why, changed in (
        ("uses atomics", CHANNEL_STATS_NESTED.replace("mean = total / (n_batch * hw)\n",
                                                      "mean = total / (n_batch * hw)\n    tl.atomic_add(y_ptr, 0.0)\n")),
        ("nested in a compound statement", _under_if(CHANNEL_STATS_NESTED, "    for n in range(0, n_batch):\n", 2)),
    ):
        assert changed != CHANNEL_STATS_NESTED, why
        alone = rewrite("schedule-reduction-split", changed, "chan_norm")[0]
        assert "the last slice finishes" in alone.title and why in alone.rationale, (why, alone.rationale)
    last_offs = COLUMN_STD_TWO_SUMS.replace("tl.store(out_ptr + cols, tl.sqrt(sq / rows - mean * mean), mask=cols < n_cols)",
                                            "tl.store(out_ptr + cols + tl.max(rr, axis=0) * 0, tl.sqrt(sq / rows - mean * mean), mask=cols < n_cols)")
    assert last_offs != COLUMN_STD_TWO_SUMS
    assert "rr is set in the reduction loop and read after it" in declined("schedule-reduction-split", last_offs, "colstd")
    int_max = CHANNEL_STATS_NESTED.replace('peak = float("-inf")', 'peak = tl.full((), -1, tl.int32)')
    assert "integer max" in declined("schedule-reduction-split", int_max, "chan_norm")
    # a running sum rescaled as it goes (online log-sum-exp) is no plain sum: its slices would not add up
    # an online pair whose factor reads the block's values is no rescale between two maxima
    block_factor = ROW_LSE_SCALAR.replace("total * tl.exp(best - new)", "total * tl.exp(v - new)")
    assert block_factor != ROW_LSE_SCALAR
    assert "reads values of the block" in declined("schedule-reduction-split", block_factor, "row_max")
    by_step = ROW_LSE_SCALAR.replace("total * tl.exp(best - new)", "total * tl.exp(best - new + j * 0.0)")
    assert by_step != ROW_LSE_SCALAR  # the loop variable is the block's too
    assert "reads values of the block" in declined("schedule-reduction-split", by_step, "row_max")
    assert "not a column reduction or a row reduction" in declined("schedule-reduction-split", SCAN_RAW, "running_max")
    steps = ROWS_RAW.replace("for s in range(0, n, B):\n        idx = s + tl.arange(0, B)\n        ok",
                             "for s in range(0, n, 2 * B):\n        idx = s + tl.arange(0, B)\n        ok")
    assert "different ranges" in declined("schedule-row-on-chip", steps, "rms")
    gather = ROWS_RAW.replace("tl.load(w_ptr + idx, mask=ok)", "tl.load(w_ptr + tl.load(x_ptr + idx).to(tl.int32))")
    assert "not affine" in declined("schedule-row-on-chip", gather, "rms")
    assert "not a row reduction" in declined("schedule-row-on-chip", SCAN_RAW, "running_max")
