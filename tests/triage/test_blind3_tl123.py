"""TL123 severity (blind sample 3, docs/precision.md): a device print is a warning where the kernel ships, info in a
test file (a compiler smoke test may exist to print); the finding itself is kept."""

from __future__ import annotations

import textwrap

from tritonlens.analysis.core.findings import Severity
from tritonlens.analysis.triage import triage

KERNEL = textwrap.dedent(
    """\
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.device_print("x", x)
        tl.store(y_ptr + offs, x + 1, mask=offs < n)
    """
)


def severities(path: str) -> list[Severity]:
    return [f.severity for f in triage(KERNEL, path, strict=True).findings if f.code == "TL123"]


def test_a_print_in_a_shipped_kernel_is_a_warning() -> None:
    assert severities("pkg/kernels/add.py") == [Severity.WARNING]
    # near miss: a name that merely contains "test" is not a test file
    assert severities("pkg/latest/contest.py") == [Severity.WARNING]


def test_a_print_in_a_test_file_is_kept_as_info() -> None:
    for path in ("python/test/unit/basic.py", "tests/kernels/add.py", "pkg/test_add.py", "pkg/add_test.py"):
        (sev,) = severities(path)
        assert sev == Severity.INFO, path
    (f,) = [f for f in triage(KERNEL, "tests/add.py", strict=True).findings if f.code == "TL123"]
    assert "a test file" in f.message and f.fix is not None
