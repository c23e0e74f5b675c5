"""More evidence for labeled guesses, each seen on public CUDA kernels (widened coverage sample): types a jit
helper's body implies for what the kernel passes it, pointer element types a tl.static_assert requires, and the
next guess for front-end errors that name a guessed pointer's element type (an integer operand of a dot, an
integer accumulator, addresses cast to pointers, a bitcast to another width)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.retry import retry_guess
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

HEADER = "import triton\nimport triton.language as tl\n\n"

HELPER = (
    HEADER
    + """
@triton.jit
def _one_row(X, Out, row, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Out + row * n + offs, tl.load(X + row * n + offs, mask=offs < n) * 2, mask=offs < n)


@triton.jit
def rows(X, Out, stride_b, n, BLOCK: tl.constexpr):
    X += tl.program_id(1) * stride_b
    _one_row(X, Out=Out, row=tl.program_id(0), n=n, BLOCK=BLOCK)
"""
)

ASSERTED = (
    HEADER
    + """
@triton.jit
def dequant(q_ptr, scale_ptr, out_ptr, BLOCK: tl.constexpr):
    q_type: tl.constexpr = q_ptr.dtype.element_ty
    tl.static_assert(q_type == tl.uint8 or q_type == tl.float8e4nv, "q must be uint8 or fp8")
    tl.static_assert(scale_ptr.dtype.element_ty == tl.uint8)
    offs = tl.arange(0, BLOCK)
    q = tl.load(q_ptr + offs).to(tl.float32)
    s = tl.load(scale_ptr + offs).to(tl.float32)
    tl.store(out_ptr + offs, q * s)
"""
)

COUNTS = (
    HEADER
    + """
@triton.jit
def running_total(counts_ptr, out_ptr, n, BLOCK: tl.constexpr):
    total = 0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(counts_ptr + offs, mask=offs < n, other=0), 0)
    tl.store(out_ptr, total)
"""
)

ADDRESSES = (
    HEADER
    + """
@triton.jit
def gather_groups(group_ptrs, out_ptr, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    src = tl.load(group_ptrs + g).to(tl.pointer_type(tl.float16))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + g * BLOCK + offs, tl.load(src + offs))
"""
)

BYTES = (
    HEADER
    + """
