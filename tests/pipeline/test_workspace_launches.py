"""Launch values from launch sites in other files of the workspace (issue 24, Deliver 1): a kernel defined in
`pkg/ops/kernels.py` and launched from `pkg/ops/wrapper.py` (a relative import with an alias), from a module
alias (`import pkg.ops.kernels as km`) and through a re-export of `pkg/ops/__init__.py` compiles on the
wrappers' values, not on guesses, and its findings say which launch they came from. A workspace where no
other file launches the kernel keeps the behaviour of the file alone."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.guess import ASSUMED_TYPICAL
from tritonlens.analysis.specialize.workspace_launches import foreign_launches, module_file
from tritonlens.analysis.state.session import Session
from tritonlens.server.engine.diagnose import workspace_index
from tritonlens.server.engine.diagnose.inputs import compile_inputs_digest
from tritonlens.server.engine.diagnose.workspace_index import launches_elsewhere

KERNEL = """
    import triton
    import triton.language as tl


    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACT: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        if ACT == "relu":
            x = tl.maximum(x, 0.0)
        y = tl.math.div_rn(x, x + 1.0)
        tl.store(y_ptr + offs, y, mask=mask)
"""

WRAPPER = """
    import torch
    import triton

    from .kernels import scale_kernel as _scale

    BLOCK_SIZE = 256


    def scale(x: torch.Tensor) -> torch.Tensor:
        x = x.to(torch.float16)
        y = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, BLOCK_SIZE),)
        _scale[grid](x, y, n, BLOCK=BLOCK_SIZE, ACT="relu", num_warps=2)
        return y
"""

MODULE_ALIAS = """
    import torch
    import pkg.ops.kernels as km


    def double(x):
        y = torch.empty(x.shape, dtype=torch.bfloat16, device=x.device)
        km.scale_kernel[(8,)](x, y, x.numel(), BLOCK=512, ACT="none")
        return y
"""

REEXPORTED = """
    from pkg.ops import scale_kernel


    def run(x, y, n):
        scale_kernel[(1,)](x, y, n, 1024, "relu")
"""

NOT_THE_KERNEL = """
    import triton
    import triton.language as tl


    @triton.jit
    def scale_kernel(a, b, n, BLOCK: tl.constexpr, ACT: tl.constexpr):  # its own, same name
        pass


    def go(x, y):
        scale_kernel[(1,)](x, y, 7, BLOCK=64, ACT="gelu")
