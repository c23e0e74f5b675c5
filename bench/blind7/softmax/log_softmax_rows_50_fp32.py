"""Log-softmax over many short rows.

Computes F.log_softmax(x, dim=1) for x of shape (M, 50) float32; output (M, 50) float32.
Benchmark shape: M=1048576, N=50 (~210 MB in, ~210 MB out).

Known problems:
- Rows of 50 are padded to BLOCK_N=64 lanes, so 22% of the lanes in every tile are
  masked off and the 200-byte row pitch makes loads/stores poorly aligned for
  vectorisation.
- A fixed BLOCK_R=32 rows per program / num_warps=4; not tuned, and each program
  handles one tile only (no persistent loop over tiles).
- Uses tl.exp / tl.log rather than exp2/log2 with folded constants.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

M = 1048576
N = 50


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.log_softmax(x, dim=1)


@triton.jit
def _log_softmax_rows_kernel(x_ptr, y_ptr, n_rows, n_cols,
                             BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None].to(tl.int64) * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf"))
    mx = tl.max(x, axis=1)
    # padded rows (beyond n_rows) are all -inf; keep them finite to avoid NaN noise
    mx = tl.where(mx == float("-inf"), 0.0, mx)
    z = x - mx[:, None]
    e = tl.where(mask, tl.exp(z), 0.0)
    s = tl.sum(e, axis=1)
    s = tl.where(s == 0.0, 1.0, s)
    y = z - tl.log(s)[:, None]
    tl.store(y_ptr + offs, y, mask=mask)


def log_softmax_rows(x):
    x = x.contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    BLOCK_R = 32
    BLOCK_N = triton.next_power_of_2(n)
    grid = (triton.cdiv(m, BLOCK_R),)
    _log_softmax_rows_kernel[grid](x, y, m, n, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return log_softmax_rows(x)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 1000, "N": 50},
    {"M": 37, "N": 50},
    {"M": 129, "N": 50},
    {"M": 100, "N": 33},
]
