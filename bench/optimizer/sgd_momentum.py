"""One SGD step with momentum and weight decay on a flat fp32 parameter of 64M elements; returns the new
parameter and the new momentum buffer (PyTorch's torch.optim.SGD update rule, dampening 0, not Nesterov).

Known problems:
- lines 24,26: lr, momentum and weight decay read from device tensors by every program
- line 48: new parameter and momentum written to fresh tensors instead of updated in place: twice the allocation
- line 50: BLOCK_SIZE=512 with the default num_warps
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 64 * 1024 * 1024
TEST_SHAPES = [{"N": 1001}, {"N": 2048}]


@triton.jit
def sgd_momentum_kernel(p_ptr, g_ptr, buf_ptr, hyper_ptr, p_out_ptr, buf_out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    lr = tl.load(hyper_ptr)
    momentum = tl.load(hyper_ptr + 1)
    weight_decay = tl.load(hyper_ptr + 2)
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0) + weight_decay * p
    buf = momentum * tl.load(buf_ptr + offs, mask=mask, other=0.0) + g
    tl.store(buf_out_ptr + offs, buf, mask=mask)
    tl.store(p_out_ptr + offs, p - lr * buf, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("hyper", torch.tensor([0.01, 0.9, 1e-4]))

    def forward(self, p, g, buf):
        lr, momentum, weight_decay = self.hyper.tolist()
        d_p = g + weight_decay * p
        new_buf = momentum * buf + d_p
        return p - lr * new_buf, new_buf


class ModelNew(Model):
    def forward(self, p, g, buf):
        p_out, buf_out = torch.empty_like(p), torch.empty_like(buf)
        n = p.numel()
        sgd_momentum_kernel[(triton.cdiv(n, 512),)](p, g, buf, self.hyper, p_out, buf_out, n, BLOCK_SIZE=512)
        return p_out, buf_out


def get_inputs():
    return [torch.randn(N), torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
