"""Embedding-style gather: out[i] = table[idx[i]], element by element through loaded indices.

Fine on NVIDIA (uncoalesced but vectorized), but triton-ascend lowers the indexed load to a scalar loop
(DiscreteMemAccess). Gathering whole rows (scalar index, contiguous columns) avoids that.
"""

import triton
import triton.language as tl


@triton.jit
def gather_kernel(table_ptr, idx_ptr, out_ptr, n_indices, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_indices
    idx = tl.load(idx_ptr + offsets, mask=mask, other=0)
    values = tl.load(table_ptr + idx, mask=mask)
    tl.store(out_ptr + offsets, values, mask=mask)


def gather(table, idx):
    out = table.new_empty(idx.shape)
    n = idx.numel()
    grid = (triton.cdiv(n, 1024),)
    gather_kernel[grid](table, idx, out, n, BLOCK_SIZE=1024)
    return out


if __name__ == "__main__":
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: run it with TRITON_INTERPRET=1
    table = torch.randn(4096, device=device)
    idx = torch.randint(0, 4096, (10000,), device=device, dtype=torch.int32)
    torch.testing.assert_close(gather(table, idx), table[idx])
