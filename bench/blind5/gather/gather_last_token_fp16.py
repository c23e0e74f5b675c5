"""Gather the last valid token of each sequence, fp16.

Computes out = x[arange(B), lengths - 1] for x of shape (B, S, D) fp16 and lengths (B,) int64 in [1, S];
output (B, D) fp16.
Benchmark shape: B=256, S=2048, D=1024.

Known problems:
- L32-L37: only B=256 programs, each copying one 1024-wide fp16 row (2 KB) after a dependent scalar length load; the whole op moves ~1 MB, so it is launch/latency bound and fills the GPU poorly.
- L41-L41: the wrapper calls x.contiguous(), which for a non-contiguous input would copy the whole (B, S, D) tensor just to read B rows; passing strides would avoid it.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 256
S = 2048
D = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, lengths):
        b = x.shape[0]
        return x[torch.arange(b, device=x.device), lengths - 1]


@triton.jit
def gather_last_kernel(x_ptr, len_ptr, out_ptr, seq_len, d, BLOCK_D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    last = tl.load(len_ptr + b).to(tl.int64) - 1
    offs = tl.arange(0, BLOCK_D)
    mask = offs < d
    v = tl.load(x_ptr + (b * seq_len + last) * d + offs, mask=mask)
    tl.store(out_ptr + b * d + offs, v, mask=mask)


def gather_last_token(x, lengths):
    x = x.contiguous()
    lengths = lengths.contiguous()
    b, s, d = x.shape
    out = torch.empty((b, d), device=x.device, dtype=x.dtype)
    BLOCK_D = triton.next_power_of_2(d)
    grid = (b,)
    gather_last_kernel[grid](x, lengths, out, s, d, BLOCK_D=BLOCK_D)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, lengths):
        return gather_last_token(x, lengths)


def get_inputs():
    x = torch.randn(B, S, D, dtype=torch.float16)
    lengths = torch.randint(1, S + 1, (B,), dtype=torch.int64)
    return [x, lengths]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 4, "S": 16, "D": 64},
    {"B": 37, "S": 13, "D": 129},
    {"B": 3, "S": 1, "D": 33},
]
