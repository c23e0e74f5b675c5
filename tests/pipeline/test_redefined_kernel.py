"""A file that defines a kernel name twice at module level binds the last def (Python rebinds the name, and the
runner compiles what the module binds): launch sites and specialization must read that def's parameters, or the
launch's keyword constexprs look "missing" and the positional arguments shift."""

from __future__ import annotations

import textwrap

from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.kernels import kernel_table

SOURCE = textwrap.dedent(
    """\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def tile_kernel(X, Y, n: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Y + offs, tl.load(X + offs))


    # a newer version of the same kernel, split in chunks
    @triton.jit
    def tile_kernel(X, Y, n: tl.constexpr, BLOCK: tl.constexpr, CHUNK: tl.constexpr, NUM_CHUNK: tl.constexpr):
        pid = tl.program_id(0)
        offs = (pid % NUM_CHUNK) * CHUNK + tl.arange(0, CHUNK)
        tl.store(Y + offs, tl.load(X + offs))


    def run(x):
        y = torch.empty_like(x)
        tile_kernel[(4,)](x, y, x.numel(), BLOCK=128, CHUNK=32, NUM_CHUNK=4)
        return y
    """
)


def test_the_last_module_level_def_is_the_kernel() -> None:
    info = kernel_table(SOURCE).kernels["tile_kernel"]
    assert info.param_names[-2:] == ["CHUNK", "NUM_CHUNK"]
    (spec, *_) = [s for s in specializations(SOURCE, "tile_kernel") if s.label.startswith("launch")]
    assert spec.complete, spec.missing
    assert spec.constants["CHUNK"] == 32 and spec.constants["NUM_CHUNK"] == 4 and spec.constants["BLOCK"] == 128
    assert not spec.missing
