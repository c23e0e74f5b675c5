"""Values loaded through a pointer that meet an integer-only operator (`//`, bitwise ops, shifts) or bound a
`range` come from an integer tensor: the pointer's element type is guessed as an integer, never fp32 (whose
compile fails with `unexpected type fp32` / `invalid operands of type float32`). Seen on vllm-ascend's
minimax_m3 index-score kernels (sequence lengths loaded, then `length // BLOCK`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tritonlens.analysis.specialize.choose import specializations
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

LENGTHS = """
import triton
import triton.language as tl


@triton.jit
def blocks_per_row(lengths_ptr, starts_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    length = tl.load(lengths_ptr + row)
    start = tl.load(starts_ptr + row)
    full = length // BLOCK
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for b in tl.range(0, full):
        acc += tl.load(x_ptr + start + b * BLOCK + tl.arange(0, BLOCK))
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), acc)
"""

PACKED = """
import triton
import triton.language as tl


@triton.jit
def unpack(packed_ptr, scale_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    word = tl.load(packed_ptr + offs)
    low = (word & 0xF).to(tl.float32)
    high = ((word >> 4) & 0xF).to(tl.float32)
    mask = (offs < BLOCK) & (offs >= 0)
    scale = tl.load(scale_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (low + high) * scale)
"""

WIDE = """
import triton
import triton.language as tl


@triton.jit
def high_word(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs) >> 32).to(tl.int32))
"""


def spec_of(source: str, kernel: str):
    return next(s for s in specializations(source, kernel) if s.complete)


def test_loaded_lengths_divided_by_a_block_are_integers_of_the_index_width() -> None:
    spec = spec_of(LENGTHS, "blocks_per_row")
    # starts are used as offsets (int64 guess): the lengths they are mixed with get the same width
    assert spec.signature["starts_ptr"] == "*i64"
    assert spec.signature["lengths_ptr"] == "*i64"
    assert "`//`" in spec.provenance["lengths_ptr"]
    assert spec.signature["x_ptr"] == "*fp32"  # loaded values only added and stored: no integer evidence


def test_bitwise_masks_and_shifts_make_int32_but_a_comparison_mask_does_not() -> None:
    spec = spec_of(PACKED, "unpack")
    assert spec.signature["packed_ptr"] == "*i32"
    assert "`&`" in spec.provenance["packed_ptr"] or "`>>`" in spec.provenance["packed_ptr"]
    # `(offs < BLOCK) & ...` combines comparisons, and scale is only multiplied: stays the fp32 guess
    assert spec.signature["scale_ptr"] == "*fp32"


def test_a_shift_by_32_needs_int64() -> None:
    assert spec_of(WIDE, "high_word").signature["x_ptr"] == "*i64"


def test_the_integer_guess_compiles(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    for source, kernel in ((LENGTHS, "blocks_per_row"), (PACKED, "unpack")):
        path = tmp_path / f"{kernel}.py"
        path.write_text(textwrap.dedent(source))
        result = analyze_kernel(path.read_text(), str(path), kernel, "sm_90", cuda_runner, max_variants=1)
        assert result.primary is not None, [e.message for v in result.variants for e in v.errors]
        assert "failed_guesses" not in result.primary.metadata  # the first guess compiled


ACCUMULATED = """
import triton
import triton.language as tl


@triton.jit
def running_offsets(counts_ptr, offs_ptr, n, BLOCK: tl.constexpr):
    total = 0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        counts = tl.load(counts_ptr + offs, mask=offs < n, other=0)
        tl.store(offs_ptr + offs, tl.cumsum(counts, 0) - counts + total, mask=offs < n)
        total += tl.sum(counts, 0)
"""


def test_values_summed_into_an_int_started_loop_variable_are_int32(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    spec = spec_of(ACCUMULATED, "running_offsets")
    assert spec.signature["counts_ptr"] == "*i32"  # `total = 0` is int32 and keeps its type across the loop
    assert "summed into `total`" in spec.provenance["counts_ptr"]
    path = tmp_path / "running_offsets.py"
    path.write_text(textwrap.dedent(ACCUMULATED))
    result = analyze_kernel(path.read_text(), str(path), "running_offsets", "sm_90", cuda_runner, max_variants=1)
    assert result.primary is not None, [e.message for v in result.variants for e in v.errors]
