"""Compiling real kernels for sm_90 through LocalRunner: stages, source locations, resources, errors, cache."""

from __future__ import annotations

import re
import threading

import pytest
from kernel_requests import KERNELS, request

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.protocol import CompileRequest

pytestmark = pytest.mark.cuda_env

LOC = re.compile(r'loc\("(?P<file>[^"]+)":(?P<line>\d+):(?P<col>\d+)\)')


def line_of(source: str, needle: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if needle in text)


def test_elementwise_all_stages_point_at_the_requested_file(cuda_runner: LocalRunner) -> None:
    # A path that does not exist on disk: locations must come from the request, not from the file system.
    path = "/home/someone/project/my_add.py"
    req = request("elementwise", path=path)
    result = cuda_runner.compile(req)
    assert result.ok, result.errors
    assert list(result.stages) == ["ttir", "ttgir", "llir", "ptx", "sass"]
    assert result.compiler.startswith("triton 3.")
    files = {m.group("file") for m in LOC.finditer(result.stages["ttir"])}
    assert files == {path}
    store_line = line_of(req.source, "tl.store(out_ptr")
    helper_line = line_of(req.source, "return x * factor")
    ttgir_lines = {int(m.group("line")) for m in LOC.finditer(result.stages["ttgir"])}
    assert store_line in ttgir_lines and helper_line in ttgir_lines  # helper ops keep their own line
    assert f'.file\t1 "{path}"' in result.stages["ptx"] or path in result.stages["ptx"]
    assert re.search(rf'//## File "{re.escape(path)}", line {store_line}', result.stages["sass"])
    assert result.metadata["num_warps"] == 4 and result.metadata["name"] == "add_kernel"
    assert result.resources["registers"] > 0
    assert result.resources["spill_stores"] == 0
    # The host code imports torch and has a __main__ block that raises: neither may break the compile.
    assert not result.metadata["module_warnings"]


def test_matmul_sm90_resources_and_shared_memory(cuda_runner: LocalRunner) -> None:
    req = request("matmul")
    result = cuda_runner.compile(req)
    assert result.ok, result.errors
    dot_line = line_of(req.source, "acc = tl.dot(a, b, acc)")
    assert f'"{req.path}":{dot_line}:' in result.stages["ttgir"]
    assert "warp_group_dot" in result.stages["ttgir"]  # Hopper wgmma path
    assert re.search(r"\bHGMMA\b", result.stages["sass"])
    assert result.metadata["num_stages"] == 3
    assert result.resources["registers"] > 0
    assert result.resources["shared"] > 0  # the pipelined tiles live in shared memory
    assert "ptxas info" in result.resources["ptxas_log"]


def test_second_compile_is_a_cache_hit(cuda_runner: LocalRunner) -> None:
    req = request("softmax")
    first = cuda_runner.compile(req)
    second = cuda_runner.compile(request("softmax"))
    assert first.ok and not first.cached
    assert second.cached and second.stages == first.stages
    assert second.metadata["cache_key"] == first.metadata["cache_key"]
    second.stages.clear()  # a caller editing its copy must not edit the cache
    second.resources["registers"] = -1
    third = cuda_runner.compile(request("softmax"))
    assert third.stages == first.stages and third.resources["registers"] == first.resources["registers"]


def test_edit_to_called_helper_misses_and_host_edit_hits(cuda_runner: LocalRunner) -> None:
    base = request("elementwise", path="/tmp/cache_edit_case.py")
    first = cuda_runner.compile(base)
    assert first.ok and not first.cached
    host_edit = base.source.replace(
        "grid = (triton.cdiv(x.numel(), 1024),)", "grid = (triton.cdiv(x.numel(), 512),)"
    )
    assert host_edit != base.source
    hit = cuda_runner.compile(request("elementwise", path=base.path, source=host_edit))
    assert hit.cached
    helper_edit = base.source.replace("return x * factor", "return x * factor + 1.0")
    miss = cuda_runner.compile(request("elementwise", path=base.path, source=helper_edit))
    assert miss.ok and not miss.cached
    assert "arith.addf" in miss.stages["ttir"] and miss.stages["ttir"] != first.stages["ttir"]


def test_dot_shape_mismatch_reports_the_line(cuda_runner: LocalRunner) -> None:
    source = (KERNELS / "matmul.py").read_text().replace("acc = tl.dot(a, b, acc)", "acc = tl.dot(a, a, acc)")
    result = cuda_runner.compile(request("matmul", source=source, path="/tmp/bad_dot.py"))
    assert not result.ok
    (error,) = result.errors
    assert error.stage == "frontend"
    assert error.line == line_of(source, "acc = tl.dot(a, a, acc)")
    assert "reduction dimensions" in error.message


def test_wrong_helper_arg_count_reports_the_call_line(cuda_runner: LocalRunner) -> None:
    source = (KERNELS / "elementwise.py").read_text().replace("scale(x, 2.0)", "scale(x)")
    result = cuda_runner.compile(request("elementwise", source=source, path="/tmp/bad_call.py"))
    assert not result.ok
    assert result.errors[0].stage == "frontend"
    assert result.errors[0].line == line_of(source, "scale(x)")
    assert "factor" in result.errors[0].message


def test_error_inside_helper_points_into_the_helper(cuda_runner: LocalRunner) -> None:
    source = (KERNELS / "elementwise.py").read_text().replace("return x * factor", "return x * fctor")
    result = cuda_runner.compile(request("elementwise", source=source, path="/tmp/bad_helper.py"))
    error = result.errors[0]
    assert error.line == line_of(source, "return x * fctor")
    assert error.col == source.splitlines()[error.line - 1].index("fctor")
    assert f"called from line {line_of(source, 'scale(x, 2.0)')}" in error.message


