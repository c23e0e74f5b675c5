"""Embedding-gradient accumulation: out = torch.zeros(V, D).index_add_(0, ids, grad).

grad is (T=16384, D=1024) fp32, ids is (T,) int64 uniform in [0, V=32000); out is (V, D) fp32.

Known problems:
- lines 46, 40: output is zero-filled by a separate torch.zeros pass (131 MB) and then updated with fp32 atomics (read-modify-write in L2) on the touched rows; sorting/segmenting ids would let one kernel write every row exactly once without atomics.
- lines 34-40, 47-48: one program per (token, 256-column chunk) = 65536 tiny programs each moving 1 KB, and the id is reloaded by every chunk program of the same token (line 36).
- line 40: atomic accumulation order is nondeterministic (run-to-run bitwise differences; correctness within tolerance, not a speed issue).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

T = 16384
D = 1024
V = 32000


class Model(nn.Module):
    def __init__(self, num_embeddings):
        super().__init__()
        self.num_embeddings = num_embeddings

    def forward(self, ids, grad):
        out = torch.zeros(self.num_embeddings, grad.shape[1], device=grad.device, dtype=grad.dtype)
        return out.index_add_(0, ids, grad)


@triton.jit
def index_add_rows_kernel(ids_ptr, grad_ptr, out_ptr, n_cols,
                          stride_g, stride_o,
                          BLOCK_D: tl.constexpr):
    tok = tl.program_id(0)
    pid_d = tl.program_id(1)
    row = tl.load(ids_ptr + tok)
    offs = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = offs < n_cols
    g = tl.load(grad_ptr + tok * stride_g + offs, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + row * stride_o + offs, g, mask=mask)


def triton_index_add(ids, grad, num_embeddings):
    grad = grad.contiguous()
    n_tok, d = grad.shape
    out = torch.zeros((num_embeddings, d), device=grad.device, dtype=torch.float32)
    BLOCK_D = 256
    grid = (n_tok, triton.cdiv(d, BLOCK_D))
    index_add_rows_kernel[grid](ids, grad, out, d, grad.stride(0), out.stride(0), BLOCK_D=BLOCK_D)
    return out


class ModelNew(nn.Module):
    def __init__(self, num_embeddings):
        super().__init__()
        self.num_embeddings = num_embeddings

    def forward(self, ids, grad):
        return triton_index_add(ids, grad, self.num_embeddings)


def get_inputs():
    ids = torch.randint(0, V, (T,), dtype=torch.int64)
    grad = torch.randn(T, D, dtype=torch.float32)
    return [ids, grad]


def get_init_inputs():
    return [V]


TEST_SHAPES = [
    {"T": 256, "D": 128, "V": 64},
    {"T": 129, "D": 100, "V": 37},
]
