"""Sum of all elements of a flat fp32 tensor of 64M elements, to one scalar.

Known problems:
- line 23: one fp32 atomic add per program on a single address: 65536 programs serialize on it
- line 35: BLOCK_SIZE=1024: many small partial sums instead of fewer, larger ones per program
- line 23: the atomic order makes the result vary from run to run in the last bits
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 64 * 1024 * 1024
TEST_SHAPES = [{"N": 3000}, {"N": 8192}]


@triton.jit
def global_sum_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


class Model(nn.Module):
    def forward(self, x):
        return x.sum().reshape(1)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.zeros(1, dtype=torch.float32, device=x.device)
        n = x.numel()
        global_sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK_SIZE=1024)
        return out


def get_inputs():
    return [torch.rand(N)]


def get_init_inputs():
    return []
