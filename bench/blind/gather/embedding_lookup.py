"""Embedding lookup: out[i, :] = weight[ids[i], :] (F.embedding), fp32.

weight is an nn.Parameter of shape (NUM_EMB, DIM); ids is (N,) int64.

Known problems:
- lines 34-38, 48: one token per program (8192 small CTAs; grid dim 1 is 1 because BLOCK_D covers the row): each CTA does a dependent scalar id load and then copies a single 4 KB row, so little is in flight per CTA; several tokens per program would hide the id-load latency better (otherwise it is a plain bandwidth-bound row copy)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_EMB = 50000
DIM = 1024
N = 8192


class Model(nn.Module):
    def __init__(self, num_emb=None, dim=None):
        super().__init__()
        num_emb = NUM_EMB if num_emb is None else num_emb
        dim = DIM if dim is None else dim
        self.weight = nn.Parameter(torch.randn(num_emb, dim))

    def forward(self, ids):
        return nn.functional.embedding(ids, self.weight)


@triton.jit
def embedding_kernel(ids_ptr, w_ptr, out_ptr, D, stride_w, stride_out,
                     BLOCK_D: tl.constexpr):
    pid_t = tl.program_id(0)
    pid_d = tl.program_id(1)
    row = tl.load(ids_ptr + pid_t).to(tl.int64)
    offs = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = offs < D
    vals = tl.load(w_ptr + row * stride_w + offs, mask=mask)
    tl.store(out_ptr + pid_t.to(tl.int64) * stride_out + offs, vals, mask=mask)


def embedding(ids, weight):
    n = ids.numel()
    d = weight.shape[1]
    ids_flat = ids.reshape(-1).contiguous()
    weight = weight.contiguous()
    out = torch.empty((n, d), device=weight.device, dtype=weight.dtype)
    BLOCK_D = min(1024, triton.next_power_of_2(d))
    grid = (n, triton.cdiv(d, BLOCK_D))
    embedding_kernel[grid](ids_flat, weight, out, d, weight.stride(0), out.stride(0),
                           BLOCK_D=BLOCK_D)
    return out.reshape(*ids.shape, d)


class ModelNew(nn.Module):
    def __init__(self, num_emb=None, dim=None):
        super().__init__()
        num_emb = NUM_EMB if num_emb is None else num_emb
        dim = DIM if dim is None else dim
        self.weight = nn.Parameter(torch.randn(num_emb, dim))

    def forward(self, ids):
        return embedding(ids, self.weight)


def get_inputs():
    return [torch.randint(0, NUM_EMB, (N,), dtype=torch.int64)]


def get_init_inputs():
    return [NUM_EMB, DIM]


TEST_SHAPES = [
    {"NUM_EMB": 100, "DIM": 64, "N": 16},
    {"NUM_EMB": 37, "DIM": 129, "N": 23},
]
