"""CosineEmbeddingLoss(margin=0.0), mean reduction.

For x1, x2 (N, D) fp16 and y (N,) fp16 of +1/-1:
cos_n = <x1_n, x2_n> / sqrt((|x1_n|^2 + 1e-12) * (|x2_n|^2 + 1e-12))
loss_n = 1 - cos_n if y_n == 1, max(0, cos_n - margin) if y_n == -1; output = mean_n(loss_n),
a 0-d fp16 tensor (the dtype torch gives). Dots and norms are accumulated in fp32.
Inputs are randn * 0.1: with plain randn and D=512, torch's fp16 reference computes
|x1|^2 * |x2|^2 ~ 2.6e5 in fp16, which overflows to inf and makes the reference meaningless.

Benchmark shape: N=16384, D=512 (fp16).

Known problems:
- L63: every one of the N=16384 programs does an fp32 atomic_add onto one single address, so the final reduction serializes and is nondeterministic.
- L50-L54, L73-L74: one program per row with a single 512-wide tile and the default num_warps=4; each program only moves 2 KiB and the launch is fine-grained (many tiny programs, no rows batched per program).
- L72, L87: two extra launches around the kernel: torch.zeros for the fp32 accumulator and a .to(float16) cast for the result.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 16384
D = 512

MARGIN = 0.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.CosineEmbeddingLoss(margin=MARGIN)

    def forward(self, x1, x2, y):
        return self.loss(x1, x2, y)


@triton.jit
def cosine_embedding_loss_kernel(
    x1_ptr,
    x2_ptr,
    y_ptr,
    out_ptr,
    n_cols,
    stride_1,
    stride_2,
    margin,
    inv_n,
    BLOCK_D: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    m = cols < n_cols
    a = tl.load(x1_ptr + row * stride_1 + cols, mask=m, other=0.0).to(tl.float32)
    b = tl.load(x2_ptr + row * stride_2 + cols, mask=m, other=0.0).to(tl.float32)
    yv = tl.load(y_ptr + row).to(tl.float32)
    dot = tl.sum(a * b, axis=0)
    mag1 = tl.sum(a * a, axis=0) + 1e-12
    mag2 = tl.sum(b * b, axis=0) + 1e-12
    cos = dot / tl.sqrt(mag1 * mag2)
    pos = 1.0 - cos
    neg = tl.maximum(cos - margin, 0.0)
    loss = tl.where(yv == 1.0, pos, 0.0) + tl.where(yv == -1.0, neg, 0.0)
    tl.atomic_add(out_ptr, loss * inv_n)


def cosine_embedding_loss(x1, x2, y, margin=MARGIN):
    assert x1.shape == x2.shape and x1.dim() == 2
    x1 = x1.contiguous()
    x2 = x2.contiguous()
    y = y.contiguous()
    n, d = x1.shape
    acc = torch.zeros((), device=x1.device, dtype=torch.float32)
    BLOCK_D = triton.next_power_of_2(d)
    grid = (n,)
    cosine_embedding_loss_kernel[grid](
        x1,
        x2,
        y,
        acc,
        d,
        x1.stride(0),
        x2.stride(0),
        margin,
        1.0 / n,
        BLOCK_D=BLOCK_D,
    )
    return acc.to(x1.dtype)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x1, x2, y):
        return cosine_embedding_loss(x1, x2, y)


def get_inputs():
    x1 = (torch.randn(N, D) * 0.1).to(torch.float16)
    x2 = (torch.randn(N, D) * 0.1).to(torch.float16)
    y = (torch.randint(0, 2, (N,)) * 2 - 1).to(torch.float16)
    return [x1, x2, y]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 37, "D": 129},
    {"N": 64, "D": 512},
    {"N": 5, "D": 300},
]
