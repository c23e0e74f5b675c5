"""TL136 (issue 24): a launch that leaves a required constexpr without a value is a real bug, an error."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr, FACTOR: tl.constexpr = 2):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)

def run(x, n):
    scale[(triton.cdiv(n, 1024),)](x, n)
"""


def test_tl136_on_a_launch_without_the_block_size() -> None:
    (f,) = of(KERNEL, "TL136")
    assert f.severity == Severity.ERROR and f.data["missing"] == ["BLOCK"]
    assert f.span.line == locate(KERNEL, "scale[(triton.cdiv(n, 1024),)](x, n)").line


def test_tl136_silent_when_the_value_is_passed_or_configured() -> None:
    assert not of(KERNEL.replace("](x, n)", "](x, n, BLOCK=1024)"), "TL136")
    assert not of(KERNEL.replace("](x, n)", "](x, n, 1024)"), "TL136")
    tuned = KERNEL.replace(
        "@triton.jit", "@triton.autotune(configs=[triton.Config({'BLOCK': 256})], key=['n'])\n@triton.jit"
    )
    assert not of(tuned, "TL136")
    built = KERNEL.replace("@triton.jit", "@triton.autotune(configs=make_configs(), key=['n'])\n@triton.jit")
    assert not of(built, "TL136")  # configs from a helper: not known here, so no claim


def test_tl136_silent_when_the_grid_expects_a_tuner_to_supply_it() -> None:
    src = KERNEL.replace(
        "scale[(triton.cdiv(n, 1024),)](x, n)", "scale[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, n)"
    )
    assert not of(src, "TL136")


def test_tl136_silent_for_an_autotune_applied_by_assignment() -> None:
    src = KERNEL.replace(
        "def run(",
        "scale = triton.autotune(configs=[triton.Config({'BLOCK': 64})], key=['n'])(scale)\n\ndef run(",
    )
    assert not of(src, "TL136")


def test_tl136_silent_when_a_named_grid_lambda_reads_meta() -> None:
    src = KERNEL.replace(
        "    scale[(triton.cdiv(n, 1024),)](x, n)",
        "    grid = lambda META: (triton.cdiv(n, META['BLOCK']),)\n    scale[grid](x, n)",
    )
    assert not of(src, "TL136")


def test_tl136_silent_under_heuristics_read_from_a_helper() -> None:
    src = KERNEL.replace("@triton.jit", "@triton.heuristics(table_for('scale'))\n@triton.jit")
    assert not of(src, "TL136")


def test_tl136_silent_when_a_literal_heuristic_or_a_default_supplies_it() -> None:
    heur = KERNEL.replace(
        "@triton.jit", "@triton.heuristics({'BLOCK': lambda args: triton.next_power_of_2(args['n'])})\n@triton.jit"
    )
    assert not of(heur, "TL136")
    default = KERNEL.replace("BLOCK: tl.constexpr, FACTOR", "BLOCK: tl.constexpr = 256, FACTOR")
    assert not of(default, "TL136")
    # near miss: a config that sets another constexpr leaves BLOCK unset
    other = KERNEL.replace(
        "@triton.jit", "@triton.autotune(configs=[triton.Config({'FACTOR': 4})], key=['n'])\n@triton.jit"
    )
    (f,) = of(other, "TL136")
    assert f.data["missing"] == ["BLOCK"]
