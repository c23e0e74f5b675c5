"""One finding per cause at a position, messages in the kernel's own names, hovers that do not claim a
confirmation that has not happened."""

from __future__ import annotations

from pathlib import Path

from tritonlens.analysis.core.settings import Settings
from tritonlens.analysis.triage import triage
from tritonlens.server.features.hover_markdown import finding_markdown

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

TWO_D = """import triton
import triton.language as tl


@triton.jit
def add2d(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], x, mask=mask)


def launch(x, y, M, N):
    add2d[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, y, M, N, BLOCK_M=16, BLOCK_N=16, num_warps=4)
"""


def at_launch(target: str) -> list:
    source = (EXAMPLES / "naive_softmax.py").read_text()
    found = Settings(target=target).apply(triage(source, "naive_softmax.py").findings)
    line = next(i for i, text in enumerate(source.splitlines(), start=1) if "BLOCK_SIZE=32" in text)
    return [f for f in found if f.span.line == line]


def test_tiny_block_on_four_warps_is_one_finding_with_both_pieces_of_evidence() -> None:
    (only,) = at_launch("cuda")
    assert only.code == "TL126" and only.data["merged"] == ["TL103"]
    assert "replicated lanes" in only.message and "only 32 elements" in only.message
    assert any("TL103" in ev.summary for ev in only.evidence)


def test_the_absorbed_rule_stays_for_the_platform_the_other_does_not_cover() -> None:
    codes = {f.code: f.platforms for f in at_launch("both")}
    assert codes == {"TL126": ("cuda",), "TL103": ("ascend",)}
    assert [f.code for f in at_launch("ascend")] == ["TL103"]


def test_narrow_access_advice_names_the_kernels_block_parameters() -> None:
    (f,) = [f for f in triage(TWO_D).findings if f.code == "TL127"]
    assert "use BLOCK_M * BLOCK_N >= 512" in f.message and "BLOCK >=" not in f.message


def test_level_one_hover_says_what_can_confirm_it_not_that_it_was_confirmed() -> None:
    source = (EXAMPLES / "naive_softmax.py").read_text()
    for f in triage(source).findings:
        md = finding_markdown(f)
        assert "Confirmed by the compiler" not in md
    tl106 = next(f for f in triage(source).findings if f.code == "TL106")
    assert "can be confirmed by TL314 (level 4, a compile)" in finding_markdown(tl106)


ONE_D = """import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x, n, nw):
    scale[(triton.cdiv(n, 64),)](x, n, BLOCK=64, num_warps=WARPS)
"""


def test_num_warps_fix_replaces_a_literal_and_leaves_a_runtime_choice_alone() -> None:
    (f,) = [f for f in triage(ONE_D.replace("WARPS", "8")).findings if f.code == "TL126"]
    assert f.fix is not None and [e.new_text for e in f.fix.edits] == ["2"]  # 64 elements fill 2 warps
    assert not [f for f in triage(ONE_D.replace("WARPS", "nw")).findings if f.code == "TL126" and f.fix]
