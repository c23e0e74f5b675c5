"""TL129: hand-written tanh, sigmoid/SiLU and softplus; library calls and softmax look-alikes stay silent."""

from __future__ import annotations

from triage_helpers import of

TEMPLATE = """
import triton
import triton.language as tl

@triton.jit
def act(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    BODY
    tl.store(out_ptr + offs, y, mask=offs < n)
"""


def body(text: str) -> str:
    return TEMPLATE.replace("BODY", text.replace("\n", "\n    "))


def test_tl129_fires_on_tanh_from_exponentials() -> None:
    (f,) = of(body("y = (tl.exp(x) - tl.exp(-x)) / (tl.exp(x) + tl.exp(-x))"), "TL129")
    assert f.data["function"] == "tanh"
    (g,) = of(body("e = tl.exp(2 * x)\ny = (e - 1) / (e + 1)"), "TL129")
    assert g.data["function"] == "tanh"
    # One exponential and a full division is still a hand-written tanh (the bench's GELU writes it this way).
    (h,) = of(body("t = tl.exp(2.0 * x)\ny = 1.0 - 2.0 / (t + 1.0)"), "TL129")
    assert h.data["function"] == "tanh"


def test_a_ratio_of_exponentials_is_a_wrong_result_unless_the_argument_is_bounded() -> None:
    # exp overflows to inf past about 88 and inf/inf is NaN where tanh is 1: a warning, not a speed hint
    for text in ("y = (tl.exp(x) - tl.exp(-x)) / (tl.exp(x) + tl.exp(-x))", "e = tl.exp(2 * x)\ny = (e - 1) / (e + 1)",
                 "e = tl.exp(x)\ny = e / (e + 1.0)"):  # the last a sigmoid, NaN past 88 all the same
        (f,) = of(body(text), "TL129")
        assert f.severity.name == "WARNING" and "inf/inf = NaN" in f.message
    # the one-exponential identity saturates (2 / inf = 0): only slow
    (h,) = of(body("t = tl.exp(2.0 * x)\ny = 1.0 - 2.0 / (t + 1.0)"), "TL129")
    assert h.severity.name == "INFO" and "NaN" not in h.message
    # an argument clamped first (inline or through a local) cannot overflow: only slow
    for text in ("e = tl.exp(2 * tl.minimum(x, 20.0))\ny = (e - 1) / (e + 1)",
                 "z = tl.clamp(2 * x, -40.0, 40.0)\ne = tl.exp(z)\ny = (e - 1) / (e + 1)"):
        (f,) = of(body(text), "TL129")
        assert f.severity.name == "INFO" and "NaN" not in f.message, text


def test_tl129_fires_on_softplus_and_not_on_sigmoid_or_silu() -> None:
    assert of(body("y = tl.log(1 + tl.exp(x))"), "TL129")[0].data["function"] == "softplus"
    # tl.sigmoid is the same formula: nothing to gain, so not reported.
    assert not of(body("y = 1.0 / (1.0 + tl.exp(-x))"), "TL129")
    assert not of(body("y = x / (1 + tl.exp(-x))"), "TL129")


def test_tl129_silent_for_library_calls_identities_and_softmax() -> None:
    assert not of(body("y = x * tl.sigmoid(x)"), "TL129")
    assert not of(body("e = tl.exp(x - tl.max(x, axis=0))\ny = e / tl.sum(e, axis=0)"), "TL129")
    assert not of(body("y = tl.exp(x) / (1 + x * x)"), "TL129")
    # An attention epilogue: accumulator over normalizer, both built from exponentials in a loop.
    attention = "p = tl.exp(x - 1.0)\nl = tl.sum(p, axis=0)\nacc = p * 2.0\ny = acc / l"
    assert not of(body(attention), "TL129")
