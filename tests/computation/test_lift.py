"""The computation model (issue 22): kernels written in different styles lift to the same computation.

Every kernel here is written for the test. Each group writes one computation three ways (raw pointer arithmetic,
block pointers or tensor descriptors, helper functions and strided loops) and checks the lifted model agrees on
what is computed, over which index variable it reduces, and which memory axis is contiguous.
"""

from __future__ import annotations

import textwrap

import pytest

from tritonlens.analysis.computation import classify, describe, lift_kernel
from tritonlens.analysis.computation.classify import (
    ATTENTION,
    COLUMN_REDUCTION,
    ELEMENTWISE,
    GATHER,
    MATMUL,
    ROW_REDUCTION,
    SCAN,
)
from tritonlens.analysis.kernels import parse_module

HEADER = "import triton\nimport triton.language as tl\n\n"


def lifted(body: str, kernel: str | None = None):
    module = parse_module(HEADER + textwrap.dedent(body))
    k = next(k for k in module.kernels if kernel in (None, k.name))
    comp = lift_kernel(module, k)
    return comp, classify(comp)


ROW_SUM_RAW = """
@triton.jit
def row_sum(x_ptr, out_ptr, stride_row, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))
"""

ROW_SUM_BLOCK_PTR = """
@triton.jit
def row_sum(x_ptr, out_ptr, n_rows, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    p = tl.make_block_ptr(x_ptr, shape=(n_rows, n_cols), strides=(stride_row, 1), offsets=(row, 0),
                          block_shape=(1, BLOCK), order=(1, 0))
    x = tl.load(p, boundary_check=(1,), padding_option="zero")
    tl.store(out_ptr + row, tl.sum(x, axis=1))
"""

ROW_SUM_HELPER_LOOP = """
@triton.jit
def _row_base(ptr, row, stride):
    return ptr + row * stride

@triton.jit
def row_sum(x_ptr, out_ptr, stride_row, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = _row_base(x_ptr, row, stride_row)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(base + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))
"""


@pytest.mark.parametrize("src", [ROW_SUM_RAW, ROW_SUM_BLOCK_PTR, ROW_SUM_HELPER_LOOP], ids=["raw", "block_ptr", "helper_loop"])
def test_a_row_sum_in_three_styles_is_one_row_reduction(src):
    comp, kind = lifted(src)
    assert kind.name == ROW_REDUCTION, describe(comp)
    (load,) = comp.loads
    assert load.tensor == "x_ptr"
    assert load.offset is not None
    # the program id moves by the row stride, a lane by 1: the reduced lane walks memory contiguously
    assert str(load.strided_by("pid0")) == "stride_row"
    assert load.contiguous() is not None and load.contiguous().startswith("lane")
    assert [s.tensor for s in comp.stores] == ["out_ptr"]
    assert not comp.unmodelled


def test_the_helper_is_inlined_and_the_loop_walks_along_the_lanes():
    comp, kind = lifted(ROW_SUM_HELPER_LOOP)
    assert comp.helpers_inlined == ["_row_base"]
    (load,) = comp.loads
    loop = next(v for v in comp.index_vars if v.kind == "loop")
    assert str(load.strided_by(loop.name)) == "BLOCK"  # start = BLOCK * iteration
    assert kind.reduced_over  # the lane reduction and the loop accumulation


MATMUL_DOT = """
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    bias = tl.load(bias_ptr + rn)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc)
"""

MATMUL_RANK1 = """
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(K):
        a = tl.load(a_ptr + rm * K + k, mask=rm < M, other=0.0)
        b = tl.load(b_ptr + k * N + rn, mask=rn < N, other=0.0)
        acc += a[:, None] * b[None, :]
    acc = acc + tl.load(bias_ptr + rn)[None, :]
    acc = tl.maximum(acc, 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
"""

MATMUL_SCALAR = """
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K):
    m = tl.program_id(0)
    n = tl.program_id(1)
    acc = 0.0
    for k in range(0, K):
        acc += tl.load(a_ptr + m * K + k) * tl.load(b_ptr + k * N + n)
    acc = acc + tl.load(bias_ptr + n)
    acc = tl.maximum(acc, 0.0)
    tl.store(c_ptr + m * N + n, acc)
"""


