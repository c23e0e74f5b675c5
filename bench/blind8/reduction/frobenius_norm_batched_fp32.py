"""Per-matrix Frobenius norm of a batch x (B, R, C) fp32: sqrt(sum over the last two dims of x^2); output fp32 (B,).

Known problems:
- frobenius_norm_kernel grid (ModelNew.forward, `grid = (B,)`): one program per matrix, so only B = 256 programs, each streaming a whole 512 x 512 matrix (1 MiB) serially; about 2 programs per SM on an H200, with no split of a matrix across programs, so latency is poorly hidden and the tail is uneven.
- frobenius_norm_kernel: the matrix is walked as a flat range `offs // C`, `offs % C` with an integer divide/modulo per element to honour arbitrary strides, even when the input is contiguous and could be read as a flat vector.
- BLOCK = 1024 and num_warps = 4 are fixed guesses, not tuned (no autotune).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 256
ROWS = 512
COLS = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.linalg.matrix_norm(x, ord="fro", dim=(-2, -1))


@triton.jit
def frobenius_norm_kernel(x_ptr, out_ptr, R, C, stride_b, stride_r, stride_c,
                          BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    base = x_ptr + pid.to(tl.int64) * stride_b
    total = R * C
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, total, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < total
        r = offs // C
        c = offs % C
        x = tl.load(base + r * stride_r + c * stride_c, mask=mask, other=0.0)
        acc += x * x
    s = tl.sum(acc, axis=0)
    tl.store(out_ptr + pid, tl.sqrt(s))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        B, R, C = x.shape
        out = torch.empty((B,), dtype=torch.float32, device=x.device)
        BLOCK = 1024
        grid = (B,)
        frobenius_norm_kernel[grid](x, out, R, C, x.stride(0), x.stride(1), x.stride(2),
                                    BLOCK=BLOCK, num_warps=4)
        return out


def get_inputs():
    x = torch.randn(BATCH, ROWS, COLS, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 4, "ROWS": 64, "COLS": 64},
    {"BATCH": 3, "ROWS": 37, "COLS": 53},
    {"BATCH": 5, "ROWS": 1, "COLS": 7},
]
