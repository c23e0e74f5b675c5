"""Log-softmax over a vocabulary-sized last dimension.

torch.log_softmax(x, dim=-1) for x (M=2048, N=50257) bf16. Output (2048, 50257)
bf16; the reduction is done in fp32.

Known problems:
- lines 36-53: two passes over each 50257-element row, so x is read from memory twice (three row-sized memory transfers instead of two); a 100 KB row is too big to be sure it is still in L2 on the second pass.
- lines 39-42: the online max/sum does two tl.exp calls plus a tl.where per element (rescaling s every block, elementwise) and uses exp rather than exp2, which makes pass 1 heavy on the special-function unit.
- lines 38, 52-53: N=50257 is odd, so row starts are not 16-byte aligned and loads/stores cannot be vectorized.
- lines 62-63: one program per row with a fixed BLOCK_N=4096 and the default num_warps=4, no tuning.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 2048
N = 50257


@triton.jit
def log_softmax_kernel(
    x_ptr, y_ptr,
    stride_xm, stride_ym,
    N,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    offs = tl.arange(0, BLOCK_N)

    # pass 1: online max and sum of exp
    m = tl.full((BLOCK_N,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # guard lanes that have seen only -inf so far
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    row_max = tl.max(m, axis=0)
    s = s * tl.exp(m - row_max)
    lse = row_max + tl.log(tl.sum(s, axis=0))

    # pass 2: write x - logsumexp
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x - lse).to(tl.bfloat16), mask=mask)


def log_softmax(x):
    x2 = x.reshape(-1, x.shape[-1])
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    Mv, Nv = x2.shape
    y = torch.empty((Mv, Nv), device=x.device, dtype=x.dtype)
    BLOCK_N = min(4096, triton.next_power_of_2(Nv))
    log_softmax_kernel[(Mv,)](
        x2, y,
        x2.stride(0), y.stride(0),
        Nv,
        BLOCK_N=BLOCK_N,
    )
    return y.reshape(x.shape)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return log_softmax(x)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 16, "N": 8192},
    {"M": 37, "N": 10007},
    {"M": 5, "N": 129},
]
