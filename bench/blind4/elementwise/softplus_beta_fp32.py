"""Softplus with beta=2, threshold=20 (fp32).

out = torch.nn.functional.softplus(x, beta=2.0, threshold=20.0), i.e.
out = x where beta * x > threshold, else log(1 + exp(beta * x)) / beta.
x (N_ROWS, N_COLS) fp32. Benchmark shape: 16384 x 8192 (512 MB in, 512 MB out).

Known problems:
- L50-L52: flat 1-D launch with a fixed, small BLOCK_SIZE=1024 and num_warps=4, no autotuning; one 4 KB block per program gives a 131072-program grid for a purely bandwidth-bound op.
- L41-L42: exp and log are evaluated for every element (also those taking the x branch) and the result is divided by beta rather than multiplied by a precomputed 1/beta (minor, the op is memory-bound).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N_ROWS = 16384
N_COLS = 8192
BETA = 2.0
THRESHOLD = 20.0


class Model(nn.Module):
    def __init__(self, beta, threshold):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


@triton.jit
def _softplus_kernel(x_ptr, out_ptr, n_elements, beta, threshold, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    bx = x * beta
    # clamp the exp argument so the unused branch does not overflow
    soft = tl.log(1.0 + tl.exp(tl.minimum(bx, threshold))) / beta
    out = tl.where(bx > threshold, x, soft)
    tl.store(out_ptr + offs, out, mask=mask)


def softplus(x, beta, threshold):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _softplus_kernel[grid](x, out, n, beta, threshold, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self, beta, threshold):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return softplus(x, self.beta, self.threshold)


def get_inputs():
    # scale so that some elements cross the threshold (beta * x > 20)
    return [torch.randn(N_ROWS, N_COLS) * 6.0]


def get_init_inputs():
    return [BETA, THRESHOLD]


TEST_SHAPES = [
    {"N_ROWS": 64, "N_COLS": 1024},
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 3, "N_COLS": 5000},
]
