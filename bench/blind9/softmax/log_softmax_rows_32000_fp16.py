"""Row log-softmax: torch.log_softmax(x, dim=-1) for x of shape (M, N), fp16.
Known problems:
- Two passes over each row (online max/sum, then write), so the input is read twice from global memory.
- One row per program, scalar running max/sum updated with a block reduction every tile.
- Fixed BLOCK_N/num_warps, no autotune; tail mask applied on every tile.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 32000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


@triton.jit
def _log_softmax_rows(X, Y, NCOLS, sxm, sxn, sym, syn, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    x_row = X + row * sxm
    y_row = Y + row * sym

    m_i = tl.max(tl.full([BLOCK_N], float("-inf"), tl.float32), axis=0)
    l_i = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    for start in range(0, NCOLS, BLOCK_N):
        cols = start + offs
        mask = cols < NCOLS
        x = tl.load(x_row + cols * sxn, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_i, tl.max(x, axis=0))
        e = tl.where(mask, tl.exp(x - m_new), 0.0)
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(e, axis=0)
        m_i = m_new

    lse = m_i + tl.log(l_i)
    for start in range(0, NCOLS, BLOCK_N):
        cols = start + offs
        mask = cols < NCOLS
        x = tl.load(x_row + cols * sxn, mask=mask, other=0.0).to(tl.float32)
        y = x - lse
        tl.store(y_row + cols * syn, y.to(Y.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n)
        m = x2.shape[0]
        y = torch.empty((m, n), dtype=x.dtype, device=x.device)
        BLOCK_N = min(4096, triton.next_power_of_2(n))
        _log_softmax_rows[(m,)](
            x2, y, n, x2.stride(0), x2.stride(1), y.stride(0), y.stride(1),
            BLOCK_N=BLOCK_N, num_warps=8,
        )
        return y.reshape(x.shape)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 5, "N": 100},
    {"M": 3, "N": 9000},
    {"M": 4, "N": 5001},
]
