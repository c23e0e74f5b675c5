"""When the compile of a guessed specialization fails because of the guess, the pipeline compiles the next most
likely guess the error points to (bounded), and the findings say which guess compiled and which did not."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.retry import retry_guess
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

HEADER = "import triton\nimport triton.language as tl\n\n"

DOT = (
    HEADER
    + """
@triton.jit
def mixed_dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    offs = r[:, None] * BLOCK + r[None, :]
    a = tl.load(a_ptr + offs).to(tl.float16)
    b = tl.load(b_ptr + offs)
    tl.store(c_ptr + offs, tl.dot(a, b))
"""
)

SELECT = (
    HEADER
    + """
@triton.jit
def pick_source(x_ptr, other, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if n > 0:
        src = x_ptr
    else:
        src = other
    tl.store(out_ptr + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
"""
)

BIG_TILE = (
    HEADER
    + """
@triton.jit
def big_tile(out_ptr, BLOCK_A: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_C: tl.constexpr,
             BLOCK_D: tl.constexpr, BLOCK_E: tl.constexpr):
    acc = tl.zeros((BLOCK_A, BLOCK_B, BLOCK_C, BLOCK_D, BLOCK_E), dtype=tl.float32)
    total = tl.sum(tl.sum(tl.sum(tl.sum(acc, axis=4), axis=3), axis=2), axis=1)
    tl.store(out_ptr + tl.arange(0, BLOCK_A), total)
"""
)


def first_spec(source: str, kernel: str):
    return next(s for s in specializations(source, kernel) if s.complete)


def test_dtype_mismatch_in_dot_retries_guessed_pointers_as_the_other_dtype() -> None:
    spec = first_spec(DOT, "mixed_dot")
    assert spec.signature["b_ptr"] == "*fp32"
    nxt = retry_guess(spec, DOT, "Both operands must be same dtype. Got fp16 and fp32", 11)
    assert nxt is not None and nxt.signature["b_ptr"] == "*fp16"
    assert "retried" in nxt.label and "retried as *fp16" in nxt.provenance["b_ptr"]


def test_an_error_that_names_no_guess_gives_no_retry() -> None:
    spec = first_spec(DOT, "mixed_dot")
    assert retry_guess(spec, DOT, "NameError('foo is not defined')", 9) is None


def analyze(tmp_path: Path, source: str, kernel: str, runner: LocalRunner):
    path = tmp_path / f"{kernel}.py"
    path.write_text(textwrap.dedent(source))
    return analyze_kernel(path.read_text(), str(path), kernel, "sm_90", runner, max_variants=1)


def test_fp32_guess_dotted_with_fp16_compiles_as_fp16_and_says_so(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    result = analyze(tmp_path, DOT, "mixed_dot", cuda_runner)
    assert result.primary is not None, [v.errors for v in result.variants]
    assert result.primary.specialization.signature["b_ptr"] == "*fp16"
    failed = result.primary.metadata["failed_guesses"]
    assert "same dtype" in failed[0]["error"]
    assert not [f for f in result.findings if f.code in ("TL300", "TL005")]
    for f in result.findings:
        if f.data.get("variant"):
            assert "b_ptr as *fp16" in f.message and "did not compile" in f.message


def test_integer_guess_merged_with_a_pointer_becomes_a_pointer(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    result = analyze(tmp_path, SELECT, "pick_source", cuda_runner)
    assert result.primary is not None, [v.errors for v in result.variants]
    assert result.primary.specialization.signature["other"].startswith("*")


def test_guessed_block_sizes_over_the_element_limit_are_shrunk(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    result = analyze(tmp_path, BIG_TILE, "big_tile", cuda_runner)
    assert result.primary is not None, [v.errors for v in result.variants]
    assert result.primary.specialization.constants["BLOCK_A"] == 8  # 8**5 elements: well under the limit
    assert "numel" in result.primary.metadata["failed_guesses"][0]["error"]
