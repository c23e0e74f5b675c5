"""LayerNorm forward over one row per program."""

import triton
import triton.language as tl


# tritonlens: N=1024, x_ptr=*fp16, w_ptr=*fp16, b_ptr=*fp16, out_ptr=*fp16
@triton.jit
def layernorm_good(x_ptr, w_ptr, b_ptr, out_ptr, stride_row, N: tl.constexpr, eps):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + row * stride_row + cols).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / N
    rstd = tl.rsqrt(var + eps)
    w = tl.load(w_ptr + cols)
    b = tl.load(b_ptr + cols)
    tl.store(out_ptr + row * stride_row + cols, xc * rstd * w + b)


# tritonlens: BLOCK=1024, x_ptr=*fp16, w_ptr=*fp16, b_ptr=*fp16, out_ptr=*fp16
@triton.jit
def layernorm_naive(x_ptr, w_ptr, b_ptr, out_ptr, stride_row, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt_rn(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * stride_row + cols, xc * rstd * w + b, mask=mask)


# tritonlens: N=1024, x_ptr=*fp16, w_ptr=*fp16, out_ptr=*fp16
@triton.jit
def rmsnorm_rows_naive(x_ptr, w_ptr, out_ptr, n_rows, stride_row, N: tl.constexpr, eps):
    cols = tl.arange(0, N)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * stride_row + cols).to(tl.float32)
        w = tl.load(w_ptr + cols).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(out_ptr + row * stride_row + cols, (x * rstd * w).to(out_ptr.dtype.element_ty))


# tritonlens: N=1024, x_ptr=*fp16, w_ptr=*fp16, out_ptr=*fp16
@triton.jit
def rmsnorm_rows_good(x_ptr, w_ptr, out_ptr, n_rows, stride_row, N: tl.constexpr, eps):
    cols = tl.arange(0, N)
    w = tl.load(w_ptr + cols).to(tl.float32)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * stride_row + cols).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
        tl.store(out_ptr + row * stride_row + cols, (x * rstd * w).to(out_ptr.dtype.element_ty))
