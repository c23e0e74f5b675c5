"""TL306 (issue 24): a decode kernel's few query rows (a GQA head group) against streamed keys are no wgmma case;
a GEMM with 16-row tiles streamed along K, and attention with 32 fixed rows, still are."""

from __future__ import annotations

from cuda_cases import report_for


def _tl306(name: str) -> list:
    return [f for f in report_for(name).findings if f.code == "TL306"]


def test_decode_head_group_rows_are_not_tl306() -> None:
    assert not _tl306("decode_group")  # GROUP=16 query heads loaded once, keys streamed by the loop


def test_small_gemm_tiles_streamed_along_k_are_still_tl306() -> None:
    (f,) = _tl306("matmul_small_tile")
    assert f.data["block_m"] == 16


def test_fixed_rows_above_the_decode_size_are_still_tl306() -> None:
    (f,) = _tl306("scores_transposed")
    assert f.data["block_m"] == 32
