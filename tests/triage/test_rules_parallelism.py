"""TL104, TL105, TL112: one program per element, scalar loads per program, contended atomics."""

from __future__ import annotations

from triage_helpers import locate, of

PER_ELEMENT = """
import triton
import triton.language as tl

@triton.jit
def scale_kernel(x_ptr, out_ptr, alpha):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    tl.store(out_ptr + pid, x * alpha)

def scale(x, out):
    n = x.numel()
    scale_kernel[(n,)](x, out, 2.0)
"""


def test_tl104_fires_at_the_grid_of_a_per_element_launch() -> None:
    (f,) = of(PER_ELEMENT, "TL104")
    assert f.span == locate(PER_ELEMENT, "(n,)")
    assert f.kernel == "scale_kernel"


def test_tl104_silent_for_block_kernels_and_cdiv_grids(data_source) -> None:
    assert not of(data_source("good_softmax.py"), "TL104")
    assert not of(PER_ELEMENT.replace("(n,)", "(triton.cdiv(n, 1),)"), "TL104")
    # A single scalar program (e.g. writing a flag) is deliberate, not per-element launching.
    assert not of(PER_ELEMENT.replace("(n,)", "(1,)"), "TL104")


def test_tl105_fires_on_each_scalar_load_by_program_id() -> None:
    (f,) = of(PER_ELEMENT, "TL105")
    assert f.span == locate(PER_ELEMENT, "tl.load(x_ptr + pid)")
    assert "x_ptr + pid" in f.message


def test_tl105_silent_for_per_row_scalars_in_block_kernels() -> None:
    # Loading one scalar per row (a scale, a length) next to block loads is the normal pattern.
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def rowscale(x_ptr, s_ptr, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        s = tl.load(s_ptr + row)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols)
        tl.store(x_ptr + row * stride + cols, x * s)
    """
    assert not of(src, "TL105")


ATOMIC_LOOP = """
import triton
import triton.language as tl

@triton.jit
def sum_kernel(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.atomic_add(total_ptr, tl.sum(x, axis=0))
"""


def test_tl112_fires_on_scalar_atomic_in_loop() -> None:
    (f,) = of(ATOMIC_LOOP, "TL112")
    assert f.span == locate(ATOMIC_LOOP, "tl.atomic_add(total_ptr, tl.sum(x, axis=0))")
    assert "total_ptr" in f.message and f"line {locate(ATOMIC_LOOP, 'for start').line}" in f.message


def test_tl112_fires_once_per_element_without_blocks() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def count(x_ptr, hits_ptr):
        i = tl.program_id(0)
        tl.atomic_add(hits_ptr, tl.load(x_ptr + i))
    """
    (f,) = of(src, "TL112")
    assert f.span == locate(src, "tl.atomic_add(hits_ptr, tl.load(x_ptr + i))")


def test_tl112_silent_for_one_atomic_per_program_and_block_atomics() -> None:
    once = """
    import triton
    import triton.language as tl

    @triton.jit
    def sum_kernel(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
        acc = 0.0
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            acc += tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
        tl.atomic_add(total_ptr, acc)
    """
    assert not of(once, "TL112")
    histogram = """
    import triton
    import triton.language as tl

    @triton.jit
    def hist(x_ptr, bins_ptr, n, BLOCK: tl.constexpr):
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            b = tl.load(x_ptr + offs, mask=offs < n, other=0)
            tl.atomic_add(bins_ptr + b, 1, mask=offs < n)
    """
    assert not of(histogram, "TL112")


def test_tl112_silent_for_a_grid_barrier_without_per_element_memory() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def barrier(sem, expected):
        old = tl.atomic_add(sem, 1, sem="release")
        done = False
        while not done:
            now = tl.atomic_add(sem, 0, sem="acquire")
            done = now >= expected
    """
    assert not of(src, "TL112")


def test_tl112_silent_for_an_address_per_program() -> None:
    """A counter per output (`arrivals + tl.program_id(0)`, programs of axis 1 meeting there) is no single address
    for the grid."""
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def finish(x_ptr, out_ptr, arrivals_ptr):
        r = tl.program_id(0)
        v = tl.load(x_ptr + r * tl.num_programs(1) + tl.program_id(1))
        tl.store(out_ptr + r * tl.num_programs(1) + tl.program_id(1), v)
        done = tl.atomic_add(arrivals_ptr + tl.program_id(0), 1)
        last = tl.atomic_add(arrivals_ptr + r, 1)
    """
    assert not of(src, "TL112")
