"""Per-row absmax int8 quantization of an fp16 matrix.

x: (M, N) fp16. For each row: scale = max(|x_row|) / 127 (fp32),
q = round(x / scale) (round half to even, clamped to [-127, 127]) as int8.
Returns (q (M, N) int8, scale (M,) fp32).

Known problems:
- line 61: BLOCK = next_power_of_2(N) keeps the whole row in registers (32 fp32 values per thread for N=4096 with 4 warps); it does not scale to long rows (spills) and non-power-of-2 N wastes masked lanes.
- line 62: one program per row with the default num_warps=4; the row reduction and the quantize step are serialised inside the program, so memory latency is covered only by occupancy.
- line 30: an fp32 divide per element instead of one reciprocal per row and a multiply.
- line 38: every thread of the program stores the same scalar scale (redundant same-address store).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096


@triton.jit
def quantize_rows_kernel(x_ptr, q_ptr, scale_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.max(tl.abs(x), axis=0)
    scale = absmax / 127.0
    q = x / scale
    # round half to even (libdevice.rint has no CPU-interpreter implementation)
    r = tl.floor(q)
    d = q - r
    r_odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
    q = tl.where((d > 0.5) | ((d == 0.5) & r_odd), r + 1.0, r)
    q = tl.minimum(tl.maximum(q, -127.0), 127.0)
    tl.store(q_ptr + row * N + offs, q.to(tl.int8), mask=mask)
    tl.store(scale_ptr + row, scale)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xf = x.float()
        scale = xf.abs().amax(dim=1) / 127.0
        q = torch.round(xf / scale[:, None]).clamp(-127, 127).to(torch.int8)
        return q, scale


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n_rows, n_cols = x.shape
        q = torch.empty((n_rows, n_cols), dtype=torch.int8, device=x.device)
        scale = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
        BLOCK = triton.next_power_of_2(n_cols)
        quantize_rows_kernel[(n_rows,)](x, q, scale, n_cols, BLOCK=BLOCK)
        return q, scale


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 256},
    {"M": 37, "N": 203},
]
