"""Pointer element types inferred from what the loaded values flow into, before the fp32 guess (issue 24,
Deliver 2): a length compared with an index (a mask) or bounding a while loop, a start added to an index,
int8 operands of a dot into an int32 accumulator, fp16 stores of a cast. A cast `.to(tl.int32)` of a loaded
value says nothing about the source, and a loaded float scaled by an index stays a float. The hint that lists
guesses says what was inferred and from which line."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.compiler.variants import variant_guesses
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

HEADER = "import triton\nimport triton.language as tl\n\n"

LENGTHS = (
    HEADER
    + """
@triton.jit
def combine(out_ptr, partial_ptr, lens_ptr, starts_ptr, MAXP: tl.constexpr, PART: tl.constexpr):
    seq = tl.program_id(0)
    n = tl.load(lens_ptr + seq)
    parts = tl.cdiv(n, PART)
    offs = tl.arange(0, MAXP)
    x = tl.load(partial_ptr + seq * MAXP + offs, mask=offs < parts, other=0.0)
    first = tl.load(starts_ptr + seq)
    cols = first + offs
    tl.store(out_ptr + seq * MAXP + offs, x, mask=cols >= 0)
"""
)

WHILE = (
    HEADER
    + """
@triton.jit
def walk(out_ptr, begin_ptr, end_ptr):
    i = tl.load(begin_ptr + tl.program_id(0))
    stop = tl.load(end_ptr + tl.program_id(0))
    total = 0.0
    while i < stop:
        total += 1.0
        i += 1
    tl.store(out_ptr + tl.program_id(0), total)
"""
)

INT8_DOT = (
    HEADER
    + """
@triton.jit
def mm_i8(a_ptr, b_ptr, c_ptr, d_ptr, scale_ptr, K, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BM), dtype=tl.int32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + k + rk[None, :])
        b = tl.load(b_ptr + (k + rk[:, None]) * BM + rm[None, :])
        acc += tl.dot(a, b)
    s = tl.load(scale_ptr + rm)
    c = (acc.to(tl.float32) * s[:, None]).to(tl.float16)
    tl.store(c_ptr + rm[:, None] * BM + rm[None, :], c)
    tl.store(d_ptr + rm[:, None] * BM + rm[None, :], acc)
"""
)

INT8_DOT_ACC = (
    HEADER
    + """
@triton.jit
def mm_acc(x_ptr, w_ptr, o_ptr, BM: tl.constexpr):
    r = tl.arange(0, BM)
    acc = tl.zeros((BM, BM), dtype=tl.int32)
    x = tl.load(x_ptr + r[:, None] * BM + r[None, :])
    w = tl.load(w_ptr + r[:, None] * BM + r[None, :])
    acc = tl.dot(x, w, acc, out_dtype=tl.int32)
    tl.store(o_ptr + r[:, None] * BM + r[None, :], acc)
"""
)

NOT_INTEGER = (
    HEADER
    + """
@triton.jit
def biased(q_ptr, slope_ptr, n_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    slope = tl.load(slope_ptr)
    q = tl.load(q_ptr + offs)
    n = tl.load(n_ptr).to(tl.int32)
    acc = q + slope * offs
    for i in range(n):
        acc += 1.0
    tl.store(o_ptr + offs, acc)
"""
)


def spec_of(source: str, kernel: str):
    return next(s for s in specializations(source, kernel) if s.complete)


def line_of(source: str, text: str) -> int:
    return next(i for i, ln in enumerate(source.splitlines(), 1) if text in ln)


def test_a_length_compared_with_an_index_and_a_start_added_to_one_are_integers() -> None:
    spec = spec_of(LENGTHS, "combine")
    assert spec.signature["lens_ptr"] == "*i32"
    assert f"a comparison with an index at line {line_of(LENGTHS, 'mask=offs < parts')}" in spec.provenance["lens_ptr"]
    assert spec.signature["starts_ptr"] == "*i32"
    assert f"index arithmetic at line {line_of(LENGTHS, 'cols = first + offs')}" in spec.provenance["starts_ptr"]
    assert spec.signature["partial_ptr"] == "*fp32"  # loaded under a mask, never compared itself


def test_loaded_bounds_of_a_while_loop_are_integers() -> None:
    spec = spec_of(WHILE, "walk")
    assert spec.signature["begin_ptr"] == "*i32" and spec.signature["end_ptr"] == "*i32"
    assert "a while-loop bound" in spec.provenance["end_ptr"]


def test_operands_of_a_dot_into_an_int32_accumulator_are_int8() -> None:
    spec = spec_of(INT8_DOT, "mm_i8")
    assert spec.signature["a_ptr"] == "*i8" and spec.signature["b_ptr"] == "*i8"
    line = line_of(INT8_DOT, "acc += tl.dot")
    assert f"tl.dot into an int32 accumulator at line {line}" in spec.provenance["a_ptr"]
    assert spec.signature["c_ptr"] == "*fp16"  # the stored value is cast to fp16
    assert spec.signature["scale_ptr"] == "*fp32"  # multiplied with the cast accumulator: a float
    spec = spec_of(INT8_DOT_ACC, "mm_acc")
    assert spec.signature["x_ptr"] == "*i8" and spec.signature["w_ptr"] == "*i8"


def test_a_cast_source_and_a_float_scaled_by_an_index_stay_guessed_floats() -> None:
    spec = spec_of(NOT_INTEGER, "biased")
    assert spec.signature["n_ptr"] == "*fp32"  # `.to(tl.int32)` before the range(): the source may be anything
    assert spec.signature["slope_ptr"] == "*fp32" and spec.signature["q_ptr"] == "*fp32"


def test_the_guess_list_says_what_was_inferred_and_from_which_line() -> None:
    guesses = variant_guesses(spec_of(INT8_DOT, "mm_i8"))
    line = line_of(INT8_DOT, "acc += tl.dot")
    assert guesses["a_ptr"] == (
        f"a_ptr as *i8 (values loaded from it are operands of a tl.dot into an int32 accumulator at line {line})"
    )
    assert guesses["scale_ptr"] == "scale_ptr as *fp32"  # nothing inferred: just the guess


def test_they_compile_on_the_inferred_types(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    for source, kernel in ((LENGTHS, "combine"), (INT8_DOT, "mm_i8"), (INT8_DOT_ACC, "mm_acc")):
        path = tmp_path / f"{kernel}.py"
        path.write_text(source)
        result = analyze_kernel(source, str(path), kernel, "sm_90", cuda_runner, max_variants=1)
        assert result.primary is not None, (kernel, [e.message[:300] for v in result.variants for e in v.errors])
