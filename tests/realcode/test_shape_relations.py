"""Guessed constexprs and descriptor blocks are fitted to the relations the kernel itself states between them
(reshape sizes, tl.static_assert, dot / dot_scaled shapes, descriptor stores), so a labeled guess no longer fails
with "reshape() cannot change total number of elements" naming no guess."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.relations import consistent_guesses
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

HEADER = "import triton\nimport triton.language as tl\n\n"

GROUP_SUMS = (
    HEADER
    + """
@triton.jit
def group_sums(x_ptr, out_ptr, BLOCK: tl.constexpr, N_GROUPS: tl.constexpr, GROUP: tl.constexpr):
    tl.static_assert(GROUP >= 16)
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    sums = tl.sum(x.reshape(N_GROUPS, GROUP), axis=1)
    tl.store(out_ptr + tl.arange(0, N_GROUPS), sums)
"""
)

RETILE = (
    HEADER
    + """
@triton.jit
def retile(in_desc, out_desc, ROWS: tl.constexpr, COLS: tl.constexpr):
    t = in_desc.load([0, 0, 0])
    t = t.reshape(ROWS, COLS)
    out_desc.store([0, 0], t * 2)
"""
)

SCALED = (
    HEADER
    + """
@triton.jit
def mx_dot(a_desc, b_desc, sa_desc, sb_desc, c_desc, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr,
           PACKED: tl.constexpr):
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    a = a_desc.load([0, 0])
    b = b_desc.load([0, 0])
    sa = sa_desc.load([0, 0, 0]).reshape(TM, TK // 32)
    sb = sb_desc.load([0, 0, 0]).reshape(TN, TK // 32)
    if PACKED:
        acc = tl.dot_scaled(a, sa, "e2m1", b.T, sb, "e2m1", acc)
    else:
        acc = tl.dot_scaled(a, sa, "e4m3", b.T, sb, "e4m3", acc)
    c_desc.store([0, 0], acc)
"""
)


def first_spec(source: str, kernel: str):
    return next(s for s in specializations(source, kernel) if s.complete)


def test_guessed_constexprs_satisfy_the_reshape_and_the_static_assert() -> None:
    spec = first_spec(GROUP_SUMS, "group_sums")
    c = spec.constants
    assert c["N_GROUPS"] * c["GROUP"] == c["BLOCK"] and c["GROUP"] >= 16, c
    assert "fitted to the kernel's shapes (lines 7, 9)" in spec.label
    assert all(spec.provenance[n].startswith("assumed") for n in ("BLOCK", "N_GROUPS", "GROUP"))


def test_values_the_file_shows_are_kept_and_only_guesses_move() -> None:
    source = GROUP_SUMS + "\n\ndef run(x, out):\n    group_sums[(1,)](x, out, BLOCK=256, N_GROUPS=8)\n"
    spec = first_spec(source, "group_sums")
    assert spec.constants["BLOCK"] == 256 and spec.constants["N_GROUPS"] == 8
    assert spec.constants["GROUP"] == 32  # the only guess, derived from the shown values


def test_descriptor_blocks_are_derived_from_the_reshape_and_the_store() -> None:
    spec = first_spec(RETILE, "retile")
    rows, cols = spec.constants["ROWS"], spec.constants["COLS"]
    in_block = [int(d) for d in spec.signature["in_desc"].split("[")[1].rstrip("]>").split(",")]
    assert in_block[0] * in_block[1] * in_block[2] == rows * cols and max(in_block) <= 256
    assert spec.signature["out_desc"] == f"tensordesc<fp16[{rows}, {cols}]>"
    assert "fits the shapes at lines" in spec.provenance["in_desc"]


def test_dot_scaled_operands_take_their_format_dtype_in_the_branch_the_guesses_take() -> None:
    spec = first_spec(SCALED, "mx_dot")
    assert spec.constants["PACKED"] is False  # a flag guess: the e4m3 branch is the one compiled
    assert spec.signature["a_desc"].startswith("tensordesc<fp8e4nv[")
    assert spec.signature["sa_desc"].startswith("tensordesc<u8[")
    fn = next(n for n in ast.walk(ast.parse(SCALED)) if isinstance(n, ast.FunctionDef))
    # the e2m1 branch packs two values per byte: the operands' K halves against the scales' 32 per element
    consts, blocks, dtypes, _ = consistent_guesses(
        fn,
        {"TM": 64, "TN": 64, "TK": 256, "PACKED": True},
        ["TM", "TN", "TK"],
        {d: [64, 64] for d in ("a_desc", "b_desc", "c_desc")} | {"sa_desc": [64] * 3, "sb_desc": [64] * 3},
        ["a_desc", "b_desc", "sa_desc", "sb_desc", "c_desc"],
    )
    assert blocks["a_desc"] == [consts["TM"], consts["TK"] // 2] and dtypes["a_desc"] == "u8"


def test_relations_no_guess_can_satisfy_leave_the_guesses_as_they_were() -> None:
    source = HEADER + textwrap.dedent(
        """
        @triton.jit
        def odd(x_ptr, BLOCK: tl.constexpr):
            x = tl.load(x_ptr + tl.arange(0, BLOCK)).reshape(BLOCK, 3)
            tl.store(x_ptr + tl.arange(0, BLOCK), tl.sum(x, axis=1))
        """
    )
    spec = first_spec(source, "odd")
    assert spec.constants["BLOCK"] == 64 and "fitted" not in spec.label


def analyze(tmp_path: Path, source: str, kernel: str, runner: LocalRunner):
    path = tmp_path / f"{kernel}.py"
    path.write_text(source)
    return analyze_kernel(source, str(path), kernel, "sm_90", runner, max_variants=1)


def test_fitted_guesses_compile(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    for source, kernel in ((GROUP_SUMS, "group_sums"), (RETILE, "retile"), (SCALED, "mx_dot")):
        result = analyze(tmp_path, source, kernel, cuda_runner)
        assert result.primary is not None, (
            kernel,
            [e.message[:300] for v in result.variants for e in v.errors],
        )
        assert not [f for f in result.findings if f.code in ("TL300", "TL005")]
