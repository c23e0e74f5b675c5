"""Log-cumsum-exp along rows.

out = torch.logcumsumexp(x, dim=1), x: (N_ROWS, N_COLS) fp32, out: (N_ROWS, N_COLS) fp32.

Known problems:
- lines 25, 37: the scan combine is logaddexp, so every one of the log2(BLOCK) scan steps costs an exp and a
  log per element (a chunk-max + exp + plain cumsum formulation would need one exp and one log per element)
- lines 49, 33: one program per row walks the row in BLOCK=1024 chunks sequentially; BLOCK and num_warps fixed
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 4096
N_COLS = 4096


@triton.jit
def _logaddexp(a, b):
    mx = tl.maximum(a, b)
    mn = tl.minimum(a, b)
    # both -inf: result -inf (avoid -inf - -inf = nan)
    mx_safe = tl.where(mx == float("-inf"), 0.0, mx)
    return mx + tl.log(1.0 + tl.exp(mn - mx_safe))


@triton.jit
def _logcumsumexp_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * n_cols
    carry = tl.full((), float("-inf"), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf")).to(tl.float32)
        scan = tl.associative_scan(x, 0, _logaddexp)
        out = _logaddexp(scan, carry)
        tl.store(out_ptr + base + cols, out, mask=mask)
        # logcumsumexp is non-decreasing along the row, so the running total is the max
        carry = tl.max(tl.where(mask, out, float("-inf")), axis=0)


def logcumsumexp_rows(x):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = min(1024, triton.next_power_of_2(n_cols))
    _logcumsumexp_kernel[(n_rows,)](x, out, n_cols, BLOCK=BLOCK, num_warps=4)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.logcumsumexp(x, dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return logcumsumexp_rows(x)


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "N_COLS": 1000},
    {"N_ROWS": 8, "N_COLS": 2500},
]
