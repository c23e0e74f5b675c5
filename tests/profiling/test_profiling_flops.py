"""The FLOP counter over real TTIR from Triton 3.6 (sm_90): dots, loops, reductions, unknown trip counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonlens.analysis.profile.flops import count_flops, kernel_params

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def ir(path: str) -> str:
    return (FIXTURES / path).read_text(encoding="utf-8")


def test_tl_dot_counts_2mnk_per_k_step() -> None:
    # matmul tutorial kernel, 128x128x64 tiles: K / 64 steps of a 128x64 @ 64x128 dot.
    count = count_flops(ir("cuda/matmul_fp16/ttir"), {"K": 4096})
    assert count.dot == 2 * 128 * 128 * 4096
    assert count.dot_dtype == "f16" and count.exact
    assert not count.matmul_without_dot


def test_rank1_matmul_is_elementwise_work_without_a_dot() -> None:
    # bench/matmul first draft: one 32x32 multiply and add per k.
    count = count_flops(ir("flops/matmul_rank1.ttir"), {"K": 4096})
    assert count.dot == 0
    assert count.elementwise == 2 * 32 * 32 * 4096
    assert count.matmul_without_dot


def test_reductions_count_their_input_and_loops_their_trips() -> None:
    # softmax first draft, BLOCK 128, three loops over 4096 columns (32 trips each): max-reduce, sub+exp+sum,
    # sub+exp+div, plus one scalar combine per trip in the first two.
    count = count_flops(ir("flops/softmax_loops.ttir"), {"n_cols": 4096})
    assert count.elementwise == 32 * ((128 + 1) + (128 + 128 + 1) + (128 + 128))
    assert count.transcendental == 2 * 4096
    assert not count.matmul_without_dot


def test_unknown_trip_counts_are_a_marked_lower_bound() -> None:
    count = count_flops(ir("flops/matmul_rank1.ttir"), {})
    assert not count.exact and count.unknown_loops
    assert count.elementwise == 2 * 32 * 32


@pytest.mark.parametrize("case", ["cuda/softmax_naive/ttir", "cuda/attention_fwd/ttir"])
def test_ttgir_and_ttir_agree_on_real_kernels(case: str) -> None:
    ttgir = case.replace("/ttir", "/ttgir")
    a = count_flops(ir(case), {"seq_len": 2048})
    b = count_flops(ir(ttgir), {"seq_len": 2048})
    assert a.total == b.total > 0


def test_kernel_params_are_the_runtime_arguments_in_order() -> None:
    assert kernel_params(ir("flops/matmul_rank1.ttir"))[:6] == ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K"]
