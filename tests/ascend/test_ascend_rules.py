"""The TL4xx checks on committed triton-ascend output: right rule, right line, IR evidence, no noise."""

from __future__ import annotations

from ascend_cases import fixture_case

from tritonlens.analysis.compiler.ascend.analyze import analyze_ascend
from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.analysis.core import rules
from tritonlens.analysis.core.findings import Finding, Level, Severity


def report_for(
    name: str, metadata: dict | None = None, resources: dict | None = None, target: str | None = None
):
    case = fixture_case(name)
    req = case["request"]
    meta = {**case["metadata"], **(metadata or {})}
    return (
        analyze(
            case["stages"],
            meta,
            resources if resources is not None else case["resources"],
            target or req["target"],
            case["source"],
            req["kernel"],
            req["path"],
        ),
        case,
    )


def line_of(case: dict, needle: str) -> int:
    for number, text in enumerate(case["source"].splitlines(), start=1):
        if needle in text:
            return number
    raise AssertionError(needle)


def only(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def assert_grounded(finding: Finding, *ir_snippets: str) -> None:
    """A compiler finding must show the ttadapter lines it is based on."""
    assert finding.level == Level.COMPILER and finding.platforms == ("ascend",)
    ir = [e for e in finding.evidence if e.kind == "ir"]
    assert ir and ir[0].stage == "ttadapter" and ir[0].ir_lines
    for snippet in ir_snippets:
        assert snippet in ir[0].excerpt, (snippet, ir[0].excerpt)
    assert finding.message and rules.get(finding.code) is not None


def test_rules_are_registered_with_references() -> None:
    codes = {r.code for r in rules.all_rules() if r.code.startswith("TL4") and r.code != "TL400"}
    assert codes >= {"TL401", "TL402", "TL403", "TL404", "TL405", "TL406", "TL407"}
    for code in codes:
        rule = rules.get(code)
        assert rule.platforms == ("ascend",) and rule.references, code


def test_gather_is_reported_as_scalarized_on_the_gather_line() -> None:
    report, case = report_for("gather")
    (f,) = only(report.findings, "TL401")
    assert f.span.line == line_of(case, "tl.load(src_ptr + idx")
    assert_grounded(f, "ExtractedLoadOrStore", "DiscreteMemAccess")
    assert f.data["trip_count"] == 1024
    assert f.data["index_line"] == line_of(case, "tl.load(idx_ptr")  # the causal story: index from a load
    assert "--triton-to-unstructure" in f.message and "tl.gather" in f.message
    assert f.severity == Severity.WARNING and f.estimated_gain


def test_int64_arithmetic_and_compares_are_flagged_per_line() -> None:
    report, case = report_for("int64")
    found = {f.span.line: f for f in only(report.findings, "TL402")}
    arith, cmp = line_of(case, "y = x * 3 + 7"), line_of(case, "keep = y > 100")
    assert set(found) == {arith, cmp}
    assert_grounded(found[arith], "arith.muli", "tensor<1024xi64>")
    assert_grounded(found[cmp], "arith.cmpi")
    assert "int32" in found[arith].message


def test_int32_mask_compare_on_a_tensor_is_flagged() -> None:
    report, case = report_for("gather")
    (f,) = only(report.findings, "TL402")
    assert f.span.line == line_of(case, "mask = offs < n")
    assert f.data["dtypes"] == ["i32"] and "fp32" in f.message


def test_ub_overflow_estimated_from_tiles() -> None:
    report, case = report_for("big_tile")
    (f,) = only(report.findings, "TL403")
    assert f.span.line == line_of(case, "x = tl.load")
    assert_grounded(f, "memref<128x256xf32>")
    assert f.data["ub_bytes"] == 3 * 128 * 256 * 4 and f.data["ub_capacity"] == 192 * 1024
    assert not f.data["exact"] and f.severity == Severity.WARNING


def test_ub_overflow_from_bishengir_is_an_error_and_quiet_when_it_fits() -> None:
    report, _ = report_for("add", resources={"required_ub_bits": 300 * 1024 * 8})
    (f,) = only(report.findings, "TL403")
    assert f.severity == Severity.ERROR and f.data["exact"]
    assert any(e.kind == "resource" and "bits" in e.summary for e in f.evidence)
    fits, _ = report_for("add", resources={"required_ub_bits": 20 * 1024 * 8})
    assert not only(fits.findings, "TL403")


def test_grid_is_compared_with_the_core_count_of_the_kernel_kind() -> None:
    report, case = report_for("add", metadata={"grid": [1000]})
    (f,) = only(report.findings, "TL404")
    assert f.data["cores"] == 40 and f.data["mix_mode"] == "aiv"  # vector-only kernel: 40 AIV on 910B3
    mm, _ = report_for("matmul", metadata={"grid": [8, 8]})
    (g,) = only(mm.findings, "TL404")
    assert g.data["cores"] == 20 and g.data["blocks"] == 64  # mix kernel: one block per AI core
    huge, _ = report_for("add", metadata={"grid": [70000]})
    assert only(huge.findings, "TL404")[0].severity == Severity.WARNING
    exact, _ = report_for("add", metadata={"grid": [40]})
    assert not only(exact.findings, "TL404")
    device, _ = report_for("add", metadata={"grid": [48], "num_vectorcore": 48})
    assert not only(device.findings, "TL404")  # the device's own count wins over the table


def test_grid_found_at_a_literal_launch_site() -> None:
    report, case = report_for("persistent_add")
    assert report.summary["grid"] == [40]
    assert not only(report.findings, "TL404")


def test_tail_axis_alignment_vector_and_cube() -> None:
    narrow, case = report_for("narrow")
    (f,) = only(narrow.findings, "TL405")
    assert f.span.line == line_of(case, "x = tl.load")
    assert f.data["tail_bytes"] == 16 and f.data["required"] == 32
    assert_grounded(f, "memref<256x4xf32>")
    mm, mcase = report_for("matmul")
    lines = {x.span.line: x for x in only(mm.findings, "TL405")}
    assert set(lines) == {line_of(mcase, "a = tl.load"), line_of(mcase, "b = tl.load")}
    assert all(x.data["cube"] and x.data["required"] == 512 for x in lines.values())


def test_static_range_unrolling_on_the_for_line() -> None:
    report, case = report_for("static_range")
    (f,) = only(report.findings, "TL406")
    assert f.span.line == line_of(case, "in tl.static_range(")
    assert f.data["copies"] == 4 and f.data["load_lines"] == [line_of(case, "acc += tl.load")]
    assert_grounded(f, "memref.alloc")


def apply_fix(source: str, finding: Finding) -> str:
    lines = source.splitlines(keepends=True)
    for edit in sorted(finding.fix.edits, key=lambda e: (e.span.line, e.span.col), reverse=True):
        row = lines[edit.span.line - 1]
        lines[edit.span.line - 1] = row[: edit.span.col] + edit.new_text + row[edit.span.end_col :]
    return "".join(lines)


def test_masked_loads_without_other_get_the_padding_hint_and_fix() -> None:
    report, case = report_for("add")
    assert {f.code for f in report.findings} == {"TL407"}
    x_line, y_line = line_of(case, "x = tl.load"), line_of(case, "y = tl.load")
    assert sorted(f.span.line for f in report.findings) == [x_line, y_line]
    for f in report.findings:
        assert f.severity == Severity.HINT
        assert_grounded(f, "linalg.fill", "memref.copy")
        assert "care_padding=False" in f.message and f.fix is not None
    fixed = apply_fix(case["source"], report.findings[0]).splitlines()[x_line - 1]
    assert fixed.strip() == "x = tl.load(x_ptr + offs, mask=mask, care_padding=False)"


def test_padding_that_reaches_a_result_is_left_alone() -> None:
    summed, _ = report_for("masked_sum")  # tl.sum over padded lanes: the zeros are load-bearing
    assert not only(summed.findings, "TL407")
    gather, _ = report_for("gather")  # `other=` given: the fill is the requested semantics
    assert not only(gather.findings, "TL407")


def test_clean_kernels_have_no_findings() -> None:
    report, _ = report_for("persistent_add")
    assert report.findings == []
    assert report.summary["mix_mode"] == "aiv" and report.summary["scalar_loops"] == 0


def test_spans_cover_the_statement() -> None:
    report, case = report_for("gather")
    f = only(report.findings, "TL401")[0]
    text = case["source"].splitlines()[f.span.line - 1]
    assert text[f.span.col : f.span.end_col] == text.strip()


def test_report_has_ttadapter_attribution_and_notes() -> None:
    report, case = report_for("gather")
    gather = line_of(case, "tl.load(src_ptr + idx")
    classes = report.lines[gather].classes["ttadapter"]
    assert classes["scalar_loop"] == 1 and classes["discrete"] >= 3
    assert report.line_maps["ttadapter"] and report.line_maps["ttir"]
    assert any("bishengir" in n for n in report.notes)  # no CANN here: said, not hidden
    assert report.to_dict()["summary"]["soc"] == "Ascend910B3"


def test_bad_input_gives_notes_not_crashes() -> None:
    case = fixture_case("gather")
    req = case["request"]
    empty = analyze_ascend({}, {}, {}, "ascend910b3", case["source"], req["kernel"], req["path"])
    assert empty.findings == [] and any("ttadapter" in n for n in empty.notes)
    garbage = analyze_ascend({"ttadapter": "}}} not mlir {{"}, {}, {}, "ascend910b3", "def (", "k", "k.py")
    assert garbage.findings == []
    half_typed = case["source"] + "\ndef broken(:\n"
    still = analyze_ascend(case["stages"], {}, {}, "ascend910b3", half_typed, req["kernel"], req["path"])
    assert only(still.findings, "TL401")  # IR evidence still lands; AST-only extras are skipped
    unknown = analyze_ascend(case["stages"], {}, {}, "ascend999", case["source"], req["kernel"], req["path"])
    assert any("no device data" in n for n in unknown.notes) and not only(unknown.findings, "TL403")
    no_locs = analyze_ascend(case["stages"], {}, {}, "ascend910b3", case["source"], req["kernel"], "other.py")
    assert no_locs.findings == [] or all(f.code == "TL404" for f in no_locs.findings)
    assert any("no source locations" in n for n in no_locs.notes)


def test_wrapped_offsets_and_advanced_pointers_are_the_stated_cause() -> None:
    report, case = report_for("wrapped_matmul")
    loads = {f.span.line: f for f in only(report.findings, "TL401")}
    a_line, b_line = line_of(case, "a = tl.load(a_ptrs)"), line_of(case, "b = tl.load(b_ptrs)")
    assert {a_line, b_line} <= set(loads)
    a = loads[a_line]
    assert a.data["trip_count"] == 64 * 256  # the 2-D tile is a nest of two scalar loops: all elements count
    assert a.data["index_line"] is None  # not a gather: no index is loaded
    assert a.data["modulo_line"] == line_of(case, "rm = (pid_m")
    assert a.data["advanced_line"] == line_of(case, "a_ptrs += BLOCK_K")
    assert "affine" in a.message and any(e.kind == "ast" for e in a.evidence)
    # the int64 tile adds come from the pointer lowering, not from the author's dtypes
    advanced = [f for f in only(report.findings, "TL402") if f.span.line == a.data["advanced_line"]]
    assert advanced and advanced[0].data["from_pointer_lowering"]


def test_author_written_int64_is_not_blamed_on_pointer_lowering() -> None:
    report, _ = report_for("int64")
    assert all(not f.data["from_pointer_lowering"] for f in only(report.findings, "TL402"))


def test_aligned_matmul_is_clean() -> None:
    report, _ = report_for("matmul_aligned")
    assert report.findings == []
    assert report.summary["mix_mode"] == "mix" and report.summary["cube_ops"] == 1


def test_truncated_and_shuffled_ir_never_raises() -> None:
    """Editors send half-finished work and runners can die mid-write: every prefix must analyze quietly."""
    import random

    rng = random.Random(7)
    for name in ("gather", "matmul", "wrapped_matmul", "static_range"):
        case = fixture_case(name)
        req, text = case["request"], case["stages"]["ttadapter"]
        lines = text.splitlines()
        variants = [text[:cut] for cut in range(0, len(text), max(1, len(text) // 25))]
        variants += ["\n".join(rng.sample(lines, len(lines))) for _ in range(5)]
        for ir in variants:
            report = analyze_ascend(
                {"ttadapter": ir},
                {"grid": [7]},
                {},
                req["target"],
                case["source"],
                req["kernel"],
                req["path"],
            )
            assert isinstance(report.findings, list)
