"""scatter_add along dim 0: out = zeros(R, D).scatter_add_(0, index.expand(E, D), src) for src (E, D) fp32 and
int64 row indices (E,) into R rows: a sparse sum of messages into nodes.

Known problems:
- line 28: fp32 atomic adds per element into rows that many messages share: contention and run-to-run bits
- line 23: one program per message row with BLOCK_SIZE = D: no reuse of the index load across rows
- line 40: the output zeroed by a separate torch call before the kernel
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

E = 1 << 20
D = 64
R = 65536
TEST_SHAPES = [{"E": 100, "D": 24, "R": 9}, {"E": 64, "D": 16, "R": 16}]


@triton.jit
def scatter_add_kernel(src_ptr, index_ptr, out_ptr, d, BLOCK_D: tl.constexpr):
    e = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < d
    dst = tl.load(index_ptr + e)
    x = tl.load(src_ptr + e * d + cols, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + dst * d + cols, x, mask=mask)


class Model(nn.Module):
    def forward(self, src, index):
        out = torch.zeros(R, src.shape[1], dtype=src.dtype, device=src.device)
        return out.scatter_add_(0, index[:, None].expand_as(src), src)


class ModelNew(nn.Module):
    def forward(self, src, index):
        e, d = src.shape
        out = torch.zeros(R, d, dtype=src.dtype, device=src.device)
        scatter_add_kernel[(e,)](src.contiguous(), index, out, d, BLOCK_D=triton.next_power_of_2(d))
        return out


def get_inputs():
    return [torch.randn(E, D), torch.randint(0, R, (E,))]


def get_init_inputs():
    return []
