"""TL3xx findings on the corpus: each rule fires on the naive variant, on the right line, with evidence,
and stays quiet on the well-written one."""

from __future__ import annotations

import json

import pytest
from cuda_cases import all_cases, load_case, report_for

from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.analysis.compiler.report import CompilerReport
from tritonlens.analysis.core import rules
from tritonlens.analysis.core.findings import Finding, Level, Severity

# (case, rule, source needle on the line where it must fire, culprit or detail expected in the message)
FIRES = [
    ("add_strided", "TL301", "x = tl.load(x_ptr + offs * stride", "`stride`"),
    ("add_strided", "TL301", "tl.store(out_ptr + offs * stride", "`stride`"),
    ("gather_elements", "TL301", "vals = tl.load(table_ptr + idx", "`idx`"),
    ("softmax_naive", "TL302", "row_max = tl.max(tl.load(", "`stride_row`"),
    ("layernorm_naive", "TL302", "x = tl.load(x_ptr + row * stride_row", "`stride_row`"),
    ("matmul_unaligned", "TL302", "a = tl.load(a_ptrs)", "`stride_am`"),
    ("matmul_unaligned", "TL302", "b = tl.load(b_ptrs)", "`stride_bk`"),
    ("add_n_unaligned", "TL303", "x = tl.load(x_ptr + offs", "`n`"),
    ("add_n_unaligned", "TL303", "tl.store(out_ptr + offs", "`n`"),
    ("layernorm_naive", "TL303", "w = tl.load(w_ptr + cols, mask=mask)", "`n_cols`"),
    ("add_strided", "TL304", "tl.store(out_ptr + offs * stride", "shared memory"),
    ("matmul_fp32_ieee", "TL305", "acc += tl.dot(a, b, input_precision=", "ieee"),
    ("matmul_small_tile", "TL306", "acc += tl.dot(a, b)", "M tile (rows of its first operand) is 16 < 64"),
    ("matmul_no_stages", "TL307", "for _k in range(0, K, BLOCK_K):", "num_stages=1"),
    ("matmul_unaligned", "TL307", "for _k in range(0, K, BLOCK_K):", "cp.async"),
    ("matmul_huge", "TL308", "def matmul_kernel(", "spilled"),
    ("matmul_fp32_ieee", "TL308", "def matmul_fp32_ieee(", "spilled"),
    ("matmul_unaligned", "TL309", "def matmul_kernel(", "limited by registers"),
    # a conv's strides computed from its arguments: named as the kernel computes them, not by the statement CSE
    # kept the product for (`inside`, `b`)
    # `x_row` carries `img * (C*H*W)` and `iy * W` along the 1-D pixels: the tile's fastest axis is the channels'
    ("conv_tap_loops", "TL301", "a = tl.load(x_row[:, None] + chans[None, :] * (H * W)", "`H * W`"),
    ("conv_tap_loops", "TL301", "b = tl.load(w_ptr + outs[None, :] * (C * KH * KW)", "`C * 9`"),
    ("conv_tap_loops", "TL307", "for c0 in range(0, C, BC):", "cp.async"),
    ("matmul_deep_stages", "TL310", "def matmul_kernel(", "limited by shared memory"),
    ("matmul_huge", "TL311", "def matmul_kernel(", "227 KB"),
    ("add_int64", "TL312", "x = tl.load(x_ptr + offs", "int64"),
    ("scale_precise", "TL313", "tl.math.div_rn(x, 3.0)", "div.rn.f32"),
    ("layernorm_naive", "TL313", "tl.sqrt_rn(", "sqrt.rn.f32"),
    ("softmax_naive", "TL314", "x = tl.load(x_ptr + cols + row * stride_row", "line"),
    ("rmsnorm_rows_naive", "TL314", "w = tl.load(w_ptr + cols)", "every iteration"),
    ("softmax_multipass", "TL314", "scale = tl.load(scale_ptr)", "loop on line"),
    # `.to(tl.int64)` prints as `arith.extsi ... : tensor<256xi32> to tensor<256xi64>`: the result type is
    # the one after `to` (this used to be read as i32, so the int64 offsets went unreported)
    ("softmax_multipass", "TL312", "x = tl.load(row_x + cols, mask=cols < n_cols, other=0.0)", "`cols`"),
]

