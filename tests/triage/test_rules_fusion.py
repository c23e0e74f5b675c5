"""TL128: back-to-back launches passing an intermediate through global memory."""

from __future__ import annotations

from triage_helpers import locate, of

CHAIN = """
import torch
import triton
import triton.language as tl

@triton.jit
def bias_add(x_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)

@triton.jit
def relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)

def forward(x, b):
    tmp = torch.empty((4096, 1024), dtype=torch.float16, device=x.device)
    out = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, 1024),)
    bias_add[grid](x, b, tmp, n, BLOCK=1024)
    relu[grid](tmp, out, n, BLOCK=1024)
    return out
"""


def test_tl128_fires_at_the_consumer_with_the_bytes() -> None:
    (f,) = of(CHAIN, "TL128")
    assert f.span == locate(CHAIN, "relu[grid](tmp, out, n, BLOCK=1024)")
    assert f.kernel == "bias_add"
    assert f.data["bytes"] == 2 * 4096 * 1024 * 2
    assert "16.0 MiB" in f.message


def test_tl128_says_unknown_when_the_shape_does_not_resolve() -> None:
    src = CHAIN.replace(
        "torch.empty((4096, 1024), dtype=torch.float16, device=x.device)", "torch.empty_like(x)"
    )
    (f,) = of(src, "TL128")
    assert f.data["bytes"] is None and "unknown bytes" in f.message


def test_tl128_silent_when_the_intermediate_is_returned_or_not_allocated_here() -> None:
    assert not of(CHAIN.replace("return out", "return out, tmp"), "TL128")
    passed_in = CHAIN.replace("def forward(x, b):", "def forward(x, b, tmp):").replace(
        "    tmp = torch.empty((4096, 1024), dtype=torch.float16, device=x.device)\n", ""
    )
    assert not of(passed_in, "TL128")
    # Independent launches (no tensor flows from one to the other).
    independent = CHAIN.replace("relu[grid](tmp, out, n, BLOCK=1024)", "relu[grid](x, out, n, BLOCK=1024)")
    assert not of(independent, "TL128")


def test_tl128_silent_for_different_grids_branches_and_host_use_between() -> None:
    # A per-block partial then a one-program final reduction: the split needs the grid-wide sync.
    two_stage = CHAIN.replace("relu[grid](tmp, out, n, BLOCK=1024)", "relu[(1,)](tmp, out, n, BLOCK=1024)")
    assert not of(two_stage, "TL128")
    branches = CHAIN.replace(
        "    bias_add[grid](x, b, tmp, n, BLOCK=1024)\n    relu[grid](tmp, out, n, BLOCK=1024)\n",
        "    if n > 4:\n        bias_add[grid](x, b, tmp, n, BLOCK=1024)\n    else:\n        relu[grid](tmp, out, n, BLOCK=1024)\n",
    )
    assert not of(branches, "TL128")
    host_use = CHAIN.replace(
        "    relu[grid](tmp, out, n, BLOCK=1024)\n",
        "    torch.cumsum(tmp, 0, out=tmp)\n    relu[grid](tmp, out, n, BLOCK=1024)\n",
    )
    assert not of(host_use, "TL128")


def test_tl128_silent_when_the_consumer_reads_the_whole_intermediate_in_a_loop() -> None:
    looped = CHAIN.replace(
        "    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)",
        "    acc = tl.zeros([BLOCK], tl.float32)\n"
        "    for i in range(0, n, BLOCK):\n"
        "        acc += tl.load(x_ptr + i + tl.arange(0, BLOCK))\n"
        "    tl.store(out_ptr + offs, acc, mask=mask)",
    )
    assert not of(looped, "TL128")