def test_half_typed_buffer_is_a_syntax_error_with_line(cuda_runner: LocalRunner) -> None:
    source = (
        (KERNELS / "elementwise.py").read_text().replace("mask = offsets < n_elements", "mask = (offsets <")
    )
    result = cuda_runner.compile(request("elementwise", source=source, path="/tmp/half.py"))
    assert not result.ok and result.errors[0].stage == "frontend"
    assert "syntax" in result.errors[0].message
    assert result.errors[0].line is not None


def test_unknown_kernel_and_signature_mismatch_are_explained(cuda_runner: LocalRunner) -> None:
    req = request("elementwise", path="/tmp/names.py")
    req.kernel = "add_kernal"
    result = cuda_runner.compile(req)
    assert "add_kernal" in result.errors[0].message and "add_kernel" in result.errors[0].message
    req = request("elementwise", path="/tmp/names.py")
    del req.signature["n_elements"]
    req.divisibility.remove("n_elements")
    result = cuda_runner.compile(req)
    assert "n_elements" in result.errors[0].message


def test_non_triton_python_is_a_clear_error(cuda_runner: LocalRunner) -> None:
    req = CompileRequest(
        source="import os\n\ndef main():\n    return 1\n", path="/tmp/plain.py", kernel="main", signature={}
    )
    result = cuda_runner.compile(req)
    assert not result.ok
    assert "not a @triton.jit function" in result.errors[0].message


def test_register_cap_shows_spills(cuda_runner: LocalRunner) -> None:
    req = request("matmul", path="/tmp/spill.py")
    req.options["maxnreg"] = 128
    result = cuda_runner.compile(req)
    assert result.ok, result.errors
    assert result.resources["registers"] <= 128
    assert result.resources["spill_stores"] > 0 and result.resources["spill_loads"] > 0
    assert result.resources["stack_frame"] > 0


def test_ptxas_failure_maps_back_to_a_source_line(cuda_runner: LocalRunner) -> None:
    # wgmma needs ~90 registers: a cap of 32 makes ptxas refuse, naming a PTX line.
    req = request("matmul", path="/tmp/ptxas_fail.py")
    req.options["maxnreg"] = 32
    result = cuda_runner.compile(req)
    assert not result.ok
    (error,) = result.errors
    assert error.stage == "ptxas"
    assert "Insufficient registers" in error.message
    kernel_lines = range(line_of(req.source, "def matmul_kernel"), len(req.source.splitlines()) + 1)
    assert error.line in kernel_lines
    assert "ptx" in result.stages  # the stages that did succeed come back for inspection


def test_sibling_module_helpers_are_reloaded(tmp_path, cuda_python: str) -> None:
    (tmp_path / "my_helpers.py").write_text(
        "import triton\n\n\n@triton.jit\ndef twice(x):\n    return x * 2.0\n"
    )
    kernel = (
        "import triton\nimport triton.language as tl\nfrom my_helpers import twice\n\n\n"
        "@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, twice(tl.load(x_ptr + offs)))\n"
    )
    req = CompileRequest(
        source=kernel,
        path=str(tmp_path / "kernel.py"),
        kernel="k",
        signature={"x_ptr": "*fp32"},
        constants={"BLOCK": 128},
        target="sm_90",
    )
    with LocalRunner({"cache": False}) as runner:
        first = runner.compile(req)
        assert first.ok, first.errors
        assert f'loc("{tmp_path / "my_helpers.py"}":6:' in first.stages["ttir"]
        (tmp_path / "my_helpers.py").write_text(
            "import triton\n\n\n@triton.jit\ndef twice(x):\n    return x + x + 1.0\n"
        )
        second = runner.compile(req)
        assert second.ok, second.errors
        assert second.stages["ttir"].count("arith.addf") > first.stages["ttir"].count("arith.addf")
        # An error in the imported helper points at the call in this buffer, not at a line of another file.
        (tmp_path / "my_helpers.py").write_text(
            "import triton\n\n\n@triton.jit\ndef twice(x):\n    return x + nope\n"
        )
        broken = runner.compile(req)
        assert not broken.ok
        call_line = next(i for i, t in enumerate(kernel.splitlines(), 1) if "twice(tl.load" in t)
        assert broken.errors[0].line == call_line
        assert "nope" in broken.errors[0].message and "another file" in broken.errors[0].message


def test_timeout_and_cancel_of_a_compile_are_not_cached(tmp_path, cuda_python: str) -> None:
    with LocalRunner({"cache_dir": str(tmp_path), "warm_up": False}) as runner:
        slow = request("matmul", path="/tmp/timeout_case.py")
        result = runner.compile(slow, timeout_s=0.05)
        assert not result.ok and result.errors[0].stage == "worker"
        assert "timeout" in result.errors[0].message
        cancel = threading.Event()
        threading.Timer(0.2, cancel.set).start()
        result = runner.compile(slow, cancel=cancel)
        assert not result.ok and "cancelled" in result.errors[0].message
        again = runner.compile(slow)  # a fresh worker, and no failure served from the cache
        assert again.ok and not again.cached


def test_sass_can_be_skipped(cuda_runner: LocalRunner) -> None:
    req = request("elementwise", path="/tmp/no_sass.py")
    req.options["sass"] = False
    result = cuda_runner.compile(req)
    assert result.ok, result.errors
    assert list(result.stages) == ["ttir", "ttgir", "llir", "ptx"]
    assert result.resources["registers"] > 0  # resources come from ptxas and cuobjdump, not the listing
    assert "ignored_options" not in result.metadata