"""

WORKSPACE = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/ops/__init__.py": "from .kernels import scale_kernel\n",
    "pkg/ops/kernels.py": KERNEL,
    "pkg/ops/wrapper.py": WRAPPER,
    "pkg/other/alias.py": MODULE_ALIAS,
    "tools/reexported.py": REEXPORTED,
    "tools/unrelated.py": NOT_THE_KERNEL,
}


def texts(files: dict[str, str]) -> dict[str, str]:
    return {rel: textwrap.dedent(text) for rel, text in files.items() if rel.endswith(".py")}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root / "pkg/ops/kernels.py"


@pytest.fixture(autouse=True)
def fresh_session():
    with Session().active():
        yield


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), start=1) if needle in line)


def test_module_file_resolves_relative_and_absolute_imports() -> None:
    files = set(texts(WORKSPACE))
    assert module_file("pkg/ops/wrapper.py", "kernels", 1, files) == "pkg/ops/kernels.py"
    assert module_file("pkg/other/alias.py", "pkg.ops.kernels", 0, files) == "pkg/ops/kernels.py"
    assert module_file("tools/reexported.py", "pkg.ops", 0, files) == "pkg/ops/__init__.py"
    assert module_file("pkg/ops/wrapper.py", None, 2, files) == "pkg/__init__.py"
    assert module_file("pkg/ops/wrapper.py", "nowhere", 1, files) is None
    assert module_file("tools/reexported.py", None, 3, files) is None  # above the workspace


def test_every_import_form_finds_its_launch_and_a_same_named_kernel_is_not_it() -> None:
    found = foreign_launches(texts(WORKSPACE), "pkg/ops/kernels.py", "scale_kernel")
    where = [f.where for f in found]
    assert where == [
        f"pkg/ops/wrapper.py:{line_of(WRAPPER, '_scale[grid]')}",  # nearest first: the kernel's own package
        f"pkg/other/alias.py:{line_of(MODULE_ALIAS, 'km.scale_kernel[')}",
        f"tools/reexported.py:{line_of(REEXPORTED, 'scale_kernel[')}",
    ]
    assert not any(f.path == "tools/unrelated.py" for f in found)


def test_specialization_reads_the_wrappers_values_before_any_guess() -> None:
    files = texts(WORKSPACE)
    found = foreign_launches(files, "pkg/ops/kernels.py", "scale_kernel")
    specs = specializations(files["pkg/ops/kernels.py"], "scale_kernel", foreign=found)
    first = specs[0]
    assert first.label == f"launch at pkg/ops/wrapper.py:{line_of(WRAPPER, '_scale[grid]')}"
    assert first.values_from == first.label.removeprefix("launch at ")
    assert first.constants == {"BLOCK": 256, "ACT": "relu"}  # a module constant of the wrapper, a string
    assert first.options == {"num_warps": 2}
    assert first.signature["x_ptr"] == first.signature["y_ptr"] == "*fp16"  # the dtype the wrapper casts to
    assert not any(why.startswith(ASSUMED_TYPICAL) for why in first.provenance.values())
    second = specs[1]
    assert second.constants == {"BLOCK": 512, "ACT": "none"} and second.signature["y_ptr"] == "*bf16"
    third = specs[2]
    assert third.constants == {"BLOCK": 1024, "ACT": "relu"}  # positional constexprs through the re-export


def test_no_launching_file_keeps_the_file_alone_behaviour(tmp_path: Path) -> None:
    files = {k: v for k, v in WORKSPACE.items() if k in ("pyproject.toml", "pkg/__init__.py", "pkg/ops/kernels.py")}
    files["pkg/ops/unrelated.py"] = NOT_THE_KERNEL
    path = write(tmp_path, files)
    text = path.read_text()
    assert launches_elsewhere(str(path), text, "scale_kernel").launches == ()
    alone = specializations(text, "scale_kernel")
    assert [s.to_dict() for s in specializations(text, "scale_kernel", foreign=())] == [s.to_dict() for s in alone]
    assert all(not s.values_from for s in alone)
    assert any(why.startswith(ASSUMED_TYPICAL) for why in alone[0].provenance.values())  # still a labelled guess


def test_index_reads_the_disk_once_and_a_changed_wrapper_changes_the_compile_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, WORKSPACE)
    text = path.read_text()
    monkeypatch.setattr(workspace_index, "RESCAN_S", 0.0)
    found = launches_elsewhere(str(path), text, "scale_kernel")
    assert [f.path for f in found.launches] == ["pkg/ops/wrapper.py", "pkg/other/alias.py", "tools/reexported.py"]
    before = compile_inputs_digest(text, str(path), "scale_kernel")
    index = workspace_index.workspace_index(workspace_index.index_root(str(path)))
    kept = index.files["pkg/ops/kernels.py"]
    wrapper = tmp_path / "pkg/ops/wrapper.py"
    wrapper.write_text(wrapper.read_text().replace("BLOCK_SIZE = 256", "BLOCK_SIZE = 128  # retuned"))
    after = compile_inputs_digest(text, str(path), "scale_kernel")
    assert after != before
    assert index.files["pkg/ops/kernels.py"] is kept  # an unchanged file is not read again
    spec = specializations(text, "scale_kernel", foreign=launches_elsewhere(str(path), text, "scale_kernel").launches)
    assert spec[0].constants["BLOCK"] == 128


def test_index_caps_the_files_it_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, WORKSPACE)
    monkeypatch.setattr(workspace_index, "MAX_FILES", 2)
    index = workspace_index.WorkspaceIndex(tmp_path)
    index.refresh()
    assert len(index.files) == 2 and index.truncated


@pytest.mark.cuda_env
@pytest.mark.usefixtures("cuda_env", "compile_cache")
def test_check_ir_compiles_on_the_wrappers_values_and_says_so(cli, tmp_path: Path) -> None:
    path = write(tmp_path, WORKSPACE)
    result = cli("check", "--level", "ir", "--target", "sm_90", "--format", "json", str(path))
    assert result.rc in (0, 1), result.err
    found = result.json()
    precise = [f for f in found if f["code"] == "TL313"]
    where = f"pkg/ops/wrapper.py:{line_of(WRAPPER, '_scale[grid]')}"
    assert precise, [(f["code"], f["message"]) for f in found]
    assert f"[values from the launch at {where}]" in precise[0]["message"]
    assert precise[0]["data"]["values_from"] == where
    assert precise[0]["data"]["specialization"]["constants"] == {"BLOCK": 256, "ACT": "relu"}
    assert "assumed_values" not in precise[0]["data"]  # no guess: every value came from the wrapper
