"""TL126 (replicated lanes) and TL127 (accesses narrower than 128 bits), from literal, variable, default and
launch-expression block sizes."""

from __future__ import annotations

from triage_helpers import locate, of

KERNEL = """
import torch
import triton
import triton.language as tl

@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
"""


def launched(call: str, prelude: str = "") -> str:
    return (
        KERNEL
        + f"""
def run(x, y{prelude}):
    out = torch.empty_like(x)
    n = x.numel()
    {call}
    return out
"""
    )


def test_tl126_fires_for_a_literal_block_below_the_thread_count() -> None:
    src = launched("add[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64)")
    (f,) = of(src, "TL126")
    assert f.span == locate(src, "64", 2)
    assert f.data["threads"] == 128 and f.data["elements"] == 64
    assert not of(src, "TL127")


def test_tl126_follows_a_variable_an_argument_default_and_num_warps() -> None:
    via_variable = launched("BS = 32\n    add[(triton.cdiv(n, BS),)](x, y, out, n, BLOCK=BS)")
    assert of(via_variable, "TL126")
    via_default = launched("add[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)", ", block=64")
    assert of(via_default, "TL126")
    via_expression = launched("add[(triton.cdiv(n, 2 * 32),)](x, y, out, n, BLOCK=2 * 32)")
    assert of(via_expression, "TL126")
    # 64 elements on one warp: every lane has distinct work.
    fixed = launched("add[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64, num_warps=1)")
    assert not of(fixed, "TL126")


def test_tl127_fires_when_each_thread_gets_less_than_16_bytes() -> None:
    src = launched("add[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)")
    (f,) = of(src, "TL127")
    assert f.data["bytes_per_thread"] == 8
    assert "assuming 4-byte elements" in f.message
    assert not of(launched("add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)"), "TL127")
    assert not of(launched("add[(triton.cdiv(n, 512),)](x, y, out, n, BLOCK=512, num_warps=4)"), "TL127")


def test_unresolved_sizes_and_dot_kernels_are_not_guessed() -> None:
    src = launched("add[(triton.cdiv(n, bs),)](x, y, out, n, BLOCK=bs)", ", bs=None")
    assert not of(src, "TL126") and not of(src, "TL127")
    runtime = launched("add[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64, num_warps=nw)", ", nw=None")
    assert not of(runtime, "TL126")
    # One program (a final reduction, a unit test): its lanes do not matter.
    assert not of(launched("add[(1,)](x, y, out, n, BLOCK=64)"), "TL126")


def test_2d_tiles_multiply_their_axes() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n, BM: tl.constexpr = 8, BN: tl.constexpr = 8):
        rows = tl.arange(0, BM)
        cols = tl.arange(0, BN)
        x = tl.load(x_ptr + rows[:, None] * n + cols[None, :])
        tl.store(x_ptr + rows[:, None] * n + cols[None, :], x * 2)
    """
    (f,) = of(src, "TL126")
    assert f.data["elements"] == 64
    assert not of(src.replace("= 8", "= 32"), "TL126")


def test_sizes_that_come_only_from_the_files_tests_are_not_launch_evidence() -> None:
    # held-out (mamba3): CHUNK_SIZE reached the launch only from `test_...(): chunk_size = 16`
    wrapper = KERNEL + """
def run(x, y, block):
    out = torch.empty_like(x)
    n = x.numel()
    add[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out
"""
    from_test = wrapper + "\ndef test_run():\n    block = 256\n    run(x, y, block)\n"
    assert not of(from_test, "TL127")
    from_main = wrapper + "\nif __name__ == '__main__':\n    run(x, y, 256)\n"
    assert not of(from_main, "TL127")
    from_code = wrapper + "\ndef forward(x, y):\n    return run(x, y, 256)\n"
    assert len(of(from_code, "TL127")) == 1
