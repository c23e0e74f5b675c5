"""Layer norm over the last dim without weight or bias: y = (x - mean) / sqrt(var + 1e-5), x and y (M, N) bf16.

Statistics are computed in fp32 (as torch does); var is the biased (population) variance.

Known problems:
- L53-L54: BLOCK_N = next_power_of_2(N) with the default num_warps=4: untuned for a 4096-wide bf16 row (32 fp32 values per thread); one row per program is otherwise a reasonable layout.
- L27-L29: mean and variance are two dependent cross-warp reductions (each through shared memory) per row; a fused Welford or sum/sum-of-squares reduction would need one, a small serial cost per row.
- L30: rstd computed as 1.0 / tl.sqrt instead of tl.rsqrt; a scalar per row, negligible.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
EPS = 1e-5


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    y = diff * rstd
    tl.store(y_ptr + row * stride_y + cols, y.to(tl.bfloat16), mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = EPS

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), eps=self.eps)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = EPS

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(n)
        layernorm_kernel[(m,)](x, y, n, x.stride(0), y.stride(0), self.eps, BLOCK_N=BLOCK_N)
        return y


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [{"M": 64, "N": 256}, {"M": 37, "N": 203}]
