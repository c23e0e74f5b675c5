"""A workspace package whose `__init__` fails here (a wrapper calls `triton.autotune` with the positional
arguments of an older Triton, so the installed one raises `TypeError: 'int' object is not iterable`) is stood in
for by bare packages; the names its sub-packages' `__init__` re-export (`from . import math`,
`from .constant import *`) must still resolve, or every kernel of the package fails to compile."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

FILES = {
    "pyproject.toml": "",
    "mylib/__init__.py": "from . import kernels, lang, util\n",
    "mylib/util.py": """
        import triton

        def autotune(configs, key):
            # an older Triton's positional order (warmup, rep after reset_to_zero)
            return triton.autotune(configs, key, None, None, 25, 100)
    """,
    "mylib/lang/__init__.py": "from . import math\nfrom .constant import *\n",
    "mylib/lang/constant.py": """
        import triton.language as tl

        eps = tl.constexpr(1e-6)
    """,
    "mylib/lang/math/__init__.py": "from .act import *\n",
    "mylib/lang/math/act.py": """
        import triton
        import triton.language as tl

        class Relu:
            @staticmethod
            @triton.jit
            def forward(x):
                return tl.maximum(x, 0.0)
    """,
    "mylib/kernels/__init__.py": "from .act import *\n",
    "mylib/kernels/act.py": """
        import triton
        import triton.language as tl

        from mylib import lang, util


        class Act:
            @staticmethod
            @util.autotune([triton.Config({"BLOCK": 256})], ["n"])
            @triton.jit
            def forward(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                mask = offs < n
                x = tl.load(x_ptr + offs, mask=mask)
                y = lang.math.Relu.forward(x) + lang.eps
                tl.store(out_ptr + offs, y, mask=mask)
    """,
}


def write(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root / "mylib/kernels/act.py"


def test_bare_package_resolves_what_its_init_reexports(tmp_path: Path) -> None:
    files = {
        "probe_pkg/__init__.py": "from . import sub\nfrom .consts import *\nfrom .named import VALUE as ALIAS\n",
        "probe_pkg/consts.py": "eps = 1e-6\n_private = 1\n",
        "probe_pkg/named.py": "VALUE = 3\n",
        "probe_pkg/sub/__init__.py": "",
        "probe_pkg/other.py": "X = 1\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    worker = str(Path(__file__).resolve().parents[2] / "ascend_runner" / "worker")
    sys.path[:0] = [worker]
    try:
        import types

        from init_reexports import bind_reexports

        bare = types.ModuleType("probe_pkg")  # entered without running its __init__
        bare.__path__ = [str(tmp_path / "probe_pkg")]
        sys.modules["probe_pkg"] = bare
        bind_reexports(bare, str(tmp_path / "probe_pkg/__init__.py"))
        assert bare.eps == 1e-6  # from .consts import *
        assert bare.sub.__name__ == "probe_pkg.sub"  # from . import sub
        assert bare.ALIAS == 3  # from .named import VALUE as ALIAS
        assert bare.other.X == 1  # a submodule the __init__ never names
        for missing in ("_private", "nothing_like_this"):
            try:
                getattr(bare, missing)
            except AttributeError:
                continue
            raise AssertionError(f"{missing} must stay an AttributeError")
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == "probe_pkg"]:
            sys.modules.pop(name, None)
        sys.path.remove(worker)


def test_kernel_of_package_whose_init_fails_compiles(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    path = write(tmp_path)
    result = analyze_kernel(path.read_text(), str(path), "forward", "sm_90", cuda_runner, max_variants=1)
    errors = [v.errors for v in result.variants]
    assert result.primary is not None, (result.error, errors)
    assert not [f for f in result.findings if f.code == "TL300"], [f.message for f in result.findings]
