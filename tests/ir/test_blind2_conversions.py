"""TL304 (issue 24): conversions that are the normal price of the kernel's structure are not findings; a
conversion of elementwise data for a strided store still is."""

from __future__ import annotations

from cuda_cases import load_case, report_for


def _codes_at(name: str, needle: str) -> set[str]:
    line = load_case(name).line(needle)
    return {f.code for f in report_for(name).findings if f.span.line == line}


def test_loaded_tile_staged_for_a_dot_operand_is_not_tl304() -> None:
    # num_stages=1, BLOCK_M=32: the K tile is re-laid out through shared memory to feed mma.sync
    assert "TL304" not in _codes_at("scores_transposed", "acc += tl.dot(q, tl.trans(k))")
    assert "TL306" in _codes_at("scores_transposed", "acc += tl.dot(q, tl.trans(k))")  # the real lever stays


def test_accumulated_tile_converted_once_for_its_store_is_not_tl304() -> None:
    assert not [f for f in report_for("combine_splits").findings if f.code == "TL304"]


def test_elementwise_data_converted_for_a_strided_store_is_still_tl304() -> None:
    assert "TL304" in _codes_at("add_strided", "tl.store(out_ptr + offs * stride")
