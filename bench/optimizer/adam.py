"""One Adam step (bias-corrected, PyTorch's torch.optim.Adam rule, no weight decay) on a flat fp32 parameter of
32M elements at step STEP; returns the new parameter, first and second moments.

Known problems:
- line 32: the bias corrections 1 - beta**step computed in every program with tl.exp/tl.log of the betas
- line 34: a sqrt and a division per element (no rsqrt)
- line 51: three fresh output tensors instead of in-place updates: twice the allocation
- line 54: BLOCK_SIZE=256 with the default num_warps
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32 * 1024 * 1024
STEP = 10
LR, BETA1, BETA2, EPS = 1e-3, 0.9, 0.999, 1e-8
TEST_SHAPES = [{"N": 999}, {"N": 4096}]


@triton.jit
def adam_kernel(p_ptr, g_ptr, m_ptr, v_ptr, p_out, m_out, v_out, n, step, lr, beta1, beta2, eps,
                BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    m = beta1 * tl.load(m_ptr + offs, mask=mask, other=0.0) + (1.0 - beta1) * g
    v = beta2 * tl.load(v_ptr + offs, mask=mask, other=0.0) + (1.0 - beta2) * g * g
    bc1 = 1.0 - tl.exp(step * tl.log(beta1))
    bc2 = 1.0 - tl.exp(step * tl.log(beta2))
    denom = tl.sqrt(v / bc2) + eps
    tl.store(p_out + offs, p - lr * (m / bc1) / denom, mask=mask)
    tl.store(m_out + offs, m, mask=mask)
    tl.store(v_out + offs, v, mask=mask)


class Model(nn.Module):
    def forward(self, p, g, m, v):
        m = BETA1 * m + (1 - BETA1) * g
        v = BETA2 * v + (1 - BETA2) * g * g
        bc1, bc2 = 1 - BETA1**STEP, 1 - BETA2**STEP
        denom = (v / bc2).sqrt() + EPS
        return p - LR * (m / bc1) / denom, m, v


class ModelNew(nn.Module):
    def forward(self, p, g, m, v):
        p_new, m_new, v_new = torch.empty_like(p), torch.empty_like(m), torch.empty_like(v)
        n = p.numel()
        adam_kernel[(triton.cdiv(n, 256),)](p, g, m, v, p_new, m_new, v_new, n, float(STEP), LR, BETA1, BETA2, EPS,
                                            BLOCK_SIZE=256)
        return p_new, m_new, v_new


def get_inputs():
    return [torch.randn(N), torch.randn(N), 0.1 * torch.randn(N), torch.rand(N)]


def get_init_inputs():
    return []