# Well-written kernels: no TL3xx finding at all.
CLEAN = [
    "add_good",
    "softmax_good",
    "layernorm_good",
    "row_sum",
    "embedding_rows",
    "matmul_fp16",
    "matmul_fp16_sm100",
    "attention_fwd",
    "rmsnorm_rows_good",
    # its column sums (64 values, one conversion per program before the store) used to get TL304: a
    # reduction's result re-laid out once for its store is not worth a finding
    "col_sum",
    # the Triton tutorial's 128x256x64 config: 188 registers x 256 threads = one block per SM, which a
    # pipelined wgmma GEMM chooses on purpose (TL309 used to call it a problem)
    "matmul_fp16_wide",
    # loads TL314 used to call redundant: a volatile spin in scf.while, a load under `if start == 0` inside
    # a loop, and the same load in both branches of an if (the printer reuses names in sibling regions)
    "flag_wait",
    "first_iter_only",
    "branches",
    # block-pointer accesses: the 64-bit offsets are Triton's expansion of the block pointer on the access
    # line, not source int64 math, so TL312 (which now reads `arith.extsi ... to tensor<..xi64>` right) is quiet
    "tile_copy",
]


def _at(report: CompilerReport, code: str, line: int) -> list[Finding]:
    return [f for f in report.findings if f.code == code and f.span.line == line]


@pytest.mark.parametrize(
    ("name", "code", "needle", "detail"), FIRES, ids=[f"{c}-{n}" for n, c, _, _ in FIRES]
)
def test_rule_fires_on_the_causing_line(name: str, code: str, needle: str, detail: str) -> None:
    case = load_case(name)
    report = report_for(name)
    line = case.line(needle)
    found = _at(report, code, line)
    assert found, f"{code} not on line {line}; got {[(f.code, f.span.line) for f in report.findings]}"
    finding = found[0]
    assert detail in finding.message
    assert (
        finding.level == Level.COMPILER and finding.platforms == ("cuda",) and finding.kernel == case.kernel
    )
    assert finding.evidence, "every finding carries evidence"
    assert finding.estimated_gain is None or finding.estimated_gain
    assert finding.data["rewrite"]
    text = case.source.splitlines()[line - 1]
    assert text[finding.span.col :].startswith(text.strip()[:10])


@pytest.mark.parametrize("name", CLEAN)
def test_well_written_kernels_have_no_findings(name: str) -> None:
    report = report_for(name)
    assert report.findings == [], [(f.code, f.span.line, f.message) for f in report.findings]
    assert report.notes == []


def test_a_loop_around_the_loop_that_loads_is_not_reported_again() -> None:
    # the taps' loops hold the channel loop, whose loads stay synchronous: one TL307, on the channel loop
    case = load_case("conv_tap_loops")
    lines = [f.span.line for f in report_for("conv_tap_loops").findings if f.code == "TL307"]
    assert lines == [case.line("for c0 in range(0, C, BC):")]


def test_loads_whose_address_moves_with_the_loop_are_not_invariant() -> None:
    # Regression: the three loops of softmax_multipass print the same SSA names (%start, %cols, %x_9 ...);
    # a name-keyed def map resolved pass 1's address to pass 3's definition and called it loop-invariant.
    case = load_case("softmax_multipass")
    report = report_for("softmax_multipass")
    needle = 'x = tl.load(row_x + cols, mask=cols < n_cols, other=-float("inf"))'
    moving = {
        case.line(needle, 1),
        case.line(needle, 2),
        case.line("x = tl.load(row_x + cols, mask=cols < n_cols, other=0.0)"),
    }
    assert not [f for f in report.findings if f.code == "TL314" and f.span.line in moving], [
        (f.span.line, f.message) for f in report.findings
    ]
    (invariant,) = [f for f in report.findings if f.code == "TL314"]
    assert invariant.span.line == case.line("scale = tl.load(scale_ptr)")
    assert invariant.data["loop_line"] == case.line("for start in range(0, n_cols, BLOCK):", 3)


def test_ir_evidence_quotes_the_stage_lines_it_names() -> None:
    for name in all_cases():
        case = load_case(name)
        for finding in report_for(name).findings:
            for ev in finding.evidence:
                if ev.kind != "ir" or not ev.ir_lines:
                    continue
                stage_lines = case.stages[ev.stage].splitlines()
                for n in ev.ir_lines:
                    quoted = stage_lines[n - 1].strip().split(" loc(")[0][:60]
                    # a whole IR line, or (for a kernel argument) the quoted part of the signature line
                    assert quoted in ev.excerpt or ev.excerpt in stage_lines[n - 1], (name, finding.code, n)


