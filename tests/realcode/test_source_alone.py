"""A kernel file whose package cannot be imported here (its `__init__` probes a device, a helper module asks the
driver at import, a vendor decorator wraps the kernel) is still compiled from the file's own source, and every
finding of that compile says so."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from tritonlens.analysis.core.findings import Severity
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_kernel

PROBE = "raise RuntimeError('No device were detected on your machine')\n"

FILES = {
    "pyproject.toml": "",
    "vendorlib/__init__.py": PROBE,
    "vendorlib/utils/__init__.py": "from vendorlib.utils.entry import libentry\n" + PROBE,
    "vendorlib/utils/entry.py": """
        def libentry():
            def wrap(fn):
                raise RuntimeError("needs the device's cache")
            return wrap
    """,
    "vendorlib/utils/ext.py": """
        import triton
        import triton.language as tl
        from vendorlib.utils.device import DEVICE  # fails: the device probe below

        @triton.jit
        def program_id(axis: tl.constexpr):
            return tl.program_id(axis).to(tl.int64)
    """,
    "vendorlib/utils/device.py": PROBE,
    "vendorlib/ops/__init__.py": "",
    "vendorlib/ops/scale.py": """
        import triton
        import triton.language as tl

        from vendorlib import runtime
        from vendorlib.utils import libentry
        from vendorlib.utils import ext as tle

        SCALE = tl.constexpr(2)
        UNRELATED = runtime.probe()


        @triton.jit
        def twice(x):
            return x * SCALE


        @libentry()
        @triton.autotune(configs=runtime.get_tuned_config("scale"), key=["n"])
        @triton.jit
        def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
            offs = tle.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(x_ptr + offs, twice(tl.load(x_ptr + offs, mask=mask)), mask=mask)


        def launch(x):
            scale_kernel[(1,)](x, x.numel(), BLOCK=128)
    """,
}


def write(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root / "vendorlib/ops/scale.py"


def test_plan_keeps_what_the_kernel_needs_and_drops_vendor_decorators(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"))
    try:
        from source_alone import plan_alone
    finally:
        sys.path.pop(0)
    tree = ast.parse(textwrap.dedent(FILES["vendorlib/ops/scale.py"]))
    plan = plan_alone(tree, "scale_kernel")
    assert plan is not None
    kept = [ast.unparse(s).splitlines()[0] for s in plan.statements]
    assert "from vendorlib.utils import ext as tle" in kept and "SCALE = tl.constexpr(2)" in kept
    assert not any("UNRELATED" in k or "libentry" in k or "def launch" in k for k in kept)
    assert [text for _, text in plan.dropped] == [
        "libentry()"
    ]  # Triton's autotune is not reported as vendor's
    assert plan_alone(tree, "no_such_kernel") is None


def test_kernel_of_unimportable_package_is_built_from_its_source(
    tmp_path: Path, cuda_runner: LocalRunner
) -> None:
    path = write(tmp_path)
    result = analyze_kernel(path.read_text(), str(path), "scale_kernel", "sm_90", cuda_runner, max_variants=1)
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    alone = result.primary.metadata["source_alone"]
    assert "No device were detected" in alone["reason"]
    assert alone["dropped_decorators"] == ["@libentry() (line 18)"]
    ir = [f for f in result.findings if f.data.get("variant")]
    assert ir  # the int64 program id of the helper gives at least one compiler finding
    for f in ir:
        assert "analyzed from the file's source alone" in f.message, f.message
        assert f.severity >= Severity.WARNING
    assert not [f for f in result.findings if f.code == "TL005"]


def test_importable_file_is_not_labeled(tmp_path: Path, cuda_runner: LocalRunner) -> None:
    path = tmp_path / "plain.py"
    text = textwrap.dedent(FILES["vendorlib/ops/scale.py"])
    text = text.replace("from vendorlib import runtime\n", "").replace(
        "from vendorlib.utils import libentry\n", ""
    )
    text = text.replace("from vendorlib.utils import ext as tle\n", "tle = tl\n").replace(
        "UNRELATED = runtime.probe()\n", ""
    )
    text = text.replace("@libentry()\n", "").replace(
        'configs=runtime.get_tuned_config("scale")', "configs=[triton.Config({})]"
    )
    path.write_text(text)
    result = analyze_kernel(text, str(path), "scale_kernel", "sm_90", cuda_runner, max_variants=1)
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    assert "source_alone" not in result.primary.metadata


def test_plan_defines_a_kernel_nested_in_a_test_function() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"))
    try:
        from source_alone import plan_alone
    finally:
        sys.path.pop(0)
    source = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        def test_it():
            def configs():
                return [triton.Config({"XS": 128})]

            @triton.autotune(configs=configs(), key=["n"])
            @triton.jit
            def nested_kernel(x_ptr, n, XS: tl.constexpr):
                tl.store(x_ptr + tl.arange(0, XS), 1.0)
        """
    )
    plan = plan_alone(ast.parse(source), "nested_kernel")
    assert plan is not None
    last = plan.statements[-1]
    assert isinstance(last, ast.FunctionDef) and last.name == "nested_kernel"
    assert [ast.unparse(d) for d in last.decorator_list] == ["triton.jit"]
    assert "test_it" not in [getattr(s, "name", "") for s in plan.statements]

