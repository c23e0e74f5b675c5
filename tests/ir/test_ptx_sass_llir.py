"""PTX, SASS, LLVM IR and resource-report parsing on real outputs of Triton 3.6 / ptxas / nvdisasm."""

from __future__ import annotations

import re

from cuda_cases import all_cases, load_case

from tritonlens.analysis.compiler.ir.llir import parse_llir
from tritonlens.analysis.compiler.ir.mlir_loc import UserFiles
from tritonlens.analysis.compiler.ir.ptx import parse_ptx, vector_bits
from tritonlens.analysis.compiler.ir.sass import parse_ptxas_verbose, parse_res_usage, parse_sass


def test_ptx_file_table_target_and_entry() -> None:
    case = load_case("softmax_good")
    ptx = parse_ptx(case.stages["ptx"])
    assert ptx.target == "sm_90a" and ptx.entries == ("softmax_good",)
    assert ptx.files[1].endswith("tests/corpus/softmax.py")
    assert ptx.files[2].endswith("triton/language/standard.py")


def test_ptx_instructions_match_the_text_and_carry_line_info() -> None:
    for name in all_cases():
        case = load_case(name)
        ptx = parse_ptx(case.stages["ptx"])
        text = case.stages["ptx"].split(".section\t.debug", 1)[0]
        expected = len(re.findall(r"^\s*(?:@!?%p\d+\s+)?ld\.global", text, re.M))
        assert sum(i.opcode.startswith("ld.global") for i in ptx.instrs) == expected, name
        located = [i for i in ptx.instrs if i.loc.frames]
        assert len(located) > 0.8 * len(ptx.instrs), name


def test_ptx_inlining_comment_maps_library_lines_to_the_call_site() -> None:
    case = load_case("softmax_good")
    ptx = parse_ptx(case.stages["ptx"])
    user = UserFiles([case.path])
    shuffles = [i for i in ptx.instrs if i.opcode.startswith("shfl.sync")]
    assert shuffles and all("standard.py" in i.loc.frames[0].file for i in shuffles)
    assert {i.loc.user_frame(user).line for i in shuffles} == {case.line("tl.max(x"), case.line("tl.sum(num")}


def test_vector_bits() -> None:
    assert vector_bits("ld.global.v4.b32") == 128
    assert vector_bits("st.global.b16") == 16
    assert vector_bits("ld.global.v2.b64") == 128
    assert vector_bits("add.s32") is None


def test_sass_instructions_and_line_comments() -> None:
    case = load_case("add_good")
    sass = parse_sass(case.stages["sass"])
    n_text = len(re.findall(r"/\*[0-9a-f]{4}\*/", case.stages["sass"]))
    assert len(sass) == n_text
    ldg = [i for i in sass if i.base == "LDG"]
    assert [i.opcode for i in ldg] == ["LDG.E.128"] * 4
    user = UserFiles([case.path])
    assert {i.loc.user_frame(user).line for i in ldg} == {case.line("x = tl.load"), case.line("y = tl.load")}
    assert any(i.predicate for i in sass)  # masked accesses are predicated


def test_sass_spill_instructions_exist_when_ptxas_reports_spills() -> None:
    case = load_case("matmul_huge")
    sass = parse_sass(case.stages["sass"])
    assert any(i.base == "STL" for i in sass) and any(i.base == "LDL" for i in sass)
    good = parse_sass(load_case("matmul_fp16").stages["sass"])
    assert not any(i.base in ("STL", "LDL") for i in good)
    assert any(i.base == "HGMMA" for i in good)


def test_resource_reports() -> None:
    for name in all_cases():
        case = load_case(name)
        usage = parse_res_usage(case.resources["res_usage"])[case.kernel]
        verbose = parse_ptxas_verbose(case.resources["ptxas_log"])[case.kernel]
        assert usage["registers"] == case.meta["resources"]["registers"] == verbose["registers"]
        assert verbose["spill_stores"] == case.meta["resources"]["spill_stores"]
        assert verbose["spill_loads"] == case.meta["resources"]["spill_loads"]
    assert (
        parse_ptxas_verbose(load_case("matmul_huge").resources["ptxas_log"])["matmul_kernel"]["spill_stores"]
        > 0
    )
    assert parse_res_usage("garbage") == {} and parse_ptxas_verbose("") == {}


def test_llir_debug_locations_follow_inlined_at() -> None:
    case = load_case("softmax_good")
    instrs = parse_llir(case.stages["llir"])
    user = UserFiles([case.path])
    maxes = [i for i in instrs if i.opcode == "call @llvm.maxnum.f32"]
    assert maxes
    for ins in maxes:
        assert ins.loc.frames[0].file.endswith("standard.py") and len(ins.loc.frames) >= 2
        assert ins.loc.user_frame(user).line == case.line("tl.max(x")
    loads = [i for i in instrs if "ld.global" in i.text]
    assert loads and {i.loc.user_frame(user).line for i in loads} == {case.line("x = tl.load")}


def test_parsers_survive_garbage() -> None:
    for text in (
        "",
        "\x00\x01",
        "ld.global.v4.b32 ;;;",
        "/*0000*/ NOTSASS",
        "define void @f() {\n  %1 = !dbg !99\n}",
    ):
        parse_ptx(text)
        parse_sass(text)
        parse_llir(text)
