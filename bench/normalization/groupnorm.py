"""Group normalization (affine) of a (B, C, H, W) fp32 tensor with G groups.

Known problems:
- lines 28,33: mean and variance in two passes over the group, then a third pass to normalize
- line 43: the per-channel weight and bias gathered per element (a division to find the channel)
- line 66: one program per (batch, group): B * G = 256 programs, each over 1M elements
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 8
C = 256
HW = 128 * 128
G = 32
TEST_SHAPES = [{"B": 2, "C": 6, "HW": 37, "G": 3}, {"B": 1, "C": 8, "HW": 64, "G": 2}]


@triton.jit
def groupnorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, group_size, channels_per_group, hw, num_groups, eps,
                     BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    g = pid % num_groups
    base = pid * group_size
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, group_size, BLOCK_SIZE):
        idx = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + base + idx, mask=idx < group_size, other=0.0)
    mean = tl.sum(acc, axis=0) / group_size
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, group_size, BLOCK_SIZE):
        idx = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + base + idx, mask=idx < group_size, other=0.0)
        d = tl.where(idx < group_size, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / group_size + eps)
    for start in range(0, group_size, BLOCK_SIZE):
        idx = start + tl.arange(0, BLOCK_SIZE)
        mask = idx < group_size
        ch = g * channels_per_group + idx // hw
        w = tl.load(w_ptr + ch, mask=mask, other=0.0)
        b = tl.load(b_ptr + ch, mask=mask, other=0.0)
        x = tl.load(x_ptr + base + idx, mask=mask, other=0.0)
        tl.store(out_ptr + base + idx, (x - mean) * rstd * w + b, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(C) + 0.5)
        self.bias = nn.Parameter(torch.randn(C))

    def forward(self, x):
        return torch.nn.functional.group_norm(x, G, self.weight, self.bias, eps=1e-5)


class ModelNew(Model):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        bsz, ch = x.shape[0], x.shape[1]
        hw = x[0, 0].numel()
        cpg = ch // G
        groupnorm_kernel[(bsz * G,)](x, self.weight, self.bias, out, cpg * hw, cpg, hw, G, 1e-5, BLOCK_SIZE=1024)
        return out


def get_inputs():
    return [torch.randn(B, C, HW)]


def get_init_inputs():
    return []
