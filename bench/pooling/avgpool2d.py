"""2D average pooling, kernel 2, stride 2, no padding, of a fp32 (B, C, H, W) tensor (H and W even at the
benchmark shape; odd sizes drop the last row/column as PyTorch does).

Known problems:
- line 27: output row and column recovered from a flat index with a division and a modulo per element
- lines 30-33: four scalar-strided loads per output: the two input rows are read as four stride-2 streams
- line 34: a division by 4 per output instead of a multiply
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 32
C = 64
H = 256
W = 256
TEST_SHAPES = [{"B": 1, "C": 3, "H": 9, "W": 7}, {"B": 1, "C": 2, "H": 8, "W": 8}]


@triton.jit
def avgpool2d_kernel(x_ptr, out_ptr, h, w, oh_size, ow_size, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < oh_size * ow_size
    oh = offs // ow_size
    ow = offs % ow_size
    base = x_ptr + plane * h * w + (oh * 2) * w + ow * 2
    a = tl.load(base, mask=mask, other=0.0)
    b = tl.load(base + 1, mask=mask, other=0.0)
    c = tl.load(base + w, mask=mask, other=0.0)
    d = tl.load(base + w + 1, mask=mask, other=0.0)
    tl.store(out_ptr + plane * oh_size * ow_size + offs, (a + b + c + d) / 4.0, mask=mask)


class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.avg_pool2d(x, 2)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        bsz, ch, h, w = x.shape
        oh, ow = h // 2, w // 2
        out = torch.empty(bsz, ch, oh, ow, dtype=x.dtype, device=x.device)
        grid = (bsz * ch, triton.cdiv(oh * ow, 256))
        avgpool2d_kernel[grid](x, out, h, w, oh, ow, BLOCK=256)
        return out


def get_inputs():
    return [torch.randn(B, C, H, W)]


def get_init_inputs():
    return []
