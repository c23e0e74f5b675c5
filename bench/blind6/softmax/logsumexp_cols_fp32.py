"""Column-wise logsumexp: out = torch.logsumexp(x, dim=0) for x (ROWS=8192, COLS=4096) fp32 -> (COLS,) fp32.

Known problems:
- lines 57-58: BLOCK_C=64 gives only COLS/64 = 64 programs for a 128 MB input on a 132-SM GPU; each program walks all 8192 rows serially (256 iterations), so the GPU is underfilled and far from memory bandwidth; rows should also be split across programs (partial max/sum then combine).
- lines 37-47: small 32x64 tile per iteration (256 B contiguous per row) with a loop-carried max/rescale dependence, little memory-level parallelism per program.
- lines 46, 50: tl.exp/tl.log instead of exp2/log2 with pre-scaled inputs (minor).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 8192
COLS = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.logsumexp(x, dim=0)


@triton.jit
def logsumexp_cols_kernel(x_ptr, out_ptr, n_rows, n_cols,
                          stride_r, stride_c,
                          BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    offs_c = pid * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = offs_c < n_cols
    offs_r = tl.arange(0, BLOCK_R)

    # running max and running sum of exp(x - max) per column (online logsumexp)
    m = tl.full((BLOCK_C,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r0 in range(0, n_rows, BLOCK_R):
        rr = r0 + offs_r
        ptrs = x_ptr + rr[:, None] * stride_r + offs_c[None, :] * stride_c
        mask = (rr[:, None] < n_rows) & col_mask[None, :]
        x = tl.load(ptrs, mask=mask, other=float("-inf"))
        blk_max = tl.max(x, axis=0)
        m_new = tl.maximum(m, blk_max)
        # guard the all -inf case (masked-out columns) against (-inf) - (-inf) = nan
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m_safe[None, :]), axis=0)
        m = m_new

    m_safe = tl.where(m == float("-inf"), 0.0, m)
    out = m_safe + tl.log(s)
    tl.store(out_ptr + offs_c, out, mask=col_mask)


def triton_logsumexp_cols(x):
    n_rows, n_cols = x.shape
    out = torch.empty((n_cols,), device=x.device, dtype=torch.float32)
    BLOCK_R, BLOCK_C = 32, 64
    grid = (triton.cdiv(n_cols, BLOCK_C),)
    logsumexp_cols_kernel[grid](
        x, out, n_rows, n_cols,
        x.stride(0), x.stride(1),
        BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return triton_logsumexp_cols(x)


def get_inputs():
    return [torch.randn(ROWS, COLS, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 128, "COLS": 256},
    {"ROWS": 100, "COLS": 129},
    {"ROWS": 37, "COLS": 37},
]
