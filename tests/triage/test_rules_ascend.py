"""TL116-TL120: Ascend pitfalls (gathers, integer compares, big unrolls, GPU-only options)."""

from __future__ import annotations

from triage_helpers import EXAMPLES, locate, of

from tritonlens.analysis.core.findings import Severity


def test_tl116_fires_on_the_gather_example() -> None:
    source = (EXAMPLES / "gather.py").read_text(encoding="utf-8")
    (f,) = of(source, "TL116")
    assert f.span == locate(source, "tl.load(table_ptr + idx, mask=mask)")
    assert f.kernel == "gather_kernel" and "idx_ptr" in f.message and f.platforms == ("ascend",)


def test_tl116_fires_on_directly_nested_gather() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(src, idx, out, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out + offs, tl.load(src + tl.load(idx + offs)))
    """
    (f,) = of(src, "TL116")
    assert f.span == locate(src, "tl.load(src + tl.load(idx + offs))")


def test_tl116_silent_for_scalar_row_index_with_contiguous_columns() -> None:
    # Embedding lookup by rows: one scalar index per program, contiguous columns -> contiguous DMA.
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def embedding(table, ids, out, dim, BLOCK: tl.constexpr):
        token = tl.program_id(0)
        row = tl.load(ids + token)
        cols = tl.arange(0, BLOCK)
        x = tl.load(table + row * dim + cols, mask=cols < dim)
        tl.store(out + token * dim + cols, x, mask=cols < dim)
    """
    assert not of(src, "TL116")


INT64_CMP = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n
    tl.store(x_ptr + offs, 0.0, mask=mask)
"""


def test_tl117_fires_on_int64_block_compare() -> None:
    (f,) = of(INT64_CMP, "TL117")
    assert f.span == locate(INT64_CMP, "offs < n")
    assert f.severity == Severity.WARNING


def test_tl117_follows_the_assignment_that_reaches_the_compare() -> None:
    # `cols` is int32 in the first loop and only widened in the second.
    source = (EXAMPLES / "naive_softmax.py").read_text(encoding="utf-8")
    lines = {f.span.line for f in of(source, "TL117")}
    widened = locate(source, ".to(tl.int64)").line
    assert lines and all(line > widened for line in lines)


def test_tl117_silent_for_int32_offsets(data_source) -> None:
    assert not of(INT64_CMP.replace(".to(tl.int64)", ""), "TL117")
    assert not of(data_source("good_softmax.py"), "TL117")


WHERE = """
import triton
import triton.language as tl

@triton.jit
def center(x_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(cols < n, x - mean, 0.0)
    tl.store(x_ptr + cols, xc, mask=cols < n)
"""


def test_tl118_fires_on_integer_compare_in_where_only() -> None:
    (f,) = of(WHERE, "TL118")
    assert f.span == locate(WHERE, "cols < n", 2)


def test_tl118_silent_for_float_compare_and_data_compare() -> None:
    assert not of(WHERE.replace("tl.where(cols < n", "tl.where(cols.to(tl.float32) < n"), "TL118")
    assert not of(WHERE.replace("tl.where(cols < n", "tl.where(x > 0"), "TL118")


def test_tl118_silent_for_compare_of_random_floats() -> None:
    # tl.rand is seeded with the offsets but returns float32: `r > p` is a float compare (dropout)
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def dropout(x_ptr, y_ptr, n, p, seed, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        r = tl.rand(seed, offs)
        tl.store(y_ptr + offs, tl.where(r > p, x / (1 - p), 0.0), mask=offs < n)
        tl.store(y_ptr + offs, tl.where(tl.randn(seed, offs) > 0.0, x, 0.0), mask=offs < n)
    """
    assert not of(src, "TL118")
    (f,) = of(src.replace("r > p", "offs > p"), "TL118")
    assert f.span == locate(src.replace("r > p", "offs > p"), "offs > p")


UNROLL = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.static_range(STEPS):
        acc += tl.load(x_ptr + i * BLOCK + offs)
    tl.store(out_ptr + offs, acc)

k[(1,)](x, y, BLOCK=1024, STEPS=64)
"""


def test_tl119_fires_on_large_static_range_with_tile_loads() -> None:
    (f,) = of(UNROLL, "TL119")
    assert f.span == locate(UNROLL, "tl.static_range(STEPS)")
    assert "64" in f.message


def test_tl119_silent_for_short_unrolls_and_tl_range() -> None:
    assert not of(UNROLL.replace("STEPS=64", "STEPS=4"), "TL119")
    assert not of(UNROLL.replace("tl.static_range", "tl.range"), "TL119")


def test_tl120_fires_on_launch_options_and_autotune_configs() -> None:
    src = UNROLL.replace("STEPS=64)", "STEPS=4, num_warps=8)")
    (f,) = of(src, "TL120")
    launch = locate(src, "num_warps=8")
    assert (f.span.line, f.span.col) == (launch.line, launch.col + len("num_warps="))
    assert f.severity == Severity.HINT
    matmul = (EXAMPLES / "matmul.py").read_text(encoding="utf-8")
    (g,) = of(matmul, "TL120")
    assert g.span == locate(matmul, "num_warps=8")


def test_tl120_silent_without_gpu_options(data_source) -> None:
    assert not of(data_source("good_matmul.py"), "TL120")
