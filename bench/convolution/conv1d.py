"""Direct 1D convolution (stride 1, no padding, with bias) of fp32 x (B, C_IN, L) by w (C_OUT, C_IN, KS).

Known problems:
- lines 30-32: scalar weight loads in a double loop over input channels and taps: no tl.dot, no reuse
- line 24: one program per (batch, output channel, length block): the input row re-read by every output channel
- line 57: BLOCK_L=128 with the default num_warps
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 16
C_IN = 64
C_OUT = 128
L = 8192
KS = 7
TEST_SHAPES = [{"B": 1, "C_IN": 3, "C_OUT": 4, "L": 50, "KS": 3}, {"B": 2, "C_IN": 2, "C_OUT": 2, "L": 64, "KS": 5}]


@triton.jit
def conv1d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, c_in, c_out, l_in, l_out, ks, BLOCK_L: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // c_out
    co = pid % c_out
    offs = tl.program_id(1) * BLOCK_L + tl.arange(0, BLOCK_L)
    mask = offs < l_out
    acc = tl.zeros((BLOCK_L,), dtype=tl.float32)
    for ci in range(0, c_in):
        for t in range(0, ks):
            w = tl.load(w_ptr + (co * c_in + ci) * ks + t)
            x = tl.load(x_ptr + (n * c_in + ci) * l_in + offs + t, mask=mask, other=0.0)
            acc += w * x
    acc += tl.load(b_ptr + co)
    tl.store(out_ptr + (n * c_out + co) * l_out + offs, acc, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(C_IN, C_OUT, KS)

    def forward(self, x):
        return self.conv(x)


class ModelNew(Model):
    def forward(self, x):
        x = x.contiguous()
        bsz, c_in, l_in = x.shape
        w = self.conv.weight.contiguous()
        c_out, _, ks = w.shape
        l_out = l_in - ks + 1
        out = torch.empty(bsz, c_out, l_out, dtype=x.dtype, device=x.device)
        grid = (bsz * c_out, triton.cdiv(l_out, 128))
        conv1d_kernel[grid](x, w, self.conv.bias, out, c_in, c_out, l_in, l_out, ks, BLOCK_L=128)
        return out


def get_inputs():
    return [torch.randn(B, C_IN, L)]


def get_init_inputs():
    return []
