"""LayerNorm over the last dimension of a (N_ROWS, D_MODEL) bf16 tensor.

out[i, :] = (x[i, :] - mean(x[i, :])) / sqrt(var(x[i, :]) + eps) * weight + bias
with weight and bias the (bf16) nn.LayerNorm affine parameters of shape (D_MODEL,), eps = 1e-5.
Statistics are computed in fp32, the output is bf16.

Known problems:
_layernorm_fwd_kernel: one program per row (32768 tiny programs of 768 elements each); no multi-row blocking per program, so launch/scheduling overhead and per-program setup (weight/bias loads) dominate.
ModelNew.forward: BLOCK_D = next_power_of_2(768) = 1024, so 25% of the lanes in every load/reduction are masked off and wasted.
ModelNew.forward: num_warps left at the default (4) and no autotuning of BLOCK/num_warps/num_stages.
_layernorm_fwd_kernel: weight and bias are re-loaded from global memory by every row program instead of being reused across rows.
_layernorm_fwd_kernel: two separate tl.sum reductions (mean, then variance) per row, each a full cross-warp reduction through shared memory.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N_ROWS = 32768
D_MODEL = 768
EPS = 1e-5


def _init_affine(ln):
    # deterministic, seed-independent non-trivial affine parameters
    d = ln.weight.shape[0]
    idx = torch.arange(d, dtype=torch.float32)
    with torch.no_grad():
        ln.weight.copy_((1.0 + 0.5 * torch.sin(idx * 0.37)).to(ln.weight.dtype))
        ln.bias.copy_((0.1 * torch.cos(idx * 0.11)).to(ln.bias.dtype))


class Model(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.ln = nn.LayerNorm(d_model, eps=EPS, dtype=torch.bfloat16)
        _init_affine(self.ln)

    def forward(self, x):
        return self.ln(x)


@triton.jit
def _layernorm_fwd_kernel(x_ptr, w_ptr, b_ptr, out_ptr, D, stride_x, stride_out, eps,
                          BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / D
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / D
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = diff * rstd * w + b
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.ln = nn.LayerNorm(d_model, eps=EPS, dtype=torch.bfloat16)
        _init_affine(self.ln)

    def forward(self, x):
        D = x.shape[-1]
        x2 = x.reshape(-1, D).contiguous()
        out = torch.empty_like(x2)
        n_rows = x2.shape[0]
        BLOCK_D = triton.next_power_of_2(D)
        _layernorm_fwd_kernel[(n_rows,)](
            x2, self.ln.weight, self.ln.bias, out, D, x2.stride(0), out.stride(0), self.ln.eps,
            BLOCK_D=BLOCK_D,
        )
        return out.reshape(x.shape)


def get_inputs():
    return [torch.randn(N_ROWS, D_MODEL, dtype=torch.bfloat16)]


def get_init_inputs():
    return [D_MODEL]


TEST_SHAPES = [
    {"N_ROWS": 8, "D_MODEL": 64},
    {"N_ROWS": 7, "D_MODEL": 100},
    {"N_ROWS": 5, "D_MODEL": 768},
]
