"""
Per-head RMSNorm (QK-norm), fp16.

Computes y = q * rsqrt(mean(q^2, dim=-1) + 1e-6) * weight over the last (head)
dimension of q with shape (B, S, H, D) float16 and weight an nn.Parameter of
shape (D,) float16 initialised to ones + 0.1 * randn; the math is done in fp32
and the result cast once to float16, output (B, S, H, D).
Benchmark shape: B=8, S=2048, H=32, D=128.

Known problems:
- L60-L62: one program per (b, s, h) row: 524288 programs that each touch only 128 fp16 values (256 bytes); per-program overhead and the reduction latency dominate, several rows per program would amortise them.
- L44-L46: default num_warps = 4 (128 threads) for a 128-element row leaves one element per thread, so loads are 2-byte scalar accesses instead of vectorised ones.
- L49-L49: the weight vector is reloaded by every row's program.
- L56-L56: q.contiguous() / view copy a strided q (e.g. a slice of a fused QKV projection) instead of using its strides.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 8
S = 2048
H = 32
D = 128


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter((torch.ones(head_dim) + 0.1 * torch.randn(head_dim)).to(torch.float16))

    def forward(self, q):
        qf = q.float()
        var = qf.pow(2).mean(dim=-1, keepdim=True)
        out = qf * torch.rsqrt(var + self.eps) * self.weight.float()
        return out.to(q.dtype)


@triton.jit
def rmsnorm_head_kernel(x_ptr, w_ptr, y_ptr, D, stride_x, stride_y, eps,
                        BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_D)
    mask = offs < D
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / D
    rstd = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(y_ptr + row * stride_y + offs, y.to(tl.float16), mask=mask)


def rmsnorm_per_head(q, weight, eps):
    shape = q.shape
    x2 = q.contiguous().view(-1, shape[-1])
    n_rows, dim = x2.shape
    y = torch.empty_like(x2)
    BLOCK_D = triton.next_power_of_2(dim)
    grid = (n_rows,)
    rmsnorm_head_kernel[grid](x2, weight, y, dim, x2.stride(0), y.stride(0), eps,
                              BLOCK_D=BLOCK_D)
    return y.view(shape)


class ModelNew(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter((torch.ones(head_dim) + 0.1 * torch.randn(head_dim)).to(torch.float16))

    def forward(self, q):
        return rmsnorm_per_head(q, self.weight, self.eps)


def get_inputs():
    q = torch.randn(B, S, H, D, dtype=torch.float16)
    return [q]


def get_init_inputs():
    return [D]


TEST_SHAPES = [
    {"B": 1, "S": 3, "H": 5, "D": 37},
    {"B": 2, "S": 7, "H": 3, "D": 128},
    {"B": 1, "S": 16, "H": 4, "D": 64},
]
