"""Row logsumexp of a (N_ROWS, N_COLS) fp32 tensor: out[i] = log(sum_j exp(x[i, j])), output shape (N_ROWS,).

Computed stably as m + log(sum_j exp(x[i, j] - m)) with m = max_j x[i, j].

Known problems:
_logsumexp_rows_kernel: one program per row = only 256 programs for 256 x 262144 elements; on a GPU with ~132 SMs that is < 2 waves of very long serial loops, with no split of a row across programs (no split-K style two-stage reduction).
_logsumexp_rows_kernel: two passes over each row (first the max loop, then the sum-of-exp loop), so x (256 MB) is read twice from global memory instead of once with an online max/rescaled sum.
ModelNew.forward: BLOCK = 1024 and default num_warps/num_stages chosen by hand, no autotuning; each loop iteration moves only 4 KB per program.
_logsumexp_rows_kernel: uses tl.exp/tl.log instead of exp2/log2 with log2(e) pre-scaling.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N_ROWS = 256
N_COLS = 262144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.logsumexp(x, dim=-1)


@triton.jit
def _logsumexp_rows_kernel(x_ptr, out_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = x_ptr + row * stride_x
    offs = tl.arange(0, BLOCK)

    # pass 1: row max
    m_vec = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=float("-inf"))
        m_vec = tl.maximum(m_vec, x)
    m = tl.max(m_vec, axis=0)

    # pass 2: sum of exp(x - m)
    s_vec = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        mask = cols < n_cols
        x = tl.load(row_ptr + cols, mask=mask, other=float("-inf"))
        s_vec += tl.where(mask, tl.exp(x - m), 0.0)
    s = tl.sum(s_vec, axis=0)
    tl.store(out_ptr + row, m + tl.log(s))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols).contiguous()
        n_rows = x2.shape[0]
        out = torch.empty(n_rows, dtype=x.dtype, device=x.device)
        BLOCK = 1024
        _logsumexp_rows_kernel[(n_rows,)](x2, out, n_cols, x2.stride(0), BLOCK=BLOCK)
        return out.reshape(x.shape[:-1])


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 4, "N_COLS": 2048},
    {"N_ROWS": 3, "N_COLS": 3001},
    {"N_ROWS": 5, "N_COLS": 100},
]