@triton.jit
def to_bytes(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    val = tl.load(src_ptr + offs)
    tl.store(dst_ptr + offs, val.to(tl.uint8, bitcast=True))
"""
)


def first_spec(source: str, kernel: str):
    return next(s for s in specializations(source, kernel) if s.complete)


def test_arguments_the_kernel_only_passes_on_take_the_type_its_helper_implies() -> None:
    spec = first_spec(HELPER, "rows")
    assert spec.signature["X"] == "*fp32" and spec.signature["Out"] == "*fp32"
    assert "in helper _one_row (passed as X at line 14)" in spec.provenance["X"]
    assert "element type assumed" in spec.provenance["X"]  # the dtype is still a labeled guess
    assert spec.signature["stride_b"] == "i32"


def test_static_asserts_on_a_pointer_element_type_give_its_type() -> None:
    spec = first_spec(ASSERTED, "dequant")
    assert spec.signature["q_ptr"] == "*u8" and spec.signature["scale_ptr"] == "*u8"
    assert "tl.static_assert at line 8" in spec.provenance["q_ptr"]
    assert spec.signature["out_ptr"] == "*fp32"


def test_an_integer_operand_of_a_dot_makes_the_guessed_fp32_one_int8() -> None:
    source = HEADER + "@triton.jit\ndef k(a_ptr, b_ptr):\n    pass\n"
    spec = first_spec(source, "k")
    nxt = retry_guess(spec, source, "Both operands must be same dtype. Got fp32 and int8", None)
    assert nxt is not None and nxt.signature["a_ptr"] == "*i8"


def test_retries_for_element_types_an_error_names() -> None:
    spec = first_spec(COUNTS, "running_total")
    nxt = retry_guess(
        spec,
        COUNTS,
        "AssertionError('Loop-carried variable total has initial type int32 but is re-assigned to fp32 in loop!')",
        7,
    )
    assert nxt is not None and nxt.signature["counts_ptr"] == "*i32" and nxt.signature["out_ptr"] == "*fp32"
    spec = first_spec(ADDRESSES, "gather_groups")
    spec = replace(  # as guessed where nothing else shows it (the sample's kernel loads it in a loop)
        spec,
        signature={**spec.signature, "group_ptrs": "*fp32"},
        provenance={**spec.provenance, "group_ptrs": "name ends in _ptr; element type assumed fp32"},
    )
    nxt = retry_guess(spec, ADDRESSES, "cannot cast fp32[] to pointer<fp16>", None)
    assert nxt is not None and nxt.signature["group_ptrs"] == "*i64"
    spec = first_spec(BYTES, "to_bytes")
    nxt = retry_guess(spec, BYTES, "Cannot bitcast data-type of size 32 to data-type of size 8", 9)
    assert nxt is not None and nxt.signature["src_ptr"] == "*i8"
    assert "bitcast to 8 bits" in nxt.label


def test_each_compiles_with_its_guesses_named(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    cases = (
        (HELPER, "rows"),
        (ASSERTED, "dequant"),
        (COUNTS, "running_total"),
        (ADDRESSES, "gather_groups"),
        (BYTES, "to_bytes"),
    )
    for source, kernel in cases:
        path = tmp_path / f"{kernel}.py"
        path.write_text(source)
        result = analyze_kernel(source, str(path), kernel, "sm_90", cuda_runner, max_variants=1)
        assert result.primary is not None, (kernel, [e.message[:300] for v in result.variants for e in v.errors])


REUSED = (
    HEADER
    + """
@triton.jit
def dequant_packed(w_ptr, scales_ptr, zeros_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptr = scales_ptr + offs
    scales = tl.load(ptr)
    ptr = zeros_ptr + offs // 8
    zeros = (tl.load(ptr) >> ((offs % 8) * 4)) & 0xF
    w = (tl.load(w_ptr + offs // 8) >> ((offs % 8) * 4)) & 0xF
    tl.store(out_ptr + offs, (w - zeros) * scales)
"""
)


def test_a_reused_local_is_read_where_it_is_used() -> None:
    spec = first_spec(REUSED, "dequant_packed")
    assert spec.signature["zeros_ptr"] == "*i32" and spec.signature["w_ptr"] == "*i32"
    assert spec.signature["scales_ptr"] == "*fp32"  # its loads meet no integer operation


def test_helpers_imported_from_another_workspace_module_give_types(tmp_path: Path) -> None:
    from tritonlens.analysis.specialize.callees import imported_helpers
    from tritonlens.analysis.specialize.kernels import kernel_table
    from tritonlens.server.engine.diagnose.inputs import module_reader

    package = tmp_path / "mylib"
    (package / "ops").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "ops" / "__init__.py").write_text("")
    (package / "scaling.py").write_text(
        HEADER + "@triton.jit\ndef load_scale(scale_ptr):\n    return tl.load(scale_ptr)\n"
    )
    kernel = package / "ops" / "scaled.py"
    kernel.write_text(
        "from mylib.scaling import load_scale\nfrom ..scaling import load_scale as again\n"
        + HEADER
        + "@triton.jit\ndef scaled(x_ptr, Scale, BLOCK: tl.constexpr):\n"
        + "    offs = tl.arange(0, BLOCK)\n    s = load_scale(Scale)\n"
        + "    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * s)\n"
    )
    table = kernel_table(kernel.read_text())
    imported = imported_helpers(table.tree, module_reader(str(kernel)))
    assert set(imported) == {"load_scale", "again"}
    spec = next(s for s in specializations(table, "scaled", imported=imported) if s.complete)
    assert spec.signature["Scale"] == "*fp32" and "in helper load_scale" in spec.provenance["Scale"]
    alone = next(s for s in specializations(table, "scaled") if s.complete)
    assert alone.signature["Scale"] == "fp32"  # without the imported helper: a scalar, guessed from its name


SELECTOR = (
    HEADER
    + """
@triton.jit
def loss(x_ptr, out_ptr, LOSS_TYPE: tl.constexpr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if LOSS_TYPE == 2:
        value = x * 2
    elif LOSS_TYPE == 1:
        value = x + 1
    tl.store(out_ptr + tl.arange(0, BLOCK), value)
"""
)


def test_a_constexpr_compared_with_int_cases_is_guessed_as_one_of_them() -> None:
    spec = first_spec(SELECTOR, "loss")
    assert spec.constants["LOSS_TYPE"] == 1  # a branch that defines `value` (1024 would define none)
    assert spec.provenance["LOSS_TYPE"].startswith("assumed")


OFFSET_FIRST = (
    HEADER
    + """
@triton.jit
def _inner(q_ptrs, k_ptrs, BLOCK: tl.constexpr):
    return tl.sum(tl.load(q_ptrs) * tl.load(k_ptrs), 0)


@triton.jit
def attn_like(Q, K, V, Out, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    k_ptrs = K + offs * stride
    acc = _inner(Q + offs, k_ptrs, BLOCK)
    if V.dtype.element_ty == tl.float8e5:
        acc = acc * 2
    tl.store(Out, acc)
"""
)


def test_locals_offset_from_an_argument_and_element_type_reads_make_it_a_pointer() -> None:
    spec = first_spec(OFFSET_FIRST, "attn_like")
    assert spec.signature["K"] == "*fp32" and "in helper _inner" in spec.provenance["K"]
    assert spec.signature["Q"] == "*fp32"
    assert spec.signature["V"] == "*fp32" and ".dtype.element_ty read at line" in spec.provenance["V"]
    assert spec.signature["stride"] == "i32"


DERIVED_ELEMENT = HEADER + """
@triton.jit
def cast_like(x_ptr, ht, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p_ht = ht + n
    p_ht = p_ht + 1
    tl.store(x_ptr + offs, tl.load(x_ptr + offs).to(p_ht.dtype.element_ty))
"""


def test_element_type_read_through_an_address_local_makes_its_base_a_pointer() -> None:
    # fla's KDA kernel: `p_ht = ht + ...` then `b_h.to(p_ht.dtype.element_ty)`: only pointers have an element
    # type, so `ht` is one (it was guessed a scalar and the compile failed on `.element_ty`)
    spec = first_spec(DERIVED_ELEMENT, "cast_like")
    assert spec.signature["ht"] == "*fp32" and ".dtype.element_ty read at line 10" in spec.provenance["ht"]
    assert spec.signature["n"] == "i32"
