"""TL106-TL108: loop-invariant loads, scalar reduction loops, multi-pass reads of one row."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity, Span

INVARIANT = """
import triton
import triton.language as tl

@triton.jit
def scale_rows(x_ptr, scale_ptr, n, BLOCK: tl.constexpr):
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        s = tl.load(scale_ptr + tl.arange(0, BLOCK))
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, x * s, mask=offs < n)
"""


def test_tl106_fires_on_load_that_ignores_the_loop() -> None:
    (f,) = of(INVARIANT, "TL106")
    assert f.span == locate(INVARIANT, "tl.load(scale_ptr + tl.arange(0, BLOCK))")
    assert f"line {locate(INVARIANT, 'for start').line}" in f.message and "hoist" in f.message


def test_tl106_silent_when_address_changes_or_memory_is_written() -> None:
    hoisted = INVARIANT.replace(
        "    for start in range(0, n, BLOCK):\n        offs = start + tl.arange(0, BLOCK)\n        s = tl.load(scale_ptr + tl.arange(0, BLOCK))\n",
        "    s = tl.load(scale_ptr + tl.arange(0, BLOCK))\n    for start in range(0, n, BLOCK):\n        offs = start + tl.arange(0, BLOCK)\n",
    )
    assert "s = tl.load" in hoisted and not of(hoisted, "TL106")
    # Reads of memory the loop itself writes are not invariant.
    accumulate = """
    import triton
    import triton.language as tl

    @triton.jit
    def accumulate(acc_ptr, x_ptr, steps, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        for i in range(steps):
            acc = tl.load(acc_ptr + offs)
            tl.store(acc_ptr + offs, acc + tl.load(x_ptr + i * BLOCK + offs))
    """
    assert not of(accumulate, "TL106")


def test_tl106_silent_on_tutorial_matmul(data_source) -> None:
    assert not of(data_source("good_matmul.py"), "TL106")


SCALAR_DOT = """
import triton
import triton.language as tl

@triton.jit
def naive_mm(a_ptr, b_ptr, c_ptr, K, N):
    row = tl.program_id(0)
    col = tl.program_id(1)
    acc = 0.0
    for k in range(K):
        a = tl.load(a_ptr + row * K + k)
        b = tl.load(b_ptr + k * N + col)
        acc += a * b
    tl.store(c_ptr + row * N + col, acc)
"""


def test_tl107_fires_on_scalar_sum_of_products_and_suggests_dot() -> None:
    (f,) = of(SCALAR_DOT, "TL107")
    assert f.span == locate(SCALAR_DOT, "for k in range(K)")
    assert "tl.dot" in f.message and "acc" in f.message


def test_tl107_suggests_sum_for_a_plain_scalar_sum() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def row_sum(x_ptr, out_ptr, n):
        row = tl.program_id(0)
        total = 0.0
        for j in range(n):
            total += tl.load(x_ptr + row * n + j)
        tl.store(out_ptr + row, total)
    """
    (f,) = of(src, "TL107")
    assert f.span == locate(src, "for j in range(n)")
    assert "tl.sum" in f.message


def test_tl107_silent_on_block_loops(data_source) -> None:
    assert not of(data_source("good_matmul.py"), "TL107")
    # A per-iteration scalar (an expert weight) scaling a block update is fine.
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def combine(x_ptr, w_ptr, out_ptr, E, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for e in range(E):
            w = tl.load(w_ptr + e)
            acc += w * tl.load(x_ptr + e * BLOCK + offs)
        tl.store(out_ptr + offs, acc)
    """
    assert not of(src, "TL107")


MULTI_PASS = """
import triton
import triton.language as tl

@triton.jit
def norm(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = x_ptr + tl.program_id(0) * n
    total = 0.0
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(row + cols, mask=cols < n, other=0.0), axis=0)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(row + cols, mask=cols < n, other=0.0)
        tl.store(y_ptr + cols, x / total, mask=cols < n)
"""


def test_tl108_silent_on_the_two_pass_minimum() -> None:
    # Changed (precision on public code, docs/precision.md): one statistics pass plus the pass that writes is
    # the minimum for a row longer than a block (Liger's multi-block softmax), so it is not reported at all.
    assert not of(MULTI_PASS, "TL108")


def test_tl108_warns_when_statistics_passes_could_be_fused() -> None:
    # max pass + sum pass + write pass: the two read-only passes fuse (online softmax), so it stays a warning
    src = MULTI_PASS.replace(
        "    for start in range(0, n, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n        x = tl.load",
        "    for start in range(0, n, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n"
        "        total += tl.max(tl.load(row + cols, mask=cols < n, other=0.0), axis=0)\n"
        "    for start in range(0, n, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n        x = tl.load",
    )
    # one finding per row (issue 24: it used to repeat itself on every extra pass), naming every re-read
    (f,) = of(src, "TL108")
    assert f.severity == Severity.WARNING
    assert f.span == locate(src, "tl.load(row + cols, mask=cols < n, other=0.0)", 2)
    assert "3 passes" in f.message and "one-pass formulation" in f.message and len(f.data["reread_lines"]) == 2


def test_tl108_on_the_bundled_naive_softmax_reports_the_row_once(data_source) -> None:
    from triage_helpers import EXAMPLES

    source = (EXAMPLES / "naive_softmax.py").read_text(encoding="utf-8")
    (f,) = of(source, "TL108")
    assert f.span.line == 36 and f.data["reread_lines"] == [34, 40]  # the loops of passes 2 and 3
    assert f.kernel == "softmax_kernel" and "input_ptr" in f.message


def test_tl108_silent_on_one_pass_softmax_and_single_loop_matmul(data_source) -> None:
    assert not of(data_source("good_softmax.py"), "TL108")
    assert not of(data_source("good_matmul.py"), "TL108")


def test_tl108_silent_when_loops_read_different_inputs() -> None:
    src = MULTI_PASS.replace("x = tl.load(row + cols", "x = tl.load(y_ptr + cols")
    assert not of(src, "TL108")


def test_loop_spans_are_ordinary_spans() -> None:
    (f,) = of(SCALAR_DOT, "TL107")
    assert isinstance(f.span, Span) and f.span.line == f.span.end_line


def test_tl108_silent_for_loops_in_exclusive_branches_and_pointer_increments() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def spmm(q_ptr, a_ptr, stride, nnz, COMPRESSED: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        if COMPRESSED:
            for _ in range(nnz):
                acc += tl.load(a_ptr + offs)
                a_ptr += stride
        else:
            for i in range(nnz):
                q = tl.load(q_ptr + i)
                acc += tl.load(a_ptr + q * stride + offs)
        tl.store(a_ptr + offs, acc)
    """
    assert not of(src, "TL108")


def test_tl106_silent_for_a_load_under_a_loop_varying_condition() -> None:
    first_only = INVARIANT.replace(
        "        s = tl.load(scale_ptr + tl.arange(0, BLOCK))\n",
        "        if start == 0:\n            s = tl.load(scale_ptr + tl.arange(0, BLOCK))\n        else:\n            s = 1.0\n",
    )
    assert "if start == 0" in first_only
    assert not of(first_only, "TL106")
    # under a constexpr flag the load still runs on every iteration: reported
    flagged = INVARIANT.replace("n, BLOCK: tl", "n, HAS_SCALE: tl.constexpr, BLOCK: tl").replace(
        "        s = tl.load(scale_ptr + tl.arange(0, BLOCK))\n",
        "        s = 1.0\n        if HAS_SCALE:\n            s = tl.load(scale_ptr + tl.arange(0, BLOCK))\n",
    )
    assert len(of(flagged, "TL106")) == 1
