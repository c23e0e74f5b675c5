"""Kernels defined under a module-level guard (`if has_triton():` with `else:` stand-ins, `try:` with an
`except ImportError:` fallback) are found by the kernel model and compiled by the runner even when the guard is
false on the runner, from the guarded branch's own statements; every finding of such a compile says so."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

from tritonlens.analysis.core.findings import Severity
from tritonlens.analysis.kernels.dependencies import dependency_sources
from tritonlens.analysis.kernels.parse import parse_module
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

GUARDED = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    def has_gpu_triton():
        return False  # as torch's has_triton() answers on a machine without a GPU


    if has_gpu_triton():

        @triton.jit
        def _half(x):
            return x * 0.5

        @triton.jit
        def guarded_kernel(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(x_ptr + offs, _half(tl.load(x_ptr + offs, mask=mask)), mask=mask)

        def launch(x):
            guarded_kernel[(1,)](x, x.numel(), BLOCK=128)

    else:

        def _half(x):
            raise NotImplementedError("needs triton")

        guarded_kernel = None

    try:
        from vendor_that_is_not_installed import fast_path  # noqa: F401

        @triton.jit
        def tried_kernel(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    except ImportError:
        tried_kernel = None
    """
)


def _worker_module(name: str):  # noqa: ANN202 - a stdlib module of the runner, imported by path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def test_kernel_model_finds_guarded_kernels_and_their_helpers() -> None:
    module = parse_module(GUARDED)
    assert {k.name for k in module.kernels} == {"guarded_kernel", "tried_kernel"}
    assert [h.name for h in module.helpers] == ["_half"]
    assert [site.function for site in module.launches_of("guarded_kernel")] == ["launch"]


def test_cache_key_of_a_guarded_kernel_is_its_own_text() -> None:
    # keyed like a top-level kernel (not by the whole buffer): its helpers and the guard count, a launcher not
    key = dependency_sources(GUARDED, "guarded_kernel")
    assert key is not None and "<module>@10" in key and key["<module>@10"] == "if has_gpu_triton():"
    assert {k.split("@")[0] for k in key if not k.startswith("<module>")} == {"guarded_kernel", "_half"}
    launcher_edited = GUARDED.replace("guarded_kernel[(1,)](x, x.numel(), BLOCK=128)", "pass")
    assert dependency_sources(launcher_edited, "guarded_kernel") == key
    helper_edited = GUARDED.replace("return x * 0.5", "return x * 0.25")
    assert dependency_sources(helper_edited, "guarded_kernel") != key


def test_plan_takes_the_guarded_branch_with_its_helpers() -> None:
    source_alone = _worker_module("source_alone")
    tree = ast.parse(GUARDED)
    plan = source_alone.plan_alone(tree, "guarded_kernel")
    assert plan is not None
    kept = [ast.unparse(s).splitlines()[0] for s in plan.statements]
    assert kept == [
        "import triton",
        "import triton.language as tl",
        "@triton.jit",  # _half of the guarded branch, not the `else:` stand-in
        "@triton.jit",
    ]
    assert [s.name for s in plan.statements if isinstance(s, ast.FunctionDef)] == ["_half", "guarded_kernel"]
    guard = source_alone.guard_of(tree, "guarded_kernel")
    assert source_alone.guard_text(guard) == "`if has_gpu_triton():` (line 10)"
    tried = source_alone.plan_alone(tree, "tried_kernel")
    assert tried is not None and "tried_kernel = None" not in [ast.unparse(s) for s in tried.statements]
    assert source_alone.guard_text(source_alone.guard_of(tree, "tried_kernel")) == "`try:` (line 32)"
    assert source_alone.guard_of(ast.parse("import triton\n@triton.jit\ndef k(x):\n    pass\n"), "k") is None


def test_kernel_hidden_by_a_false_guard_is_compiled_and_labeled(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    path = tmp_path / "guarded.py"
    path.write_text(GUARDED)
    for kernel, guard in (("guarded_kernel", "if has_gpu_triton():"), ("tried_kernel", "try:")):
        result = analyze_kernel(GUARDED, str(path), kernel, "sm_90", cuda_runner, max_variants=1)
        assert result.primary is not None, (kernel, result.error, [v.errors for v in result.variants])
        reason = result.primary.metadata["source_alone"]["reason"]
        assert f"defined under `{guard}`" in reason, reason
        ir = [f for f in result.findings if f.data.get("variant")]
        for f in ir:
            assert "analyzed from the file's source alone" in f.message, f.message
            assert f.severity >= Severity.WARNING


def test_kernel_under_a_true_guard_is_not_labeled(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    text = GUARDED.replace("return False  #", "return True  #")
    path = tmp_path / "open_guard.py"
    path.write_text(text)
    result = analyze_kernel(text, str(path), "guarded_kernel", "sm_90", cuda_runner, max_variants=1)
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    assert "source_alone" not in result.primary.metadata


def test_guarded_kernel_compiles_for_ascend_too(tmp_path: Path, ascend_runner: LocalRunner) -> None:
    path = tmp_path / "guarded_npu.py"
    path.write_text(GUARDED)
    result = analyze_kernel(
        GUARDED, str(path), "guarded_kernel", "ascend910b3", ascend_runner, max_variants=1
    )
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    assert "defined under `if has_gpu_triton():`" in result.primary.metadata["source_alone"]["reason"]
