"""Per-channel affine on a 3-D tensor.

y = x * scale[None, :, None] + shift[None, :, None] for x (B, C, L) fp16, with scale and
shift nn.Parameters of shape (C,) fp16 (randn init). Computed in fp32, stored as fp16.

Benchmark shape: B=32, C=512, L=4096 (fp16).

Known problems:
- L52-L54: BLOCK_L=1024 with default num_warps=4 and a 2-D grid of (B*C, L/1024) programs: every program moves only 2 KiB in / 2 KiB out, so ~65k tiny programs for a purely bandwidth-bound op.
- L36, L39-L40: every program reloads its channel's scale and shift (two scalar loads plus the row % C modulo) instead of amortizing them over the whole L row.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 32
C = 512
L = 4096


class Model(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(num_channels).to(torch.float16))
        self.shift = nn.Parameter(torch.randn(num_channels).to(torch.float16))

    def forward(self, x):
        return x * self.scale[None, :, None] + self.shift[None, :, None]


@triton.jit
def channel_affine_kernel(x_ptr, scale_ptr, shift_ptr, y_ptr, n_channels, length, BLOCK_L: tl.constexpr):
    row = tl.program_id(0)
    pid_l = tl.program_id(1)
    ch = row % n_channels
    offs = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    m = offs < length
    s = tl.load(scale_ptr + ch).to(tl.float32)
    b = tl.load(shift_ptr + ch).to(tl.float32)
    base = row.to(tl.int64) * length
    x = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
    y = x * s + b
    tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=m)


def channel_affine(x, scale, shift):
    assert x.dim() == 3
    x = x.contiguous()
    bsz, n_channels, length = x.shape
    y = torch.empty_like(x)
    BLOCK_L = 1024
    grid = (bsz * n_channels, triton.cdiv(length, BLOCK_L))
    channel_affine_kernel[grid](x, scale, shift, y, n_channels, length, BLOCK_L=BLOCK_L)
    return y


class ModelNew(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(num_channels).to(torch.float16))
        self.shift = nn.Parameter(torch.randn(num_channels).to(torch.float16))

    def forward(self, x):
        return channel_affine(x, self.scale, self.shift)


def get_inputs():
    x = torch.randn(B, C, L).to(torch.float16)
    return [x]


def get_init_inputs():
    return [C]


TEST_SHAPES = [
    {"B": 3, "C": 37, "L": 129},
    {"B": 2, "C": 16, "L": 2048},
    {"B": 1, "C": 5, "L": 1500},
]
