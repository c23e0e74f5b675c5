"""Direct 2D convolution (3x3, stride 1, padding 1, no bias) of fp32 x (B, C_IN, H, W) by w (C_OUT, C_IN, 3, 3).

Known problems:
- lines 33-40: a triple loop over input channels and the 3x3 taps with a scalar weight load each: no implicit GEMM,
  no tensor cores
- line 30: output row and column recovered from a flat index with a division and a modulo
- line 25: one program per (batch, output channel, pixel block): the input re-read by every output channel
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 8
C_IN = 64
C_OUT = 64
H = 128
W = 128
TEST_SHAPES = [{"B": 1, "C_IN": 2, "C_OUT": 3, "H": 7, "W": 9}, {"B": 1, "C_IN": 2, "C_OUT": 2, "H": 8, "W": 8}]


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, out_ptr, c_in, c_out, h, w, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // c_out
    co = pid % c_out
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < h * w
    oh = offs // w
    ow = offs % w
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(0, c_in):
        for kh in range(0, 3):
            for kw in range(0, 3):
                ih = oh + kh - 1
                iw = ow + kw - 1
                inside = mask & (ih >= 0) & (ih < h) & (iw >= 0) & (iw < w)
                x = tl.load(x_ptr + ((n * c_in + ci) * h + ih) * w + iw, mask=inside, other=0.0)
                wv = tl.load(w_ptr + ((co * c_in + ci) * 3 + kh) * 3 + kw)
                acc += x * wv
    tl.store(out_ptr + (n * c_out + co) * h * w + offs, acc, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C_IN, C_OUT, 3, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


class ModelNew(Model):
    def forward(self, x):
        x = x.contiguous()
        bsz, c_in, h, w = x.shape
        weight = self.conv.weight.contiguous()
        c_out = weight.shape[0]
        out = torch.empty(bsz, c_out, h, w, dtype=x.dtype, device=x.device)
        grid = (bsz * c_out, triton.cdiv(h * w, 256))
        conv2d_kernel[grid](x, weight, out, c_in, c_out, h, w, BLOCK=256)
        return out


def get_inputs():
    return [torch.randn(B, C_IN, H, W)]


def get_init_inputs():
    return []
