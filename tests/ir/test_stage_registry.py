"""IR stages are declared once per platform (issue 20 item 3): `ParsedStages`, the attribution, the CLI's
`tritonlens ir --stage` list and the IR view's stage list all come from analysis/compiler/stages.py, so adding a
stage is one `add_stage(Stage(...))`."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest
from cuda_cases import load_case

from tritonlens.analysis.compiler import stages
from tritonlens.analysis.compiler.attribution import ParsedStages, attribute, attribute_mlir, user_files_for
from tritonlens.analysis.compiler.ir.mlir import MlirModule, parse_mlir
from tritonlens.server.commands import ir as ir_command

ROOT = Path(__file__).resolve().parents[2]


def test_every_platform_declares_its_stages_in_compile_order() -> None:
    assert [s.name for s in stages.stages("cuda")] == ["ttir", "ttgir", "llir", "ptx", "sass"]
    assert [s.name for s in stages.stages("ascend")] == ["ttir", "ttadapter", "npubin", "hivm"]
    assert stages.stage_names() == ("ttir", "ttgir", "llir", "ptx", "sass", "ttadapter", "hivm")  # text stages
    assert stages.only_on("cuda") == ("ttgir", "llir", "ptx", "sass")
    assert stages.only_on("ascend") == ("ttadapter", "hivm")
    for platform in ("cuda", "ascend"):
        for s in stages.stages(platform):
            assert (ROOT / s.worker).is_file(), f"{s.name}: no worker step {s.worker}"


@pytest.fixture
def extra_stage() -> Iterator[stages.Stage]:
    """One new NVIDIA stage, declared in one place: a second copy of the TTGIR (as a pass dump would be)."""
    new = stages.add_stage(
        stages.Stage("ttgir_late", "cuda", "ascend_runner/worker/compile_cuda.py", parse_mlir, attribute_mlir)
    )
    try:
        yield new
    finally:
        stages.remove_stage("cuda", "ttgir_late")


def test_a_stage_added_in_one_place_is_parsed_attributed_offered_and_listed(extra_stage: stages.Stage) -> None:
    case = load_case("softmax_multipass")
    compiled = {**case.stages, "ttgir_late": case.stages["ttgir"]}
    parsed = ParsedStages.parse(compiled)
    assert isinstance(parsed.ttgir_late, MlirModule)  # ParsedStages has a field for it
    found = attribute(parsed, user_files_for(case.path, parsed, case.kernel))
    assert found.line_maps["ttgir_late"] == found.line_maps["ttgir"]  # attributed like the stage it copies
    line = case.line("tl.load(scale_ptr)")
    assert found.lines[line].classes["ttgir_late"] == found.lines[line].classes["ttgir"]
    # the CLI offers it, refuses it for an Ascend target and prints it with markers
    parser = argparse.ArgumentParser()
    ir_command.register(parser.add_subparsers())
    args = parser.parse_args(["ir", "k.py", "--kernel", "k", "--stage", "ttgir_late"])
    assert args.stage == "ttgir_late" and not ir_command.is_ascend_stage("ttgir_late")
    assert "ttgir_late" in stages.only_on("cuda")
    # the IR view lists it in compile order, after the stage before it
    assert stages.ordered(compiled, "cuda")[:6] == ["ttir", "ttgir", "llir", "ptx", "sass", "ttgir_late"]


def test_without_the_declaration_the_stage_is_unknown() -> None:
    case = load_case("softmax_multipass")
    parsed = ParsedStages.parse({**case.stages, "ttgir_late": case.stages["ttgir"]})
    with pytest.raises(AttributeError):
        parsed.ttgir_late  # noqa: B018
    parser = argparse.ArgumentParser()
    ir_command.register(parser.add_subparsers())
    with pytest.raises(SystemExit):
        parser.parse_args(["ir", "k.py", "--kernel", "k", "--stage", "ttgir_late"])
    # a key the compile returned that no platform declares is still listed, after the declared ones
    assert stages.ordered(["ttgir_late", "ttir"], "cuda") == ["ttir", "ttgir_late"]


def test_the_ir_view_orders_hivm_dumps_after_their_stage() -> None:
    produced = ["ttir", "hivm.sync", "ttadapter", "hivm", "npubin", "hivm.plan-memory", "hivm.log"]
    assert stages.ordered(produced, "ascend") == [
        "ttir", "ttadapter", "npubin", "hivm", "hivm.sync", "hivm.plan-memory", "hivm.log",
    ]  # fmt: skip
    # what the worker returns is already in that order: the view's list is unchanged by the ordering
    worker_order = ["ttir", "ttadapter", "npubin", "hivm", "hivm.sync", "hivm.plan-memory", "hivm.log"]
    assert stages.ordered(worker_order, "ascend") == worker_order
