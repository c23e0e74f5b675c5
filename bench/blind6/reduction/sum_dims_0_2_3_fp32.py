"""Per-channel sum of an NCHW tensor, fp32.

y[c] = sum over n, h, w of x[n, c, h, w].
x: (N, C, H, W) fp32 -> y: (C,) fp32.
Benchmark shape: N = 32, C = 256, H = 56, W = 56.

Known problems:
- line 52: only C=256 programs (about 2 per SM on 132 SMs), each streaming 32*3136 fp32 = 392 KiB serially; too few loads in flight to saturate HBM. The N/HW reduction should be split across more programs (two-stage or atomics).
- lines 38-40: H*W=3136 is no multiple of BLOCK=1024, so every fourth load is 94% masked (about 23% of lane-slots wasted across the loop).
- lines 36-41: nested runtime-bounded loops with a single accumulator and fixed BLOCK/num_warps, no autotuning or unrolling to keep more independent loads outstanding.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32
C = 256
H = 56
W = 56


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=(0, 2, 3))


@triton.jit
def _channel_sum_kernel(x_ptr, y_ptr, n_batch, n_chan, hw, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n in range(0, n_batch):
        base = x_ptr + (n * n_chan + c) * hw
        for start in range(0, hw, BLOCK):
            idx = start + offs
            vals = tl.load(base + idx, mask=idx < hw, other=0.0)
            acc += vals.to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(y_ptr + c, total)


def channel_sum(x):
    x = x.contiguous()
    n_batch, n_chan, h, w = x.shape
    hw = h * w
    y = torch.empty((n_chan,), dtype=x.dtype, device=x.device)
    BLOCK = 1024
    grid = (n_chan,)
    _channel_sum_kernel[grid](x, y, n_batch, n_chan, hw, BLOCK=BLOCK, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return channel_sum(x)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 2, "C": 16, "H": 8, "W": 8},
    {"N": 3, "C": 37, "H": 13, "W": 11},
    {"N": 4, "C": 8, "H": 33, "W": 40},
]
