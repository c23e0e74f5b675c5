"""Rotary position embedding (rotate-half form), fp16.

x: (BATCH, SEQ, HEADS, HEAD_DIM) fp16; cos, sin: (SEQ, HEAD_DIM) fp16.
out = x * cos + rotate_half(x) * sin with rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2]);
cos/sin are broadcast over batch and heads. Output: (BATCH, SEQ, HEADS, HEAD_DIM) fp16.
The kernel computes in fp32 and rounds once to fp16.

Known problems:
- line 27: one program per (b, s, h) row of only HEAD_DIM=128 values (256 B): 524288 tiny programs, so per-program fixed cost (index math, launch/scheduling) is a large share of the runtime.
- line 32, 33: the row is loaded as two separate 64-element halves with a 64-wide block; with 4 warps (128 threads) for 64 elements half the threads are masked idle and loads are narrow.
- line 34, 35, 36, 37: the cos/sin row for position s is reloaded by each of the BATCH*HEADS programs that use it (mostly L2 hits, but 4 extra loads per program); one program covering all heads of a position would load it once.
- line 72: num_warps is left at the default 4 for a 64-element block, far more threads than work.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 8
SEQ = 2048
HEADS = 16
HEAD_DIM = 128


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, S, H, D, HALF, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s = (row // H) % S
    offs = tl.arange(0, BLOCK)
    mask = offs < HALF
    x_row = x_ptr + row * D
    x1 = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_row + HALF + offs, mask=mask, other=0.0).to(tl.float32)
    c1 = tl.load(cos_ptr + s * D + offs, mask=mask, other=0.0).to(tl.float32)
    c2 = tl.load(cos_ptr + s * D + HALF + offs, mask=mask, other=0.0).to(tl.float32)
    s1 = tl.load(sin_ptr + s * D + offs, mask=mask, other=0.0).to(tl.float32)
    s2 = tl.load(sin_ptr + s * D + HALF + offs, mask=mask, other=0.0).to(tl.float32)
    o1 = x1 * c1 - x2 * s1
    o2 = x2 * c2 + x1 * s2
    out_row = out_ptr + row * D
    tl.store(out_row + offs, o1.to(tl.float16), mask=mask)
    tl.store(out_row + HALF + offs, o2.to(tl.float16), mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, cos, sin):
        half = x.shape[-1] // 2
        x1 = x[..., :half]
        x2 = x[..., half:]
        rot = torch.cat((-x2, x1), dim=-1)
        c = cos[None, :, None, :]
        s = sin[None, :, None, :]
        return x * c + rot * s


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, cos, sin):
        x = x.contiguous()
        cos = cos.contiguous()
        sin = sin.contiguous()
        B, S, H, D = x.shape
        half = D // 2
        out = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(half)
        grid = (B * S * H,)
        rope_kernel[grid](x, cos, sin, out, S, H, D, half, BLOCK=BLOCK)
        return out


def get_inputs():
    x = torch.randn(BATCH, SEQ, HEADS, HEAD_DIM, dtype=torch.float16)
    pos = torch.arange(SEQ, dtype=torch.float32)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return [x, emb.cos().to(torch.float16), emb.sin().to(torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 2, "SEQ": 16, "HEADS": 4, "HEAD_DIM": 64},
    {"BATCH": 3, "SEQ": 13, "HEADS": 3, "HEAD_DIM": 40},
]
