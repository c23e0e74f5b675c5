"""TL300/TL400 (issue 24): a compile failure whose cause is the runner (an API the installed compiler lacks, a
stand-in for a missing module) is attributed to it first and is never above INFO; a real error stays an error."""

from __future__ import annotations

from types import SimpleNamespace

from tritonlens.analysis.compiler.outcome import failure_findings
from tritonlens.analysis.core.findings import Severity, Span

SOURCE = """import triton
import triton.language as tl
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    core = tl.sub_vec_id()
    tl.store(x_ptr + tl.arange(0, BLOCK), core)
"""


def _variant(message: str, metadata: dict | None = None) -> SimpleNamespace:
    spec = SimpleNamespace(label="launch values", provenance={}, constants={"BLOCK": 64}, signature={})
    error = SimpleNamespace(stage="ttir", message=message, line=5, col=11)
    return SimpleNamespace(
        ok=False, errors=[error], specialization=spec, metadata=metadata or {}, compiler=None
    )


def _one(message: str, platform: str = "ascend", metadata: dict | None = None):
    (f,) = failure_findings([_variant(message, metadata)], platform, SOURCE, "k", Span(4, 0, 4, 1))
    return f


def test_missing_api_is_the_cause_not_the_unified_buffer() -> None:
    f = _one("AttributeError: module 'triton.language' has no attribute 'sub_vec_id'")
    assert f.severity == Severity.INFO and f.data["missing_api"] == "triton.language.sub_vec_id"
    assert "not in the installed triton-ascend" in f.message and "reduce block sizes" not in f.message


def test_missing_extension_module_is_info() -> None:
    f = _one("ModuleNotFoundError: No module named 'triton.language.extra.cann'", platform="cuda")
    assert f.severity == Severity.INFO and f.data["cause"] == "missing_api"


def test_stand_in_named_in_the_error_is_the_cause() -> None:
    meta = {"module_warnings": [{"line": 1, "import": True, "stand_in": "vendor_ext.helpers"}]}
    f = _one("TypeError: 'helpers' object is not callable", metadata=meta)
    assert f.severity == Severity.INFO and f.data["stand_in"] == "vendor_ext.helpers"


def test_a_real_compile_error_stays_an_error() -> None:
    f = _one("ValueError: arange's range must be a power of 2")
    assert f.severity == Severity.ERROR and "powers of two" in f.message


EXT = """import triton
import triton.language as tl
import triton.language.extra.vendor_ext as vx
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    with vx.async_task():
        tl.store(x_ptr + tl.arange(0, BLOCK), vx.core_id())
"""


def _ext(message: str):
    meta = {"module_warnings": [{"line": 3, "import": True, "message": "No module named 'x'"}]}
    (f,) = failure_findings([_variant(message, meta)], "ascend", EXT, "k", Span(4, 0, 4, 1))
    return f


def test_name_from_a_failed_triton_import_is_the_cause() -> None:
    f = _ext("CompilationError: NameError('vx is not defined')")
    assert f.severity == Severity.INFO and "line 3" in f.message and f.data["cause"] == "missing_api"


def test_construct_of_a_missing_extension_is_info() -> None:
    f = _ext("UnsupportedLanguageConstruct: unsupported AST node type: With")
    assert f.severity == Severity.INFO


def test_an_undefined_name_of_the_kernels_own_stays_an_error() -> None:
    f = _ext("CompilationError: NameError('BLOCKK is not defined')")
    assert f.severity == Severity.ERROR
