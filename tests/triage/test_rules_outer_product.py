"""TL133: matrix products as rank-1 updates over K without tl.dot."""

from __future__ import annotations

from triage_helpers import locate, of

RANK1 = """
import triton
import triton.language as tl

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(K):
        a = tl.load(a_ptr + rm * K + k, mask=rm < M, other=0.0)
        b = tl.load(b_ptr + k * N + rn, mask=rn < N, other=0.0)
        acc += a[:, None] * b[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
"""


def test_tl133_fires_on_outer_product_accumulation() -> None:
    (f,) = of(RANK1, "TL133")
    assert f.span.line == locate(RANK1, "for k in range(K):").line


def test_tl133_silent_for_dot_kernels_rescales_and_index_products() -> None:
    with_dot = RANK1.replace("acc += a[:, None] * b[None, :]", "acc += tl.dot(a[:, None], b[None, :])")
    assert not of(with_dot, "TL133")
    rescale = RANK1.replace("acc += a[:, None] * b[None, :]", "acc = acc * a[:, None] + b[None, :]")
    assert not of(rescale, "TL133")
    index = RANK1.replace(
        "acc += a[:, None] * b[None, :]", "acc += (rm[:, None] * rn[None, :]).to(tl.float32)"
    )
    assert not of(index, "TL133")


GEMV = """
import triton
import triton.language as tl

@triton.jit
def attn(q_ptr, k_ptr, w_ptr, o_ptr, n, D: tl.constexpr, BN: tl.constexpr):
    d = tl.arange(0, D)
    q = tl.load(q_ptr + tl.program_id(0) * D + d)
    acc = 0.0
    for start in range(0, n, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_ptr + keys[:, None] * D + d[None, :])
        s = tl.sum(q[None, :] * k, axis=1)
        acc += tl.sum(s, axis=0)
    tl.store(o_ptr + tl.program_id(0), acc)
"""


def test_tl133_fires_on_a_query_vector_summed_against_key_tiles() -> None:
    (f,) = of(GEMV, "TL133")
    assert f.span == locate(GEMV, "tl.sum(q[None, :] * k, axis=1)")
    assert f.data["form"] == "broadcast-sum"


def test_tl133_silent_for_a_weight_vector_loaded_per_step() -> None:
    # A top-k combine: a small weight vector loaded in the loop, too thin for tl.dot.
    combine = GEMV.replace(
        "s = tl.sum(q[None, :] * k, axis=1)",
        "w = tl.load(w_ptr + keys)\n        s = tl.sum(k * w[:, None], axis=0)",
    )
    assert not of(combine, "TL133")


# Held-out misreadings (docs/precision.md, "Held-out files"): a linear-attention style recurrence, one token per
# step, whose state is decayed and read every step, is not a matrix product that one tl.dot could replace.
RECURRENCE = """
import triton
import triton.language as tl

@triton.jit
def recurrent(q_ptr, k_ptr, v_ptr, o_ptr, T, K: tl.constexpr, V: tl.constexpr):
    o_k = tl.arange(0, K)
    o_v = tl.arange(0, V)
    h = tl.zeros([K, V], dtype=tl.float32)
    for t in range(0, T):
        q = tl.load(q_ptr + t * K + o_k)
        k = tl.load(k_ptr + t * K + o_k)
        v = tl.load(v_ptr + t * V + o_v)
        h = h * 0.9
        h += k[:, None] * v[None, :]
        o = tl.sum(h * q[:, None], 0)
        tl.store(o_ptr + t * V + o_v, o)
"""


def test_tl133_silent_for_a_recurrence_that_reads_its_state_every_step() -> None:
    assert not of(RECURRENCE, "TL133")
    # without the per-step reads it is a plain sum of outer products over t: reported
    plain = RECURRENCE.replace("        h = h * 0.9\n", "").replace(
        "        o = tl.sum(h * q[:, None], 0)\n        tl.store(o_ptr + t * V + o_v, o)\n", ""
    ) + "    tl.store(o_ptr + o_k[:, None] * V + o_v[None, :], h)\n"
    assert [f.data["form"] for f in of(plain, "TL133")] == ["rank-1"]
