"""TL122, TL123: float64 arithmetic and device printing inside kernels."""

from __future__ import annotations

from triage_helpers import locate, of

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    s = tl.sum(x.to(tl.float64), axis=0)
    tl.device_print("sum", s)
    print("x", x)
    tl.static_print(BLOCK)
    tl.store(x_ptr + offs, x / s.to(tl.float32))
"""


def test_tl122_fires_on_float64() -> None:
    (f,) = of(KERNEL, "TL122")
    assert f.span == locate(KERNEL, "tl.float64")


def test_tl122_is_info_where_the_host_code_makes_float64_data() -> None:
    # a solver whose caller casts its data to float64 computes in float64 on purpose: worth knowing, not a slip
    (warning,) = of(KERNEL, "TL122")
    assert warning.severity.name == "WARNING" and "use tl.float32" in warning.message
    for host in ("\ndef go(x):\n    k[(1,)](x.double(), BLOCK=64)\n",
                 "\nimport torch\n\ndef go(x):\n    k[(1,)](x.to(torch.float64), BLOCK=64)\n"):
        (info,) = of(KERNEL + host, "TL122")
        assert info.severity.name == "INFO" and "host code makes" in info.message, info.message


def test_tl122_follows_an_edit_of_host_code_that_does_not_launch_the_kernel() -> None:
    # the editor's triage cache keys each kernel by what its checks read: a caller that casts the data to float64
    # (it does not launch the kernel itself) changes TL122, so it changes the key too
    from tritonlens.analysis.triage import triage

    launcher = "\ndef go(x):\n    k[(1,)](x, BLOCK=64)\n\n\ndef solve(x):\n    return go(x{cast})\n"
    severities = [[f.severity.name for f in triage(KERNEL + launcher.format(cast=cast), "solver.py").findings
                   if f.code == "TL122"] for cast in ("", ".double()", "")]
    assert severities == [["WARNING"], ["INFO"], ["WARNING"]]


def test_tl123_fires_on_device_print_and_print_but_not_static_print() -> None:
    spans = [f.span for f in of(KERNEL, "TL123")]
    assert spans == [locate(KERNEL, 'tl.device_print("sum", s)'), locate(KERNEL, 'print("x", x)')]


def test_hygiene_rules_silent_on_clean_kernels(data_source) -> None:
    for name in ("good_softmax.py", "good_matmul.py"):
        assert not of(data_source(name), "TL122")
        assert not of(data_source(name), "TL123")


def test_print_outside_kernels_is_not_reported() -> None:
    src = KERNEL + "\nprint('host side')\n"
    assert len(of(src, "TL123")) == 2


def test_tl123_fix_deletes_the_print_lines_and_keeps_valid_python() -> None:
    import ast
    import textwrap

    source = textwrap.dedent(KERNEL)
    (first, second) = of(KERNEL, "TL123")
    assert first.fix is not None and second.fix is not None
    edit = first.fix.edits[0]
    assert (edit.span.col, edit.span.end_line, edit.span.end_col) == (0, edit.span.line + 1, 0)
    lines = source.split("\n")
    del lines[edit.span.line - 1 : edit.span.end_line - 1]
    fixed = "\n".join(lines)
    ast.parse(fixed)
    assert "device_print" not in fixed and len(of(fixed, "TL123")) == 1


def test_tl123_no_fix_when_the_print_is_the_only_statement_or_shares_a_line() -> None:
    only = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x):
        if x > 0:
            tl.device_print("x", x)
        y = x; print(y)
    """
    found = of(only, "TL123")
    assert len(found) == 2 and all(f.fix is None for f in found)


def test_tl122_silent_in_a_float64_mode_the_caller_selects() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def rope(x_ptr, theta, internal_dtype: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if internal_dtype == "f32":
            theta = theta.to(tl.float32)
        elif internal_dtype == "f64":
            theta = theta.to(tl.float64)
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, x * theta)
    """
    assert not of(src, "TL122")
    # the same cast outside the constexpr branch is reported
    unguarded = src.replace('        elif internal_dtype == "f64":\n            theta', "        theta")
    assert len(of(unguarded, "TL122")) == 1


def test_tl122_silent_for_one_float64_scalar_per_program() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def quant(x_ptr, q_ptr, s_ptr, FP8_MAX: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs).to(tl.float32)
        amax = tl.max(tl.abs(x)).to(tl.float64)
        scale = (FP8_MAX / amax).to(tl.float32)
        tl.store(q_ptr + offs, x * scale)
        tl.store(s_ptr, scale)
    """
    assert not of(src, "TL122")
    # the whole block in float64 is reported
    block = src.replace("tl.load(x_ptr + offs).to(tl.float32)", "tl.load(x_ptr + offs).to(tl.float64)")
    assert len(of(block, "TL122")) == 1
