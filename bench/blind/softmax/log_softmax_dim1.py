"""Log-softmax over dim 1 of a (B, R, K) fp32 tensor: torch.log_softmax(x, dim=1); the reduced axis has
stride K, so it is not the contiguous one.

Known problems:
- lines 32-42: one program per (b, k) column walks the reduced axis with stride K (1 KB apart), so every load and store of a warp touches 32 different sectors for 4 useful bytes each (uncoalesced); a [BLOCK_R, BLOCK_K] tile with k contiguous would coalesce
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 32
R = 1024
K = 256

TEST_SHAPES = [
    {"B": 3, "R": 37, "K": 129},
    {"B": 2, "R": 130, "K": 5},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=1)


@triton.jit
def log_softmax_dim1_kernel(x_ptr, y_ptr, n_red, n_inner, stride_b, stride_r, BLOCK_R: tl.constexpr):
    pid = tl.program_id(0)  # one program per (b, k) column
    b = pid // n_inner
    k = pid % n_inner
    offs = tl.arange(0, BLOCK_R)
    mask = offs < n_red
    ptrs = b * stride_b + offs * stride_r + k
    x = tl.load(x_ptr + ptrs, mask=mask, other=float("-inf"))
    x_max = tl.max(x, axis=0)
    z = x - x_max
    lse = tl.log(tl.sum(tl.exp(z), axis=0))
    tl.store(y_ptr + ptrs, z - lse, mask=mask)


def log_softmax_dim1(x):
    x = x.contiguous()
    n_b, n_red, n_inner = x.shape
    y = torch.empty_like(x)
    BLOCK_R = triton.next_power_of_2(n_red)  # whole reduced column in one block
    grid = (n_b * n_inner,)
    log_softmax_dim1_kernel[grid](x, y, n_red, n_inner, x.stride(0), x.stride(1), BLOCK_R=BLOCK_R)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return log_softmax_dim1(x)


def get_inputs():
    return [torch.randn(B, R, K)]


def get_init_inputs():
    return []
