"""LayerNorm over the last dim with weight and bias: nn.LayerNorm(HIDDEN, eps=1e-5) applied to x.

x is (N_ROWS, HIDDEN) fp16; the module (and its weight/bias) is fp16; output fp16 (statistics in fp32).

Known problems:
- L53-55: the whole 16384-wide row is one block (BLOCK_N = 16384) at the default num_warps = 4: x, xc, w, b
  in fp32 (L37-44) need hundreds of registers per thread, so it spills to local memory; needs more warps
  or a chunked loop over the row.
- L42-43: weight and bias are re-read by every one of the 4096 programs (served from L2, minor).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 4096
HIDDEN = 16384
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=EPS).half()

    def forward(self, x):
        return self.ln(x)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, stride_x, stride_y, eps,
                     BLOCK_N: tl.constexpr):
    # one program per row; the whole row is held in one block
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < N
    x = tl.load(x_ptr + row.to(tl.int64) * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(y_ptr + row.to(tl.int64) * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm(x, weight, bias, eps):
    n = x.shape[-1]
    x2 = x.reshape(-1, n).contiguous()
    y = torch.empty_like(x2)
    rows = x2.shape[0]
    BLOCK_N = triton.next_power_of_2(n)
    layernorm_kernel[(rows,)](x2, weight, bias, y, n, x2.stride(0), y.stride(0), eps,
                              BLOCK_N=BLOCK_N)
    return y.view(x.shape)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=EPS).half()

    def forward(self, x):
        return layernorm(x, self.ln.weight, self.ln.bias, self.ln.eps)


def get_inputs():
    x = torch.randn(N_ROWS, HIDDEN, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [HIDDEN]


TEST_SHAPES = [
    {"N_ROWS": 37, "HIDDEN": 129},
    {"N_ROWS": 16, "HIDDEN": 1024},
    {"N_ROWS": 5, "HIDDEN": 1000},
]
