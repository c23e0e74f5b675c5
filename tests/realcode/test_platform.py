"""Platform awareness: each file's platform from its evidence; `auto` keeps the other platform's rules off."""

from __future__ import annotations

from tritonlens.analysis.core.findings import Finding, Level, Severity, Span
from tritonlens.analysis.core.platform import decide, resolve_target
from tritonlens.analysis.core.settings import Settings
from tritonlens.analysis.core.targets import compile_target_for

CUDA_FILE = """
import torch, triton
import triton.language as tl
x = torch.empty(16, device="cuda")
"""
ASCEND_FILE = """
import torch
import torch_npu
import triton
import triton.language as tl
"""
CANN_FILE = """
import triton.language.extra.cann.extension as ext
"""
PLAIN_FILE = """
import triton
import triton.language as tl
"""


def test_evidence_decides_the_platform() -> None:
    assert decide(CUDA_FILE).platforms == ("cuda",)
    assert decide(ASCEND_FILE).platforms == ("ascend",)
    assert decide(CANN_FILE).platforms == ("ascend",)
    assert decide('y = x.to(device="npu")').platforms == ("ascend",)
    assert decide(CUDA_FILE + ASCEND_FILE).platforms == ("cuda", "ascend")


def test_no_evidence_is_cuda_and_says_it_was_assumed() -> None:
    plain = decide(PLAIN_FILE, "kernels/add.py")
    assert plain.platforms == ("cuda",) and plain.assumed and "no platform evidence" in plain.evidence[0]


def test_backend_folders_decide_only_when_the_text_is_silent() -> None:
    assert decide(PLAIN_FILE, "src/ops/ascend/add.py").platforms == ("ascend",)
    assert decide(PLAIN_FILE, "third_party/npu/tutorials/add.py").platforms == ("ascend",)
    assert decide(CUDA_FILE, "src/ascend/add.py").platforms == ("cuda",)  # the text wins


def test_explicit_targets_override_the_evidence() -> None:
    assert resolve_target("both", CUDA_FILE) == ("cuda", "ascend")
    assert resolve_target("ascend", CUDA_FILE) == ("ascend",)
    assert resolve_target("auto", ASCEND_FILE) == ("ascend",)
    assert (
        compile_target_for(("ascend",)) == "ascend910b3" and compile_target_for(("cuda", "ascend")) == "sm_90"
    )


def _finding(code: str, platforms: tuple[str, ...]) -> Finding:
    return Finding(code, "m", Span(1, 0, 1, 1), Severity.WARNING, Level.TRIAGE, platforms=platforms)


def test_auto_is_the_default_and_filters_per_file() -> None:
    settings = Settings()
    assert settings.target == "auto"
    findings = [
        _finding("TL150", ("ascend",)),
        _finding("TL101", ("cuda",)),
        _finding("TL110", ("cuda", "ascend")),
    ]
    on_cuda = [f.code for f in settings.for_file(CUDA_FILE, "a.py").apply(findings)]
    on_ascend = [f.code for f in settings.for_file(ASCEND_FILE, "b.py").apply(findings)]
    assert on_cuda == ["TL101", "TL110"]
    assert on_ascend == ["TL150", "TL110"]
    both = Settings.from_mapping({"target": "both"}).for_file(CUDA_FILE, "a.py")
    assert [f.code for f in both.apply(findings)] == ["TL150", "TL101", "TL110"]


def test_backend_folder_of_a_package_without_project_marker_is_evidence(tmp_path) -> None:
    from tritonlens.server.engine.record.launch_store import project_relative

    folder = tmp_path / "vendor_ops" / "backend" / "_ascend" / "ops"
    folder.mkdir(parents=True)
    for level in (folder, folder.parent, folder.parent.parent, folder.parent.parent.parent):
        (level / "__init__.py").write_text("")
    kernel = folder / "add.py"
    kernel.write_text("import triton\n")
    rel = project_relative(str(kernel))
    assert rel.replace("\\", "/") == "vendor_ops/backend/_ascend/ops/add.py"
    assert decide("import triton\n", rel).platforms == ("ascend",)


def test_every_text_pattern_has_a_literal_its_matches_contain() -> None:
    from tritonlens.analysis.core import platform

    samples = {
        "imports torch_npu": "import torch_npu\n",
        "uses triton.language.extra.cann": "from triton.language.extra import cann\n",
        "uses triton.backends.ascend": "import triton.backends.ascend.driver\n",
        'device="npu"': 'x = torch.ones(3, device="npu")\n',
        ".npu()": "x = y.npu()\n",
        'device="cuda"': "x = torch.ones(3, device='cuda')\n",
        ".cuda()": "x = y.cuda()\n",
        "uses triton.language.extra.cuda": "from triton.language.extra.cuda import libdevice\n",
        "uses TMA descriptors": "desc = tl.make_tensor_descriptor(p, [1], [1], [1])\n",
        "inline PTX": "y = tl.inline_asm_elementwise('mov', '=r,r', [x], dtype=tl.int32)\n",
    }
    for pattern, why in (*platform._ASCEND_TEXT, *platform._CUDA_TEXT):
        assert why in platform._NEEDLES, why  # a new pattern needs its literal
        assert platform._shows(samples[why], pattern, why), why
