"""Row-wise softmax written the naive way: three passes over every row, small blocks, 64-bit offsets.

`tritonlens check examples/naive_softmax.py` explains what is slow here; the Triton fused-softmax tutorial
(https://triton-lang.org/main/getting-started/tutorials/02-fused-softmax.html) shows the one-pass version.
"""

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(
    output_ptr,
    input_ptr,
    temperature_ptr,
    input_row_stride,
    output_row_stride,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    row_in = input_ptr + row * input_row_stride
    row_out = output_ptr + row * output_row_stride

    # Pass 1: the row maximum.
    row_max = -float("inf")
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_in + cols, mask=cols < n_cols, other=-float("inf"))
        row_max = tl.maximum(row_max, tl.max(x, axis=0))

    # Pass 2: the normalizer.
    denom = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_in + cols, mask=cols < n_cols, other=-float("inf"))
        denom += tl.sum(tl.exp(x - row_max), axis=0)

    # Pass 3: normalize and write.
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = (start + tl.arange(0, BLOCK_SIZE)).to(tl.int64)
        temperature = tl.load(temperature_ptr)
        x = tl.load(row_in + cols, mask=cols < n_cols, other=-float("inf"))
        y = tl.exp((x - row_max) / temperature) / denom
        tl.store(row_out + cols, y, mask=cols < n_cols)


def softmax(x, temperature):
    n_rows, n_cols = x.shape
    y = x.new_empty(x.shape)
    softmax_kernel[(n_rows,)](y, x, temperature, x.stride(0), y.stride(0), n_cols, BLOCK_SIZE=32)
    return y


if __name__ == "__main__":
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: run it with TRITON_INTERPRET=1
    rows = 1823 if device == "cuda" else 64  # the CPU interpreter runs one program per row: keep it short
    x = torch.randn(rows, 781, device=device)
    t = torch.ones(1, device=device)
    torch.testing.assert_close(softmax(x, t), torch.softmax(x, dim=1))
