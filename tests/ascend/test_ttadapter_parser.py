"""The ttadapter parser on real triton-ascend 3.2 output (tests/fixtures/ascend, made by generate.py)."""

from __future__ import annotations

from ascend_cases import fixture_case

from tritonlens.analysis.compiler.ir.ttadapter import parse_ttadapter, parse_types
from tritonlens.analysis.compiler.ir.ttadapter_buffers import peak_live_bytes
from tritonlens.analysis.compiler.ir.ttadapter_model import ShapedType


def parsed(name: str):
    case = fixture_case(name)
    return parse_ttadapter(case["stages"]["ttadapter"], case["request"]["path"]), case


def source_line(case: dict, needle: str) -> int:
    """1-based line of the first source line containing `needle` (keeps tests robust to kernel edits)."""
    for number, text in enumerate(case["source"].splitlines(), start=1):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} not in {case['request']['path']}")


def test_shaped_types_sizes_and_tails() -> None:
    (tile,) = parse_types("memref.alloc() : memref<128x64xf16>")
    assert tile == ShapedType("memref", (128, 64), "f16")
    assert (tile.numel, tile.bytes, tile.tail_bytes) == (8192, 16384, 128)
    dyn = parse_types("memref<?xf32, strided<[1], offset: ?>>")[0]
    assert dyn.shape == (None,) and dyn.bytes is None and not dyn.static


def test_gather_becomes_a_scalar_loop_on_the_load_line() -> None:
    module, case = parsed("gather")
    gather = source_line(case, "tl.load(src_ptr + idx")
    assert module.kernel == "gather_kernel" and module.mix_mode == "aiv"
    (loop,) = module.scalar_loops
    assert loop.op.line == gather
    assert loop.trip_count == 1024
    assert loop.loads >= 1 and loop.stores == 0
    assert "ExtractedLoadOrStore" in loop.op.markers
    stats = module.lines[gather]
    assert stats.scalar_loops == 1 and stats.discrete_ops >= 3
    # the contiguous index load stays a block copy: no scalar loop there
    index_line = source_line(case, "tl.load(idx_ptr")
    assert module.lines[index_line].scalar_loops == 0 and module.lines[index_line].discrete_ops == 0


def test_contiguous_kernel_has_no_scalar_loops_and_pads_masked_loads() -> None:
    module, case = parsed("add")
    assert module.scalar_loops == []
    for needle in ("tl.load(x_ptr", "tl.load(y_ptr"):
        stats = module.lines[source_line(case, needle)]
        assert stats.pad_fills == 1 and stats.buffers == 1 and stats.buffer_bytes == 4096
    add = module.lines[source_line(case, "tl.store")]
    assert add.vector_ops >= 1 and add.vector_dtypes.get("f32")


def test_matmul_is_mix_mode_with_cube_operands_kept_out_of_ub() -> None:
    module, case = parsed("matmul")
    assert module.mix_mode == "mix"
    dot = source_line(case, "acc += tl.dot")
    assert module.lines[dot].cube_ops == 1
    staged = [b for b in module.buffers if b.from_copy]
    assert {str(b.type) for b in staged} == {"memref<128x64xf16>", "memref<64x128xf16>"}
    assert all(b.feeds_cube and b.in_loop for b in staged)
    # epilogue (relu + cast) is vector work; its cast is recorded by dtype
    cast_line = source_line(case, "acc.to(tl.float16)")
    assert module.lines[cast_line].casts == ["f32->f16"]
    peak, _ = peak_live_bytes(module.buffers)
    assert peak < 192 * 1024  # L1 operands and the L0C accumulator do not count against UB


def test_int64_ops_and_compares_are_typed() -> None:
    module, case = parsed("int64")
    arith = module.lines[source_line(case, "y = x * 3 + 7")]
    assert arith.vector_dtypes == {"i64": 4}  # two fills of constants + muli + addi
    compare = module.lines[source_line(case, "keep = y > 100")]
    assert compare.compares == {"i64": 1}


def test_static_range_copies_each_load() -> None:
    module, case = parsed("static_range")
    body = source_line(case, "acc += tl.load")
    allocs = [b for b in module.buffers if b.from_copy and b.op.line == body]
    assert len(allocs) == 4  # STEPS=4 unrolled copies, one staged buffer each
    assert not any(b.in_loop for b in allocs)


def test_peak_ub_counts_live_tiles_and_multibuffer() -> None:
    big, _ = parsed("big_tile")
    peak, where = peak_live_bytes(big.buffers)
    assert peak == 3 * 128 * 256 * 4 and where is not None  # x, y and x*y live together
    persistent, _ = parsed("persistent_add")
    with_mb, _ = peak_live_bytes(persistent.buffers, multibuffer=True)
    without_mb, _ = peak_live_bytes(persistent.buffers, multibuffer=False)
    assert with_mb - without_mb == 2 * 2048 * 4  # the two loads inside the loop are double-buffered


def test_locations_filtered_by_path() -> None:
    case = fixture_case("gather")
    text = case["stages"]["ttadapter"]
    other = parse_ttadapter(text, "somewhere/else.py")
    assert all(op.line is None for op in other.ops)
    same_name_elsewhere = parse_ttadapter(text, "/tmp/copy/gather_kernel.py")  # basename match: temp copies
    assert any(op.line is not None for op in same_name_elsewhere.ops)


def test_excerpt_strips_locations_and_caps_length() -> None:
    module, _ = parsed("static_range")
    lines = [b.op.ir_line for b in module.buffers]
    text = module.excerpt(lines, limit=2)
    assert " loc(" not in text and ("memref" in text or "tensor" in text)
    assert text.splitlines()[-1].startswith("... (")


def test_malformed_text_does_not_raise() -> None:
    for text in (
        "",
        "garbage {{{ }",
        "module {\n  func.func @k() {\n    %0 = arith.addi %a, %b : tensor<4xi64>\n",
    ):
        module = parse_ttadapter(text, "k.py")
        assert module.scalar_loops == []
