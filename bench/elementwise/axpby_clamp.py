"""out = clamp(alpha * x + beta * y, -1, 1) for two flat fp16 tensors of 64M elements (a residual blend).

Known problems:
- lines 23,24: alpha and beta read from 1-element device tensors by every program
- line 28: the clamp as two nested tl.where instead of tl.minimum / tl.maximum (or tl.clamp)
- line 47: BLOCK_SIZE=512 with the default num_warps
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 64 * 1024 * 1024
TEST_SHAPES = [{"N": 999}, {"N": 4096}]


@triton.jit
def axpby_clamp_kernel(x_ptr, y_ptr, alpha_ptr, beta_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    alpha = tl.load(alpha_ptr)
    beta = tl.load(beta_ptr)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v = alpha * x + beta * y
    v = tl.where(v > 1.0, 1.0, tl.where(v < -1.0, -1.0, v))
    tl.store(out_ptr + offs, v.to(tl.float16), mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor([0.7]))
        self.beta = nn.Parameter(torch.tensor([0.4]))

    def forward(self, x, y):
        return torch.clamp(self.alpha * x.float() + self.beta * y.float(), -1.0, 1.0).half()


class ModelNew(Model):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 512),)
        axpby_clamp_kernel[grid](x, y, self.alpha, self.beta, out, n, BLOCK_SIZE=512)
        return out


def get_inputs():
    return [torch.randn(N, dtype=torch.float16), torch.randn(N, dtype=torch.float16)]


def get_init_inputs():
    return []
