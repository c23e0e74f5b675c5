"""TL135 narrowed (blind sample 3, docs/precision.md): a divide per element is reported only where it can be
measured (a loop over tiles that also computes), and an accumulator renormalised by a running sum on every
iteration is told to divide once after the loop; memory-bound elementwise division is silent."""

from __future__ import annotations

from triage_helpers import locate, of

# Memory-bound elementwise tiles: load, divide by a runtime scalar, store.
ELEMENTWISE = """
import triton
import triton.language as tl

@triton.jit
def penalize(x_ptr, y_ptr, p_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    penalty = tl.load(p_ptr + row)
    cols = tl.arange(0, BLOCK)
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + row * n + start + cols, mask=start + cols < n)
        tl.store(y_ptr + row * n + start + cols, x / penalty, mask=start + cols < n)
"""

# Decode-style online softmax that renormalises the output accumulator by the running sum every block.
RENORM = """
import triton
import triton.language as tl

@triton.jit
def decode(q_ptr, k_ptr, v_ptr, o_ptr, n, D: tl.constexpr, BN: tl.constexpr):
    d = tl.arange(0, D)
    q = tl.load(q_ptr + tl.program_id(0) * D + d)
    m = -float("inf")
    l = 0.0
    acc = tl.zeros([D], dtype=tl.float32)
    for start in range(0, n, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_ptr + keys[:, None] * D + d[None, :])
        v = tl.load(v_ptr + keys[:, None] * D + d[None, :])
        s = tl.sum(q[None, :] * k, axis=1)
        m_new = tl.maximum(m, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        l_new = l * tl.exp(m - m_new) + tl.sum(p, axis=0)
        acc = (acc * (l * tl.exp(m - m_new)) + tl.sum(p[:, None] * v, axis=0)) / l_new
        m = m_new
        l = l_new
    tl.store(o_ptr + tl.program_id(0) * D + d, acc)
"""


def test_memory_bound_elementwise_division_is_silent() -> None:
    assert not of(ELEMENTWISE, "TL135")


def test_the_same_division_next_to_per_element_math_is_reported_with_the_reciprocal_fix() -> None:
    src = ELEMENTWISE.replace("x / penalty", "tl.exp(x) / penalty")
    (f,) = of(src, "TL135")
    assert f.span == locate(src, "tl.exp(x) / penalty")
    assert f.data["form"] == "in-loop" and f.fix is not None


def test_a_division_outside_any_loop_is_silent() -> None:
    # near miss: per-element math, but one block per program, divided once
    once = """
    import triton
    import triton.language as tl

    @triton.jit
    def once(x_ptr, y_ptr, t_ptr, BLOCK: tl.constexpr):
        t = tl.load(t_ptr)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + tl.program_id(0) * BLOCK + cols)
        tl.store(y_ptr + tl.program_id(0) * BLOCK + cols, tl.exp(x) / t)
    """
    assert not of(once, "TL135")


def test_an_accumulator_renormalised_every_iteration_is_told_to_divide_after_the_loop() -> None:
    (f,) = of(RENORM, "TL135")
    assert f.data["form"] == "renormalised" and f.data["accumulator"] == "acc"
    assert "divide once after the loop" in f.message
    assert f.fix is None  # the reciprocal is not the fix; moving the division out of the loop is


def test_weights_normalised_before_they_enter_the_accumulator_are_the_same_case() -> None:
    src = RENORM.replace(
        "        acc = (acc * (l * tl.exp(m - m_new)) + tl.sum(p[:, None] * v, axis=0)) / l_new\n",
        "        w = p[:, None] * v / l_new\n"
        "        acc = acc * (l * tl.exp(m - m_new) / l_new) + tl.sum(w, axis=0)\n",
    )
    found = [f for f in of(src, "TL135") if f.data.get("form") == "renormalised"]
    assert [f.data["accumulator"] for f in found] == ["acc"]


def test_a_temporary_redefined_every_iteration_is_not_an_accumulator() -> None:
    # near miss: `p = p / l_new` rebinds p from itself, but p starts fresh each iteration (no value crosses it)
    src = RENORM.replace(
        "        acc = (acc * (l * tl.exp(m - m_new)) + tl.sum(p[:, None] * v, axis=0)) / l_new\n",
        "        p = p / l_new\n        tl.store(o_ptr + keys, p)\n",
    )
    assert all(f.data.get("form") != "renormalised" for f in of(src, "TL135"))