def test_vectorization_findings_name_the_operand_and_point_at_real_narrow_code() -> None:
    report = report_for("softmax_naive")
    f = _at(report, "TL302", load_case("softmax_naive").line("row_max = tl.max(tl.load("))[0]
    assert f.data["culprit"] == "stride_row" and f.data["achieved_bits"] == 32
    ttir_ev = next(e for e in f.evidence if e.stage == "ttir")
    assert "%stride_row: i32" in ttir_ev.excerpt and "divisibility" not in ttir_ev.excerpt
    ptx_ev = next(e for e in f.evidence if e.stage == "ptx")
    assert "ld.global.b32" in ptx_ev.excerpt and "v4" not in ptx_ev.excerpt


def test_every_nvidia_rule_is_registered_with_rationale_and_references() -> None:
    codes = [r for r in rules.all_rules() if r.code.startswith("TL3") and r.code >= "TL301"]
    assert len(codes) >= 12
    for rule in codes:
        assert rule.platforms == ("cuda",) and rule.level == Level.COMPILER
        assert len(rule.rationale) > 200 and rule.references
    fired = {code for _, code, _, _ in FIRES}
    assert fired == {r.code for r in codes}, "each registered TL3xx rule has a corpus case that fires it"


def test_summary_for_the_code_lens() -> None:
    s = report_for("matmul_fp16").summary
    assert s["dot_lowering"] == "wgmma" and s["num_warps"] == 8 and s["num_stages"] == 3
    assert s["registers"] == load_case("matmul_fp16").meta["resources"]["registers"]
    assert s["spill_stores"] == 0 and s["shared"] == 98304
    assert report_for("add_good").summary["main_load_bits"] == 128
    assert report_for("add_n_unaligned").summary["main_load_bits"] == 32
    assert report_for("matmul_fp32_ieee").summary["dot_lowering"] == "fma"
    assert report_for("matmul_small_tile").summary["dot_lowering"] == "mma"
    assert report_for("matmul_fp16_sm100").summary["dot_lowering"] == "tcgen05"


def test_report_is_json_ready_and_findings_round_trip() -> None:
    report = report_for("layernorm_naive")
    payload = json.loads(json.dumps(report.to_dict()))
    assert payload["line_maps"]["ptx"]
    for raw in payload["findings"]:
        assert Finding.from_dict(raw).code == raw["code"]


def test_sm_limits_change_the_verdict() -> None:
    # 96 KB of pipeline buffers: 2 blocks/SM on Hopper, a single block on A100 and on sm_89.
    assert not [f for f in report_for("matmul_fp16").findings if f.code in ("TL310", "TL311")]
    assert [f.code for f in report_for("matmul_fp16", "sm_80").findings] == ["TL310"]
    assert [f.code for f in report_for("matmul_fp16", "sm_89").findings] == ["TL310"]
    # 160 KB (5 stages): fits an A100 block, exceeds the 99 KB an sm_89 block may use.
    assert [f.code for f in report_for("matmul_deep_stages", "sm_80").findings] == ["TL310"]
    sm89 = report_for("matmul_deep_stages", "sm_89").findings
    assert [f.code for f in sm89] == ["TL311"] and sm89[0].severity == Severity.ERROR


def test_findings_use_the_callers_path_not_the_compile_path() -> None:
    report = report_for("gather_elements")
    assert report.findings and report.lines
    # the fixture was compiled from /work/main/tests/corpus/gather.py; the caller passed /home/user/project
    case = load_case("gather_elements")
    assert "/home/user/project" in case.path and "/home/user/project" not in case.stages["ttir"]


@pytest.mark.parametrize(
    "stages",
    [
        {},
        {"ttir": "garbage", "ttgir": "}}}{{", "ptx": "\x00", "sass": "?", "llir": "define"},
        {"ttir": None, "ttgir": 3},
    ],
)
def test_malformed_input_gives_notes_not_crashes(stages: dict) -> None:
    report = analyze(stages, {"num_warps": "x"}, {"registers": "many"}, "sm_90", "def f(:\n", "k", "k.py")
    assert report.findings == [] and report.notes


def test_unknown_target_and_non_dict_stages() -> None:
    assert "unknown target" in analyze({}, {}, {}, "tpu_v5", "", "k", "k.py").notes[0]
    assert analyze("nonsense", {}, {}, "sm_90", "", "k", "k.py").notes  # type: ignore[arg-type]
    case = load_case("add_good")
    odd = analyze(case.stages, [], "x", "sm_90", None, None, None)  # type: ignore[arg-type]
    assert odd.lines  # attribution still works from the kernel's own file in the IR
