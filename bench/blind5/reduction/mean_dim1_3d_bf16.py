"""
Mean over the middle dimension of a 3D bf16 tensor.

Computes y = x.mean(dim=1) for x of shape (B, L, D), dtype bfloat16; the output
y has shape (B, D), dtype bfloat16. The sum over L is accumulated in fp32 and
divided by L before the single cast back to bf16.
Benchmark shape: B=64, L=512, D=1024.

Known problems:
- L42-L47: each program walks the whole L axis serially; there is no split over L, so a batch with few D tiles gets little parallelism (64 x 8 = 512 programs here, each streaming 128 KB).
- L41-L48: the (BLOCK_L, BLOCK_D) fp32 accumulator keeps 32 x 128 partial sums live per program only to reduce them at the end; a 1D accumulator with a per-tile tl.sum would need fewer registers.
- L57-L58: block sizes (32 x 128) and num_warps are fixed guesses, not tuned or autotuned; 128 bf16 columns is only 256 bytes per row of a tile.
- L54-L54: x.contiguous() silently copies a non-contiguous input instead of using its strides.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 64
L = 512
D = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=1)


@triton.jit
def mean_dim1_kernel(x_ptr, y_ptr, L, D, stride_b, stride_l, stride_yb,
                     BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask_d = offs_d < D
    base = x_ptr + pid_b * stride_b
    acc = tl.zeros((BLOCK_L, BLOCK_D), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        offs_l = l0 + tl.arange(0, BLOCK_L)
        mask = (offs_l[:, None] < L) & mask_d[None, :]
        ptrs = base + offs_l[:, None] * stride_l + offs_d[None, :]
        x = tl.load(ptrs, mask=mask, other=0.0)
        acc += x.to(tl.float32)
    total = tl.sum(acc, axis=0)
    mean = total / L
    tl.store(y_ptr + pid_b * stride_yb + offs_d, mean.to(tl.bfloat16), mask=mask_d)


def mean_dim1(x):
    x = x.contiguous()
    Bx, Lx, Dx = x.shape
    y = torch.empty((Bx, Dx), device=x.device, dtype=x.dtype)
    BLOCK_L = 32
    BLOCK_D = 128
    grid = (Bx, triton.cdiv(Dx, BLOCK_D))
    mean_dim1_kernel[grid](x, y, Lx, Dx, x.stride(0), x.stride(1), y.stride(0),
                           BLOCK_L=BLOCK_L, BLOCK_D=BLOCK_D)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return mean_dim1(x)


def get_inputs():
    x = torch.randn(B, L, D, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "L": 37, "D": 129},
    {"B": 3, "L": 64, "D": 256},
    {"B": 1, "L": 5, "D": 1000},
]