@pytest.mark.parametrize("src", [MATMUL_DOT, MATMUL_RANK1, MATMUL_SCALAR], ids=["dot", "rank1", "scalar"])
def test_a_matmul_with_epilogue_in_three_styles_is_one_k_accumulation(src):
    comp, kind = lifted(src)
    assert kind.name == MATMUL, describe(comp)
    (acc,) = [a for a in comp.accumulations if a.var == "acc"]
    assert set(acc.product_of) == {"a_ptr", "b_ptr"}
    assert acc.loop.startswith("k@")
    # the K loop index appears in both operands' addresses
    for load in comp.loads:
        if load.tensor in ("a_ptr", "b_ptr"):
            assert not load.strided_by(acc.loop).is_zero, describe(comp)
    # bias add and ReLU after the loop are the epilogue to keep
    assert "+" in comp.epilogue and "maximum" in comp.epilogue


def test_pointer_increments_in_the_loop_become_an_induction():
    comp, _ = lifted(MATMUL_DOT)
    a = next(x for x in comp.loads if x.tensor == "a_ptr")
    loop = next(v.name for v in comp.index_vars if v.kind == "loop")
    assert str(a.strided_by(loop)) == "BK*stride_ak"


COLUMN_MEAN = """
@triton.jit
def col_mean(x_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros([BN], dtype=tl.float32)
    for r in range(0, M, BM):
        rows = r + tl.arange(0, BM)
        x = tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :],
                    mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + cols, acc / M, mask=cols < N)
"""

COLUMN_SUM_SCALAR = """
@triton.jit
def col_sum(x_ptr, out_ptr, M, stride_m):
    col = tl.program_id(0)
    acc = 0.0
    for r in range(M):
        acc += tl.load(x_ptr + r * stride_m + col)
    tl.store(out_ptr + col, acc)
"""


@pytest.mark.parametrize("src", [COLUMN_MEAN, COLUMN_SUM_SCALAR], ids=["tiles", "scalar"])
def test_column_reductions_are_told_from_row_reductions_by_the_stride_of_the_reduced_index(src):
    comp, kind = lifted(src)
    assert kind.name == COLUMN_REDUCTION, describe(comp)


def test_a_tuple_reduce_is_reduced_along_its_lanes_not_called_a_column_reduction():
    # `tl.reduce((vals, idxs), 0, combine)` (an argmax): the reduced axis is the block's lane, read contiguously
    comp, kind = lifted("""
@triton.jit
def _pick(v1, i1, v2, i2):
    gt = v1 > v2
    return tl.where(gt, v1, v2), tl.where(gt, i1, i2)

@triton.jit
def block_argmax(x_ptr, best_ptr, where_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
    best, at = tl.reduce((vals, offs), axis=0, combine_fn=_pick)
    tl.store(best_ptr + pid, best)
    tl.store(where_ptr + pid, at)
""", "block_argmax")
    reduce = next(o for o in comp.ops if o.kind == "reduce")
    assert reduce.axis_var is not None and comp.var(reduce.axis_var).kind == "lane", describe(comp)
    assert kind.name == ROW_REDUCTION, describe(comp)


def test_gathers_and_scatters_have_data_dependent_addresses():
    comp, kind = lifted("""
@triton.jit
def emb(ids_ptr, w_ptr, out_ptr, D, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    idx = tl.load(ids_ptr + t)
    cols = tl.arange(0, BLOCK)
    row = tl.load(w_ptr + idx * D + cols, mask=cols < D)
    tl.store(out_ptr + t * D + cols, row, mask=cols < D)
""")
    assert kind.name == GATHER
    w = next(a for a in comp.loads if a.tensor == "w_ptr")
    assert w.data_dependent and w.contiguous() is not None  # one contiguous row per gathered index
    comp, kind = lifted("""
@triton.jit
def scatter(idx_ptr, src_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs, mask=offs < N)
    v = tl.load(src_ptr + offs, mask=offs < N)
    tl.atomic_add(out_ptr + i, v, mask=offs < N)
""")
    assert kind.name == GATHER
    assert comp.stores[0].kind == "atomic" and comp.stores[0].data_dependent


