"""Mean over dims 0 and 2: out[b] = (1 / (A*C)) * sum_{a, c} x[a, b, c], x fp32 (A, B, C) -> out fp32 (B,).

One Triton program computes one output element b. For that b the data is A
separate contiguous runs of C floats (at offsets a*B*C + b*C), so the
program loops over a and, inside, over each run in BLOCK_C-wide chunks,
accumulating into an fp32 vector; the vector is summed and divided by A*C
at the end.

Known problems:
- lines 28-33: nested serial loops (A x C/BLOCK_C = 64 x 1 iterations) each issuing a single 1024-float load, so only 8 floats per thread are in flight at a time; loading a [BLOCK_A, BLOCK_C] tile per iteration would expose much more memory-level parallelism.
- line 43: the grid is only B = 512 programs of 4 warps, about 4 programs per SM, each serially streaming 256 KB; too little parallelism to saturate HBM. Splitting A across programs (partial sums) would help.
- line 29: a*B*C + b*C is computed in int32; for tensors above 2^31 elements this overflows (not a speed problem, a latent bug).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

DIM_A = 64
DIM_B = 512
DIM_C = 1024


@triton.jit
def mean_02_kernel(x_ptr, out_ptr, A, B, C, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for a in range(0, A):
        base = a * B * C + b * C
        for start in range(0, C, BLOCK_C):
            offs = start + tl.arange(0, BLOCK_C)
            x = tl.load(x_ptr + base + offs, mask=offs < C, other=0.0)
            acc += x
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + b, total / (A * C))


def mean_dims_0_2(x):
    x = x.contiguous()
    a, b, c = x.shape
    out = torch.empty(b, dtype=x.dtype, device=x.device)
    BLOCK_C = 1024
    grid = (b,)
    mean_02_kernel[grid](x, out, a, b, c, BLOCK_C=BLOCK_C)
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=(0, 2))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return mean_dims_0_2(x)


def get_inputs():
    return [torch.randn(DIM_A, DIM_B, DIM_C, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"DIM_A": 5, "DIM_B": 37, "DIM_C": 71},
    {"DIM_A": 13, "DIM_B": 7, "DIM_C": 1100},
    {"DIM_A": 9, "DIM_B": 23, "DIM_C": 129},
]
