"""The runner imports a kernel file the way Python does: as a module of its package, with relative and
conditional imports, dtype-valued constexprs, and a failed import reported on its own line."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

KERNEL = """
@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, helper(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def launch(x):
    scale_kernel[(1,)](x, x.numel(), BLOCK=128)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def analyze(runner: LocalRunner, path: Path, kernel: str = "scale_kernel"):
    return analyze_kernel(path.read_text(), str(path), kernel, "sm_90", runner, max_variants=1)


def test_relative_import_two_levels_up_in_a_package(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "",
            "pkg/__init__.py": "",
            "pkg/utils.py": """
                import triton
                import triton.language as tl

                @triton.jit
                def helper(x):
                    return x * 2
            """,
            "pkg/ops/__init__.py": "",
            "pkg/ops/scale.py": "import triton\nimport triton.language as tl\nfrom ..utils import helper\n"
            + KERNEL,
        },
    )
    result = analyze(cuda_runner, tmp_path / "pkg/ops/scale.py")
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    assert not [f for f in result.findings if f.code in ("TL004", "TL005")]


def test_package_whose_init_fails_still_resolves_relative_imports(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "import a_library_nobody_installed\n",
            "pkg/utils.py": "import triton\n\n@triton.jit\ndef helper(x):\n    return x + 1\n",
            "pkg/scale.py": "import triton\nimport triton.language as tl\nfrom .utils import helper\n"
            + KERNEL,
        },
    )
    result = analyze(cuda_runner, tmp_path / "pkg/scale.py")
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])


def test_conditional_import_and_a_failed_import_on_its_line(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    source = (
        "import triton\nimport triton.language as tl\n"
        "try:\n    import torch_npu_not_here\n    HAS_NPU = True\nexcept ImportError:\n    HAS_NPU = False\n"
        "if not HAS_NPU:\n    from helpers_mod import helper\n"
        "import missing_module_xyz\n" + KERNEL
    )
    write(
        tmp_path,
        {"helpers_mod.py": "import triton\n\n@triton.jit\ndef helper(x):\n    return x\n", "k.py": source},
    )
    result = analyze(cuda_runner, tmp_path / "k.py")
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    failed = [f for f in result.findings if f.code == "TL004"]
    # the guarded import failed for real (HAS_NPU is False, so helpers_mod was imported); the unguarded one
    # of a module this environment lacks got a stand-in, said on its own line
    assert len(failed) == 1 and failed[0].span.line == 10, failed
    assert "missing_module_xyz" in failed[0].message and "stand-in" in failed[0].message


def test_an_import_the_kernel_needs_fails_loudly(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    # the module exists but lacks the name: a real ImportError, no stand-in
    write(tmp_path, {"helpers_lib.py": "x = 1\n"})
    source = "import triton\nimport triton.language as tl\nfrom helpers_lib import helper\n" + KERNEL
    write(tmp_path, {"k.py": source})
    result = analyze(cuda_runner, tmp_path / "k.py")
    assert result.primary is None
    codes = {f.code: f for f in result.findings}
    assert codes["TL004"].span.line == 3 and "cannot import name 'helper'" in codes["TL004"].message
    assert "TL005" in codes or "TL300" in codes  # never an empty result after an error


def test_dtype_valued_constexpr_from_a_pragma(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        # tritonlens: OUT_DTYPE=tl.float16, BLOCK=128, x_ptr=*fp32, y_ptr=*fp16
        @triton.jit
        def cast_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, OUT_DTYPE: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n).to(OUT_DTYPE), mask=offs < n)
        """
    )
    write(tmp_path, {"cast.py": source})
    result = analyze(cuda_runner, tmp_path / "cast.py", "cast_kernel")
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    assert "f16" in result.primary.stages["ttir"]


def test_a_kernel_that_uses_a_stood_in_module_fails_with_the_compilers_message(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    source = "import triton\nimport triton.language as tl\nfrom not_installed_lib import helper\n" + KERNEL
    write(tmp_path, {"k.py": source})
    result = analyze(cuda_runner, tmp_path / "k.py")
    assert result.primary is None
    codes = {f.code: f for f in result.findings}
    assert codes["TL004"].span.line == 3 and "not_installed_lib" in codes["TL004"].message
    assert codes["TL004"].severity.name == "WARNING"
    # the compiler's complaint is about the stand-in, not the user's code: no TL300 on the kernel, the hint
    # says what was not analysed and why
    assert "TL300" not in codes
    (hint,) = [f for f in result.findings if f.code == "TL002" and "not_analysed" in f.data]
    assert "stand-in for `not_installed_lib`" in hint.message and hint.severity.name == "HINT"


def test_a_stood_in_module_the_compile_error_does_not_name_is_not_its_cause(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    # the wrapper's helpers come from a module this environment lacks; the kernel fails on its own `if`
    kernel = """
@triton.jit
def bounds_kernel(x_ptr, off_ptr, n, BLOCK: tl.constexpr):
    if tl.program_id(0) > 0:
        end = tl.program_id(0).to(tl.int64)
    else:
        end = n
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs, mask=offs < end)


def launch(x, offsets):
    bounds_kernel[(2,)](x, offsets, x.numel(), BLOCK=128)
"""
    source = "import torch\nimport triton\nimport triton.language as tl\nfrom wrapper_utils_missing import *\n" + kernel
    source = source.replace("def launch(x, offsets):", "def launch(x: torch.Tensor, offsets: torch.Tensor):")
    write(tmp_path, {"k.py": source})
    result = analyze(cuda_runner, tmp_path / "k.py", "bounds_kernel")
    codes = {f.code: f for f in result.findings}
    assert result.primary is None and "Mismatched type for end" in codes["TL300"].message
    assert codes["TL004"].severity.name == "INFO", codes["TL004"].message
    assert "its error does not name this module" in codes["TL004"].message


def test_a_package_init_needing_a_missing_library_loads_with_a_stand_in(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "import yaml_like_missing_lib\nCONFIG = yaml_like_missing_lib.safe_load('')\n",
            "pkg/utils.py": "import triton\n\n@triton.jit\ndef helper(x):\n    return x + 1\n",
            "pkg/scale.py": "import triton\nimport triton.language as tl\nfrom pkg.utils import helper\n"
            + KERNEL,
        },
    )
    result = analyze(cuda_runner, tmp_path / "pkg/scale.py")
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    notes = [f for f in result.findings if f.code == "TL004"]
    assert notes and all(f.severity.name == "INFO" for f in notes)
    assert "yaml_like_missing_lib" in notes[0].message
