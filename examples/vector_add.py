"""Elementwise addition as in the Triton vector-add tutorial: a clean baseline with no findings on CUDA.

https://triton-lang.org/main/getting-started/tutorials/01-vector-add.html
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def add(x, y):
    output = x.new_empty(x.shape)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


if __name__ == "__main__":
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: run it with TRITON_INTERPRET=1
    a = torch.rand(98432, device=device)
    b = torch.rand(98432, device=device)
    torch.testing.assert_close(add(a, b), a + b)
