"""TL110, TL111: tl.dot tiles below 16 and fp32 dots forced to IEEE."""

from __future__ import annotations

from triage_helpers import EXAMPLES, locate, of

SMALL = """
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BM": 64, "BN": 64, "BK": 8})], key=["K"])
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
"""


def test_tl110_fires_on_autotune_value_below_16() -> None:
    (f,) = of(SMALL, "TL110")
    assert f.span == locate(SMALL, "8")
    assert "BK = 8" in f.message


def test_tl110_silent_for_16_and_up_and_for_kernels_without_dot(data_source) -> None:
    assert not of(SMALL.replace('"BK": 8', '"BK": 16'), "TL110")
    assert not of(data_source("good_matmul.py"), "TL110")


def test_tl111_fires_on_ieee_precision_in_the_example() -> None:
    source = (EXAMPLES / "matmul.py").read_text(encoding="utf-8")
    (f,) = of(source, "TL111")
    assert f.span == locate(source, 'input_precision="ieee"')
    assert f.kernel == "matmul_kernel"
    assert f.fix is None  # changing precision changes results: never a quick fix


def test_tl111_fires_on_allow_tf32_false_with_fp32_operands() -> None:
    src = SMALL.replace("tl.dot(a, b)", "tl.dot(a.to(tl.float32), b.to(tl.float32).T, allow_tf32=False)")
    (f,) = of(src, "TL111")
    assert f.span == locate(src, "allow_tf32=False")


def test_tl111_silent_when_the_operands_are_not_known_fp32() -> None:
    # Flash attention: P is cast to V's storage dtype (fp16/bf16), where allow_tf32 changes nothing.
    src = SMALL.replace(
        "acc += tl.dot(a, b)", "p = a.to(b.dtype)\n        acc += tl.dot(p, b, allow_tf32=False)"
    )
    assert not of(src, "TL111")
    # Loaded operands with no visible launch: the dtype is unknown, so no claim is made.
    assert not of(SMALL.replace("tl.dot(a, b)", "tl.dot(a, b, allow_tf32=False)"), "TL111")


def test_tl111_silent_for_default_and_tf32x3() -> None:
    assert not of(SMALL, "TL111")
    assert not of(SMALL.replace("tl.dot(a, b)", 'tl.dot(a, b, input_precision="tf32x3")'), "TL111")
