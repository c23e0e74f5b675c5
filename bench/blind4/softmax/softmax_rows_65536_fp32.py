"""Row softmax over very long rows: out = torch.softmax(x, dim=-1) for x (N_ROWS, N_COLS) fp32.

Known problems:
- lines 51-56: second pass re-reads the whole 256 KB row from global memory (2 reads + 1 write of x instead of 1 + 1), relying on L2 to catch the re-read.
- line 65: only 512 programs (one per row) for 132 SMs, each walking 65536 elements serially; few waves with tail imbalance, no split of a row across programs.
- lines 42-43, line 55: online rescaling costs an extra exp per element in pass 1 (3 exp per element overall).
- line 64: BLOCK=4096 with default num_warps=4 means 32 fp32 per thread for each of m, s, v (register pressure); not tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 512
N_COLS = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


@triton.jit
def softmax_long_row_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    # One program per row. Pass 1: online max / sum of exp over the row in BLOCK chunks.
    # Pass 2: re-read the row, normalize and store.
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    offs = tl.arange(0, BLOCK)

    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + offs
        v = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, v)
        # guard lanes that have only seen -inf so far (avoid -inf - -inf = nan)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        p = tl.where(m_new == float("-inf"), 0.0, tl.exp(v - m_new))
        s = s * alpha + p
        m = m_new
    row_max = tl.max(m, axis=0)
    scale = tl.where(m == float("-inf"), 0.0, tl.exp(m - row_max))
    row_sum = tl.sum(s * scale, axis=0)
    inv = 1.0 / row_sum

    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + offs
        mask = cols < n_cols
        v = tl.load(x_row + cols, mask=mask, other=float("-inf"))
        y = tl.exp(v - row_max) * inv
        tl.store(out_row + cols, y, mask=mask)


def softmax_rows(x):
    assert x.dim() == 2
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x, device=x.device)
    BLOCK = 4096
    grid = (n_rows,)
    softmax_long_row_kernel[grid](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_rows(x)


def get_inputs():
    x = torch.randn(N_ROWS, N_COLS)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 4, "N_COLS": 8192},
    {"N_ROWS": 37, "N_COLS": 5000},
    {"N_ROWS": 3, "N_COLS": 129},
]
