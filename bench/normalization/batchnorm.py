"""Batch normalization in training mode (batch statistics, affine) of a (B, C, L) fp32 tensor.

Known problems:
- lines 26-28: one program per channel walks B * L elements with a strided gather of (b, l) pairs: the
  batch loop and the length loop are flattened into a division and a modulo per element
- lines 26,32: two passes over the channel (mean, then variance) and a third to normalize: x is read three times
- line 63: C = 256 programs for 64M elements: far fewer programs than the device can run at once
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 64
C = 256
L = 4096
TEST_SHAPES = [{"B": 3, "C": 4, "L": 50}, {"B": 2, "C": 8, "L": 128}]


@triton.jit
def batchnorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, batch, channels, length, eps, BLOCK_SIZE: tl.constexpr):
    c = tl.program_id(0)
    count = batch * length
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, count, BLOCK_SIZE):
        idx = start + tl.arange(0, BLOCK_SIZE)
        offs = (idx // length) * channels * length + c * length + idx % length
        acc += tl.load(x_ptr + offs, mask=idx < count, other=0.0)
    mean = tl.sum(acc, axis=0) / count
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, count, BLOCK_SIZE):
        idx = start + tl.arange(0, BLOCK_SIZE)
        offs = (idx // length) * channels * length + c * length + idx % length
        x = tl.load(x_ptr + offs, mask=idx < count, other=0.0)
        d = tl.where(idx < count, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / count + eps)
    w = tl.load(w_ptr + c)
    b = tl.load(b_ptr + c)
    for start in range(0, count, BLOCK_SIZE):
        idx = start + tl.arange(0, BLOCK_SIZE)
        offs = (idx // length) * channels * length + c * length + idx % length
        x = tl.load(x_ptr + offs, mask=idx < count, other=0.0)
        tl.store(out_ptr + offs, (x - mean) * rstd * w + b, mask=idx < count)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(C) + 0.5)
        self.bias = nn.Parameter(torch.randn(C))

    def forward(self, x):
        return torch.nn.functional.batch_norm(x, None, None, self.weight, self.bias, training=True, eps=1e-5)


class ModelNew(Model):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        bsz, ch, length = x.shape
        batchnorm_kernel[(ch,)](x, self.weight, self.bias, out, bsz, ch, length, 1e-5, BLOCK_SIZE=1024)
        return out


def get_inputs():
    return [torch.randn(B, C, L)]


def get_init_inputs():
    return []
