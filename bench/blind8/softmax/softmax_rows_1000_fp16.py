"""Row softmax over the last dimension of a (N_ROWS, N_COLS) fp16 tensor.

out[i, j] = exp(x[i, j] - max_j x[i, :]) / sum_j exp(x[i, j] - max_j x[i, :]), computed in fp32, stored as fp16.

Known problems:
_softmax_rows_kernel: one program per row (65536 programs of 1000 elements); no multi-row blocking, so per-program overhead is significant for such short rows.
ModelNew.forward: BLOCK_N = next_power_of_2(1000) = 1024 with 1000 valid columns; rows are 2000 bytes so row starts are not 128-byte aligned (misaligned loads/stores, no vectorization hints).
ModelNew.forward: num_warps left at the default (4) and no autotuning of BLOCK/num_warps.
_softmax_rows_kernel: uses tl.exp (natural exp) and a true division by the sum for every element instead of exp2 with a pre-scaled log2(e) and a multiply by the reciprocal.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N_ROWS = 65536
N_COLS = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


@triton.jit
def _softmax_rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    e = tl.where(mask, e, 0.0)
    s = tl.sum(e, axis=0)
    y = e / s
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols).contiguous()
        out = torch.empty_like(x2)
        n_rows = x2.shape[0]
        BLOCK_N = triton.next_power_of_2(n_cols)
        _softmax_rows_kernel[(n_rows,)](x2, out, n_cols, x2.stride(0), out.stride(0), BLOCK_N=BLOCK_N)
        return out.reshape(x.shape)


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 8, "N_COLS": 64},
    {"N_ROWS": 7, "N_COLS": 1000},
    {"N_ROWS": 5, "N_COLS": 37},
]
