"""The compile cache key covers the user's own modules the buffer imports (the worker loads them from disk):
an edit in an imported helper file misses the cache, an edit in an unrelated file does not."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tritonlens.ascend_runner import cache
from tritonlens.ascend_runner.cache import compile_key, sibling_digests
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.protocol import CompileRequest

KERNEL = textwrap.dedent(
    """
    import triton
    import triton.language as tl
    {import_line}


    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, scale(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)
    """
)
HELPER = "import triton\n{extra}\n\n@triton.jit\ndef scale(x):\n    return x * {factor}\n"


def project(folder: Path, import_line: str = "from .helpers import scale", factor: str = "2.0") -> Path:
    (folder / "helpers.py").write_text(HELPER.format(extra="", factor=factor))
    (folder / "unrelated.py").write_text("VALUE = 1\n")
    kernel = folder / "kern.py"
    kernel.write_text(KERNEL.format(import_line=import_line))
    return kernel


def edit(path: Path, text: str) -> None:
    # A different length too: some file systems keep coarse modification times.
    path.write_text(text)
    stamp = path.stat().st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(stamp, stamp))


def req_for(kernel: Path) -> CompileRequest:
    return CompileRequest(
        source=kernel.read_text(),
        path=str(kernel),
        kernel="k",
        signature={"x_ptr": "*fp32", "n": "i32"},
        constants={"BLOCK": 128},
        options={"sass": False},
    )


@pytest.mark.parametrize(
    "import_line",
    [
        "from .helpers import scale",
        "from helpers import scale",
        "from . import helpers\nscale = helpers.scale",
    ],
)
def test_sibling_edit_changes_the_key_unrelated_edit_does_not(tmp_path: Path, import_line: str) -> None:
    kernel = project(tmp_path, import_line)
    req = req_for(kernel)
    base = compile_key(req, "triton 3.6.0")
    assert set(sibling_digests(req.source, req.path)) == {"helpers.py"}
    edit(tmp_path / "unrelated.py", "VALUE = 22\n")
    assert compile_key(req, "triton 3.6.0") == base
    edit(tmp_path / "helpers.py", HELPER.format(extra="", factor="3.0"))
    changed = compile_key(req, "triton 3.6.0")
    assert changed != base
    edit(tmp_path / "helpers.py", HELPER.format(extra="", factor="2.0"))  # back: same key again
    assert compile_key(req, "triton 3.6.0") == base
    # Same size, written just now (same mtime tick on a coarse file system): still read again.
    (tmp_path / "helpers.py").write_text(HELPER.format(extra="", factor="4.0"))
    assert compile_key(req, "triton 3.6.0") not in (base, changed)


def test_transitive_and_package_imports(tmp_path: Path) -> None:
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "__init__.py").write_text("")
    (tmp_path / "ops" / "act.py").write_text("from .common import K\n")
    (tmp_path / "ops" / "common.py").write_text("K = 1\n")
    kernel = tmp_path / "kern.py"
    kernel.write_text("from ops.act import relu\nimport triton\n")
    digests = sibling_digests(kernel.read_text(), str(kernel))
    assert set(digests) == {"ops/__init__.py", "ops/act.py", "ops/common.py"}
    before = digests["ops/common.py"]
    edit(tmp_path / "ops" / "common.py", "K = 12\n")
    assert sibling_digests(kernel.read_text(), str(kernel))["ops/common.py"] != before


def test_a_package_module_imports_through_its_package_root(tmp_path: Path) -> None:
    # src/pkg/kern.py does `from pkg.configs import CONFIGS`: the module lives beside it, reached from src/; the
    # key resolved the import in src/pkg/pkg/ (nothing there), so an edit of configs.py reused a stale result
    pkg = tmp_path / "src" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "sub" / "__init__.py"):
        init.write_text("")
    (pkg / "configs.py").write_text("CONFIGS = [1]\n")
    (pkg / "sub" / "tables.py").write_text("T = 1\n")
    kernel = pkg / "ops" / "kern.py" if False else pkg / "kern.py"
    kernel.write_text("from pkg.configs import CONFIGS\nfrom pkg.sub.tables import T\nimport triton\n")
    digests = sibling_digests(kernel.read_text(), str(kernel))
    assert {"configs.py", "sub/tables.py"} <= set(digests), digests
    before = digests["configs.py"]
    edit(pkg / "configs.py", "CONFIGS = [1, 2]\n")
    assert sibling_digests(kernel.read_text(), str(kernel))["configs.py"] != before
    # a module of the package outside the file's folder keys the result, but is not shipped to a remote job
    inner = pkg / "sub" / "kern2.py"
    inner.write_text("from pkg.configs import CONFIGS\n")
    assert "<package root>/pkg/configs.py" in sibling_digests(inner.read_text(), str(inner))
    assert not any(n.startswith("<") for n in cache.sibling_files(inner.read_text(), str(inner)))


def test_only_bounded_local_files_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    (tmp_path / "outside.py").write_text("X = 1\n")
    (inner / "link.py").symlink_to(tmp_path / "outside.py")  # resolves outside the folder: not read
    (inner / "big.py").write_text("# " + "x" * 100 + "\n")
    kernel = inner / "kern.py"
    kernel.write_text("from .. import outside\nimport link\nimport big\nimport os, json, triton\n")
    monkeypatch.setattr(cache, "SIBLING_MAX_BYTES", 50)
    digests = sibling_digests(kernel.read_text(), str(kernel))
    assert set(digests) == {"big.py"}
    assert digests["big.py"].startswith("large:")  # over the cap: keyed by size and mtime, not read
    for i in range(40):
        (inner / f"m{i}.py").write_text(f"V = {i}\n")
    many = "\n".join(f"import m{i}" for i in range(40))
    assert len(sibling_digests(many, str(kernel))) == cache.SIBLING_MAX_FILES
    # Unsaved buffers and paths of another machine have no siblings.
    assert sibling_digests("import helpers\n", "<buffer>") == {}
    assert sibling_digests("import helpers\n", "/no/such/folder/k.py") == {}
    assert sibling_digests("def broken(:\n", str(kernel)) == {}


@pytest.mark.cuda_env
def test_runner_recompiles_after_a_helper_edit(cuda_runner: LocalRunner, tmp_path: Path) -> None:
    kernel = project(tmp_path)
    first = cuda_runner.compile(req_for(kernel))
    assert first.ok, first.errors
    assert "2.000000e+00" in first.stages["ttir"]
    edit(tmp_path / "unrelated.py", "VALUE = 333\n")
    assert cuda_runner.compile(req_for(kernel)).cached
    edit(tmp_path / "helpers.py", HELPER.format(extra="", factor="5.0"))
    second = cuda_runner.compile(req_for(kernel))
    assert not second.cached and second.ok, second.errors
    assert "5.000000e+00" in second.stages["ttir"]  # the worker loaded the edited helper
