"""TL101-TL103: block sizes that are runtime values, not powers of two, or tiny."""

from __future__ import annotations

from triage_helpers import locate, of, run

from tritonlens.analysis.core.findings import Severity

RUNTIME_BLOCK = """
import triton
import triton.language as tl

@triton.jit
def copy_kernel(src, dst, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
"""


def test_tl101_fires_on_runtime_block_used_by_arange() -> None:
    (f,) = of(RUNTIME_BLOCK, "TL101")
    assert f.span == locate(RUNTIME_BLOCK, "BLOCK")
    assert f.kernel == "copy_kernel"
    assert f.severity == Severity.ERROR
    assert f.fix is not None
    (edit,) = f.fix.edits
    assert edit.new_text == "BLOCK: tl.constexpr"


def test_tl101_fires_on_runtime_tile_name_with_default_and_keeps_default() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x, n, BLOCK_SIZE=128):
        for i in range(0, n, BLOCK_SIZE):
            tl.store(x + i, 0.0)
    """
    (f,) = of(src, "TL101")
    assert f.span == locate(src, "BLOCK_SIZE=128")
    assert f.severity == Severity.WARNING
    assert f.fix.edits[0].new_text == "BLOCK_SIZE: tl.constexpr = 128"


def test_tl101_uses_the_files_alias_in_the_fix() -> None:
    src = RUNTIME_BLOCK.replace("import triton.language as tl", "import triton.language as lang").replace(
        "tl.", "lang."
    )
    (f,) = of(src, "TL101")
    assert f.fix.edits[0].new_text == "BLOCK: lang.constexpr"


def test_tl101_silent_for_constexpr_and_for_lowercase_sizes(data_source) -> None:
    assert not of(data_source("good_softmax.py"), "TL101")
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x, n_blocks, BLOCK: "tl.constexpr"):
        offs = tl.arange(0, BLOCK)
        for b in range(n_blocks):
            tl.store(x + b * BLOCK + offs, 1.0)
    """
    assert not of(src, "TL101")


POW2 = """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, 1.0, mask=offs < n)

def launch(x):
    k[(triton.cdiv(x.numel(), 1000),)](x, x.numel(), BLOCK=1000)
"""


def test_tl102_fires_on_launch_value_with_safe_fix_when_masked() -> None:
    (f,) = of(POW2, "TL102")
    assert f.span == locate(POW2, "1000", 2)
    assert "1000" in f.message and "1024" in f.message
    assert f.fix is not None and f.fix.edits[0].new_text == "1024"


def test_tl102_no_fix_when_a_load_is_unmasked() -> None:
    src = POW2.replace("tl.store(x + offs, 1.0, mask=offs < n)", "tl.store(x + offs, tl.load(x + offs))")
    (f,) = of(src, "TL102")
    assert f.fix is None


def test_tl102_fires_on_inline_arange_and_autotune_config() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 96}), triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def k(x, n, BLOCK: tl.constexpr):
        a = tl.arange(0, 48)
        b = tl.arange(0, BLOCK)
        tl.store(x + b, 1.0, mask=b < n)
    """
    spans = {f.span for f in of(src, "TL102")}
    assert spans == {locate(src, "96"), locate(src, "48")}


def test_tl102_silent_on_powers_of_two(data_source) -> None:
    assert not of(data_source("good_matmul.py"), "TL102")
    assert not of(POW2.replace("1000", "1024"), "TL102")


def test_tl103_fires_on_tiny_1d_block() -> None:
    src = POW2.replace("1000", "32")
    (f,) = of(src, "TL103")
    assert f.span == locate(src, "32", 2)
    assert "32" in f.message


def test_tl103_silent_on_large_blocks_and_2d_tiles(data_source) -> None:
    assert not of(POW2.replace("1000", "1024"), "TL103")
    assert not of(data_source("good_matmul.py"), "TL103")
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
        r = tl.arange(0, BLOCK_R)
        c = tl.arange(0, BLOCK_C)
        tl.store(x + r[:, None] * BLOCK_C + c[None, :], 0.0)

    k[(4,)](x, BLOCK_R=8, BLOCK_C=256)
    """
    assert not of(src, "TL103")


def test_tl103_leaves_small_autotune_candidates_to_the_autotuner() -> None:
    # torch's testing kernels list BLOCK_SIZE 128 and 64 configs: the autotuner picks, no finding per config
    src = """
    import triton
    import triton.language as tl

    @triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 64})], key=[])
    @triton.jit
    def k(x, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x + offs, 1.0, mask=offs < n)
    """
    assert not of(src, "TL103")
    only_small = src.replace('{"BLOCK": 128}', '{"BLOCK": 32}')
    assert {f.span for f in of(only_small, "TL103")} == {locate(only_small, "32"), locate(only_small, "64")}


def test_block_rules_report_the_kernel_name() -> None:
    assert {f.kernel for f in run(POW2)} == {"k"}


def test_tl101_silent_for_helpers_which_inherit_constexpr_from_callers() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def _tile(ptr, BLOCK):
        return tl.load(ptr + tl.arange(0, BLOCK))

    @triton.jit
    def k(x, BLOCK: tl.constexpr):
        tl.store(x + tl.arange(0, BLOCK), _tile(x, BLOCK))
    """
    assert not of(src, "TL101")


def test_tl101_silent_when_a_shape_is_read_from_a_tensor_argument() -> None:
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def ones_like(base):
        return tl.full(base.shape, 1, base.dtype)
    """
    assert not of(src, "TL101")