def test_scans_whether_tl_cumsum_or_a_running_sum_stored_each_step():
    _, kind = lifted("""
@triton.jit
def scan(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * N + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr + tl.program_id(0) * N + offs, tl.cumsum(x, axis=0), mask=offs < N)
""")
    assert kind.name == SCAN
    _, kind = lifted("""
@triton.jit
def scan(x_ptr, y_ptr, N):
    row = tl.program_id(0)
    run = 0.0
    for i in range(N):
        run += tl.load(x_ptr + row * N + i)
        tl.store(y_ptr + row * N + i, run)
""")
    assert kind.name == SCAN


def test_attention_is_recognised_from_the_running_max_exp_and_products():
    comp, kind = lifted("""
@triton.jit
def attn(q_ptr, k_ptr, v_ptr, o_ptr, S, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :])
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for start in range(0, S, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[:, None] * D + d[None, :])
        s = tl.dot(q, tl.trans(k))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + rn[:, None] * D + d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + d[None, :], acc / l_i[:, None])
""")
    assert kind.name == ATTENTION, describe(comp)


def test_elementwise_kernels_and_the_summary_names_the_schedule():
    comp, kind = lifted("""
@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)
""")
    assert kind.name == ELEMENTWISE
    text = describe(comp)
    assert "128-bit" in text and "load x_ptr[" in text and "contiguous along lanes of BLOCK" in text


def test_descriptor_loads_lift_like_block_pointers():
    comp, kind = lifted("""
@triton.jit
def row_sum(x_ptr, out_ptr, M, N, BLOCK: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[1, BLOCK])
    row = tl.program_id(0)
    x = desc.load([row, 0])
    tl.store(out_ptr + row, tl.sum(x, axis=1))
""")
    assert kind.name == ROW_REDUCTION, describe(comp)
    assert str(comp.loads[0].strided_by("pid0")) == "N"


def test_what_cannot_be_modelled_is_reported_with_a_reason_and_never_raises():
    comp, kind = lifted("""
@triton.jit
def odd(x_ptr, n):
    i = 0
    while i < n:
        tl.store(x_ptr + i, some_library_call(i))
        i += 1
""")
    assert any("while loop" in u for u in comp.unmodelled)
    assert any("some_library_call" in u for u in comp.unmodelled)
    # half-typed code: the parser recovers what it can and the lifter does not raise
    module = parse_module(HEADER + "@triton.jit\ndef k(x_ptr):\n    y = tl.load(x_ptr + \n")
    for k in module.kernels:
        lift_kernel(module, k)


def test_the_llm_prompt_carries_the_model_of_the_kernel():
    from tritonlens.analysis.rewrite.llm_prompt import build_messages

    source = HEADER + textwrap.dedent(COLUMN_MEAN)
    user = build_messages(source=source, path="k.py", kernel="col_mean", target="sm_90")[1]["content"]
    section = user.split("## What the kernel computes", 1)[1].split("## Profile", 1)[0]
    assert "column reduction" in section and "coalesced row tiles" in section


INF_STARTS = ['-float("inf")', 'float("-inf")', 'float("inf")', "-1e30",
              'tl.full((1,), float("-inf"), dtype=tl.float32)']


@pytest.mark.parametrize("start", INF_STARTS)
def test_an_accumulator_starting_at_float_inf_is_carried_like_a_literal(start):
    comp, kind = lifted(f"""
@triton.jit
def col_best(x_ptr, out_ptr, M, stride_m):
    col = tl.program_id(0)
    best = {start}
    for r in range(M):
        best = tl.maximum(best, tl.load(x_ptr + r * stride_m + col))
    tl.store(out_ptr + col, best)
""")
    assert [(a.var, a.op) for a in comp.accumulations] == [("best", "max")], describe(comp)
    assert kind.name == COLUMN_REDUCTION
    assert not comp.unmodelled
