"""server.engine.diagnose's own logic (variants, caps, errors, cancellation, overrides) with a recording runner.

The runner here is a test double that records requests and replays results the test chooses; the real
compile path is covered by test_pipeline_cuda.py / test_pipeline_ascend.py.
"""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path

import pytest

from tritonlens.analysis.core.findings import Severity
from tritonlens.ascend_runner.environments import EnvironmentUnavailable
from tritonlens.ascend_runner.protocol import CompileRequest, CompileResult, StageError
from tritonlens.server.engine.diagnose import (
    analyze_document,
    analyze_kernel,
    find_pyproject_overrides,
    launchable_kernels,
)

SOURCE = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def _twice(x):
        return x * 2


    @triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in (1,)] , key=[])
    @triton.jit
    def listed(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


    @triton.autotune(
        configs=[triton.Config({"BLOCK": 16 * (i + 1)}, num_warps=4) for i in range(6)]
        + [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128}),
           triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 512})],
        key=[],
    )
    @triton.jit
    def many(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


    @triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}),
                              triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256}),
                              triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024})], key=[])
    @triton.jit
    def six(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, _twice(1.0))


    @triton.jit
    def needs_block(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0)
    """
)


class RecordingRunner:
    """Answers every compile with `make(req)`; remembers the requests."""

    def __init__(self, make=None) -> None:
        self.requests: list[CompileRequest] = []
        self.make = make or (
            lambda req: CompileResult(ok=True, target=req.target, stages={"ttir": "module {}\n"})
        )

    def compile(self, req: CompileRequest, *, cancel=None, timeout_s=None) -> CompileResult:
        self.requests.append(req)
        return self.make(req)

    def close(self) -> None:
        pass


def line_of(needle: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), start=1) if needle in text)


def test_variants_are_capped_and_requests_carry_the_specialization() -> None:
    runner = RecordingRunner()
    result = analyze_kernel(SOURCE, "k.py", "six", "sm_90", runner)
    assert len(result.specializations) == 6
    assert [r.constants["BLOCK"] for r in runner.requests] == [32, 64, 128, 256]  # first 4 only
    req = runner.requests[0]
    assert req.signature == {"x_ptr": "*fp32", "BLOCK": "constexpr"}
    assert req.divisibility == ["x_ptr"]
    assert req.source == SOURCE and req.path == "k.py" and req.target == "sm_90"
    assert result.summary["variants_considered"] == 6
    assert result.summary["variants_compiled"] == 4
    assert result.summary["variant"] == "autotune config 1"
    assert result.error is None
    assert result.code_hash


def test_compile_error_becomes_tl300_on_the_blamed_line() -> None:
    bad_line = line_of("offs = tl.arange(0, BLOCK)")
    message = "arange's range must be a power of 2\nmore detail"

    def fail(req: CompileRequest) -> CompileResult:
        return CompileResult(
            ok=False, target=req.target, errors=[StageError("frontend", message, bad_line, 11)]
        )

    result = analyze_kernel(SOURCE, "k.py", "six", "sm_90", RecordingRunner(fail))
    (finding,) = result.findings
    assert finding.code == "TL300"
    assert finding.kernel == "six"
    assert (finding.span.line, finding.span.col) == (bad_line, 11)
    assert finding.span.end_col == len(SOURCE.splitlines()[bad_line - 1].rstrip())
    assert finding.message.startswith(
        "frontend failed (autotune config 1): arange's range must be a power of 2"
    )
    assert "powers of two" in finding.message
    assert finding.evidence[0].excerpt == message
    assert finding.platforms == ("cuda",)


def test_ascend_compile_error_is_tl400_and_unplaced_errors_go_on_the_kernel_name() -> None:
    def fail(req: CompileRequest) -> CompileResult:
        return CompileResult(ok=False, target=req.target, errors=[StageError("ttadapter", "unsupported op")])

    result = analyze_kernel(
        SOURCE,
        "k.py",
        "needs_block",
        "ascend910b3",
        RecordingRunner(fail),
        overrides={"kernels": {"needs_block": {"BLOCK": 64}}},
    )
    (finding,) = result.findings
    assert finding.code == "TL400"
    assert finding.span == result.span
    assert finding.span.line == line_of("def needs_block")


def test_worker_failure_is_an_error_not_a_compile_finding() -> None:
    def crash(req: CompileRequest) -> CompileResult:
        return CompileResult(
            ok=False, target=req.target, errors=[StageError("worker", "worker died (SIGSEGV)")]
        )

    result = analyze_kernel(SOURCE, "k.py", "six", "sm_90", RecordingRunner(crash))
    # never an empty result after an error: one TL005 on the kernel says why nothing was analyzed
    assert [(f.code, f.severity) for f in result.findings] == [("TL005", Severity.WARNING)]
    assert "worker died (SIGSEGV)" in result.findings[0].message
    assert result.error == "worker died (SIGSEGV)"


def test_runner_exception_is_reported() -> None:
    def boom(req: CompileRequest) -> CompileResult:
        raise OSError("pipe closed")

    result = analyze_kernel(SOURCE, "k.py", "six", "sm_90", RecordingRunner(boom))
    assert result.error == "the runner failed: OSError: pipe closed"


def test_missing_environment_is_flagged() -> None:
    class NoEnv(RecordingRunner):
        def environment(self, name: str) -> None:
            raise EnvironmentUnavailable(f"no {name} environment: run scripts/bootstrap")

    runner = NoEnv()
    result = analyze_kernel(SOURCE, "k.py", "six", "ascend910b3", runner)
    assert result.runner_unavailable
    assert result.error == "no ascend environment: run scripts/bootstrap"
    assert runner.requests == []


def test_cancel_before_and_during() -> None:
    cancel = threading.Event()
    cancel.set()
    runner = RecordingRunner()
    result = analyze_kernel(SOURCE, "k.py", "six", "sm_90", runner, cancel=cancel)
    assert result.cancelled and runner.requests == []

    cancel = threading.Event()

    def cancel_during(req: CompileRequest) -> CompileResult:
        cancel.set()
        return CompileResult(ok=True, target=req.target)

    runner = RecordingRunner(cancel_during)
    result = analyze_kernel(SOURCE, "k.py", "six", "sm_90", runner, cancel=cancel)
    assert result.cancelled and len(runner.requests) == 1


def test_missing_value_compiles_a_labeled_guess_with_a_tl002_hint() -> None:
    runner = RecordingRunner()
    result = analyze_kernel(SOURCE, "k.py", "needs_block", "sm_90", runner)
    (req,) = runner.requests
    assert req.constants == {"BLOCK": 64}
    assert [(f.code, f.severity) for f in result.findings] == [("TL002", Severity.HINT)]
    assert '"# tritonlens: BLOCK=<int>"' in result.findings[0].message


@pytest.mark.parametrize(
    ("source", "kernel", "target", "error"),
    [
        (SOURCE, "six", "sm_7", "unknown target 'sm_7'"),
        (SOURCE, "nope", "sm_90", "no @triton.jit function named 'nope' in k.py"),
        ("def broken(:\n", "six", "sm_90", "the file does not parse"),
        # a helper alone would compile with made-up argument types and fail with a misleading error
        (SOURCE, "_twice", "sm_90", "_twice is a @triton.jit helper, compiled inline into six;"),
    ],
)
def test_user_errors_are_messages(source: str, kernel: str, target: str, error: str) -> None:
    runner = RecordingRunner()
    result = analyze_kernel(source, "k.py", kernel, target, runner)
    assert result.error is not None and result.error.startswith(error)
    assert runner.requests == []


def test_document_analyzes_kernels_not_helpers() -> None:
    assert launchable_kernels(SOURCE) == ["listed", "many", "six", "needs_block"]
    runner = RecordingRunner()
    results = analyze_document(SOURCE, "k.py", "sm_90", runner)
    assert [r.kernel for r in results] == ["listed", "many", "six", "needs_block"]
    assert "_twice" not in {r.kernel for r in runner.requests}


def test_pyproject_overrides(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tritonlens]\ntarget = "cuda"\n[tool.tritonlens.kernels.needs_block]\nBLOCK = 128\nx_ptr = "*fp16"\nnum_warps = 2\n'
    )
    sub = tmp_path / "pkg"
    sub.mkdir()
    kernel_file = sub / "k.py"
    kernel_file.write_text(SOURCE)
    table = find_pyproject_overrides(kernel_file)
    assert table["kernels"]["needs_block"]["BLOCK"] == 128
    runner = RecordingRunner()
    result = analyze_kernel(SOURCE, str(kernel_file), "needs_block", "sm_90", runner, overrides=table)
    (req,) = runner.requests
    assert req.constants == {"BLOCK": 128}
    assert req.signature["x_ptr"] == "*fp16"
    assert req.options == {"num_warps": 2}
    assert (
        result.specializations[0].provenance["BLOCK"]
        == "pyproject.toml [tool.tritonlens.kernels.needs_block]"
    )


def test_pyproject_absent_or_broken(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.tritonlens\n")
    assert find_pyproject_overrides(tmp_path / "k.py") == {}


def test_assumptions_named_in_a_message() -> None:
    from tritonlens.analysis.compiler.variants import assumptions_in
    from tritonlens.analysis.specialize.choose import ASSUMED_DIVISIBLE, Specialization

    spec = Specialization(
        kernel="k",
        label="defaults",
        signature={"x_ptr": "*fp32", "n": "i32", "m": "i32"},
        constants={},
        divisibility=("x_ptr",),
        options={},
        provenance={
            "x_ptr": "inferred from tl.load at line 3; element type assumed fp32 (no launch shows the dtype)",
            "n": f"launch at line 9: .numel() at line 8; {ASSUMED_DIVISIBLE}",
            "m": "launch at line 9 (divisible by 16)",
        },
    )
    got = assumptions_in("load from `x_ptr` masked by `n` and `m`", spec)
    assert got == {
        "x_ptr": "is taken as fp32 (no launch shows its dtype)",
        "n": "has no known value: compiled as a multiple of 16 (what most launches get)",
    }
    assert assumptions_in("nothing named here (n, x_ptr)", spec) == {}


def test_reports_of_cached_compiles_are_reused(monkeypatch) -> None:
    import tritonlens.analysis.compiler.dispatch as compiler

    calls: list[str] = []

    class Report:
        findings: list = []
        summary = {"registers": 40}
        line_maps = {"ttir": [(13, 1)]}

    def fake_analyze(stages, metadata, resources, target, source, kernel, path):
        calls.append(kernel)
        return Report()

    monkeypatch.setattr(compiler, "analyze", fake_analyze)
    cached = RecordingRunner(
        lambda req: CompileResult(ok=True, target=req.target, stages={"ttir": "x"}, cached=True)
    )
    source = SOURCE + "\n# unique to this test\n"
    first = analyze_kernel(
        source, "k.py", "needs_block", "sm_90", cached, overrides={"needs_block": {"BLOCK": 64}}
    )
    again = analyze_kernel(
        source, "k.py", "needs_block", "sm_90", cached, overrides={"needs_block": {"BLOCK": 64}}
    )
    assert calls == ["needs_block"]
    assert first.summary["registers"] == again.summary["registers"] == 40
    assert again.line_maps == {"ttir": [(13, 1)]}
    # another specialization, or an edited buffer, is analyzed afresh
    analyze_kernel(source, "k.py", "needs_block", "sm_90", cached, overrides={"needs_block": {"BLOCK": 128}})
    analyze_kernel(
        source + "\n", "k.py", "needs_block", "sm_90", cached, overrides={"needs_block": {"BLOCK": 64}}
    )
    assert calls == ["needs_block"] * 3


def test_a_failing_variant_is_a_warning_when_another_compiles() -> None:
    bad_line = line_of("offs = tl.arange(0, BLOCK)")

    def fail_128(req: CompileRequest) -> CompileResult:
        if req.constants["BLOCK"] == 128:
            return CompileResult(
                ok=False,
                target=req.target,
                errors=[StageError("ttgir", "out of resource: shared memory, Required: 300000", bad_line)],
            )
        return CompileResult(ok=True, target=req.target)

    # the pointer's dtype pinned: nothing of the failing config is a guess (a guessed one keeps it at info)
    shown = {"six": {"x_ptr": "*fp16"}}
    result = analyze_kernel(SOURCE, "k.py", "six", "sm_90", RecordingRunner(fail_128), overrides=shown)
    (finding,) = [f for f in result.findings if f.code == "TL300"]
    assert finding.severity.name == "WARNING"
    assert finding.span.line == bad_line
    assert "(autotune config 3)" in finding.message and "out of resource" in finding.message
    assert "reduce block sizes" in finding.message
    assert result.summary["variants_compiled"] == 3


def test_recorded_launches_of_this_file_only(tmp_path: Path) -> None:
    here = tmp_path / "k.py"
    entry = {
        "kernel": "needs_block",
        "signature": {"x_ptr": "*fp16", "BLOCK": "constexpr"},
        "constants": {"BLOCK": 256},
        "divisibility": ["x_ptr"],
        "options": {"num_warps": 2},
    }
    recorded = [{**entry, "file": str(tmp_path / "other.py")}, {**entry, "file": str(here)}]
    runner = RecordingRunner()
    result = analyze_kernel(SOURCE, str(here), "needs_block", "sm_90", runner, recorded=recorded)
    assert [s.label for s in result.specializations] == ["recorded launch 1"]
    (req,) = runner.requests
    assert (
        req.constants == {"BLOCK": 256}
        and req.signature["x_ptr"] == "*fp16"
        and req.options == {"num_warps": 2}
    )
    runner = RecordingRunner()
    analyze_kernel(SOURCE, str(here), "needs_block", "sm_90", runner, recorded=recorded[:1])
    (req,) = runner.requests  # only another file's launch: the labeled guess, not its values
    assert req.constants == {"BLOCK": 64}


def test_concurrent_analyses_do_not_interfere() -> None:
    from concurrent.futures import ThreadPoolExecutor

    def compile_slowly(req: CompileRequest) -> CompileResult:
        import time

        time.sleep(0.005)
        return CompileResult(ok=True, target=req.target, stages={"ttir": f"{req.kernel} {req.constants}"})

    runner = RecordingRunner(compile_slowly)
    jobs = [("six", "sm_90"), ("needs_block", "sm_80"), ("six", "ascend910b3"), ("listed", "sm_100")] * 3
    with ThreadPoolExecutor(max_workers=4) as pool:
        # no workspace: "k.py" would resolve against the current folder, whose files other tests may be writing
        results = list(pool.map(lambda job: analyze_kernel(SOURCE, "k.py", job[0], job[1], runner, foreign=()), jobs))
    for (kernel, target), result in zip(jobs, results, strict=True):
        assert result.kernel == kernel and result.target == target
        for variant in result.variants:
            assert variant.stages["ttir"].startswith(kernel)
    assert len(runner.requests) == 3 * (4 + 1 + 4 + 1)  # needs_block and listed compile one labeled guess


def test_findings_that_hang_on_an_unseen_value_drop_to_info() -> None:
    from tritonlens.analysis.compiler.variants import merge_variant_findings
    from tritonlens.analysis.core.findings import Finding, Severity, Span
    from tritonlens.analysis.specialize.choose import ASSUMED_DIVISIBLE, Specialization
    from tritonlens.server.engine.diagnose import VariantResult

    def spec(stride_provenance: str) -> Specialization:
        return Specialization(
            kernel="k",
            label="defaults",
            signature={"a_ptr": "*fp16", "stride_ak": "i32"},
            constants={},
            divisibility=("a_ptr", "stride_ak"),
            options={},
            provenance={"a_ptr": "pragma line 1", "stride_ak": stride_provenance},
        )

    def finding(code: str, line: int, severity: Severity, **data: object) -> Finding:
        return Finding(code, f"{code} on `a_ptr`", Span(line, 4, line, 9), severity, data=data)

    findings = [
        finding("TL308", 3, Severity.WARNING),
        finding("TL307", 9, Severity.WARNING, narrow_lines=[10], load_lines=[10]),
        finding("TL301", 10, Severity.WARNING, culprit="stride_ak", cause="stride"),
        finding("TL305", 11, Severity.WARNING),
    ]
    unseen = VariantResult(spec(f"inferred; {ASSUMED_DIVISIBLE}"), ok=True, findings=findings)
    got = {f.code: f for f in merge_variant_findings([unseen])}
    for code in ("TL301", "TL307", "TL308"):
        assert got[code].severity == Severity.INFO, code
        assert got[code].data["depends_on_unknown_value"] == "stride_ak"
        assert "# tritonlens: stride_ak=<value>" in got[code].message
    assert got["TL305"].severity == Severity.WARNING  # unrelated to the guess: untouched
    assert "depends_on_unknown_value" not in got["TL305"].data
    # the same findings with the value shown by a pragma stay warnings
    shown = VariantResult(spec("pragma line 1"), ok=True, findings=findings)
    assert all(f.severity == Severity.WARNING for f in merge_variant_findings([shown]))


def test_a_kernel_the_worker_could_not_load_is_an_analysis_error_not_a_finding() -> None:
    # e.g. `@triton.autotune(configs=get_autotune_config())` asks the driver for its target while the worker
    # imports the file without a GPU: the kernel is fine, so no TL300 error may land on it.
    message = "no @triton.jit function named 'needs_block' (a top-level statement at line 6 failed: ...)"
    runner = RecordingRunner(
        lambda req: CompileResult(
            ok=False, target=req.target, errors=[StageError(stage="frontend", message=message)]
        )
    )
    result = analyze_kernel(
        SOURCE, "k.py", "needs_block", "sm_90", runner, overrides={"needs_block": {"BLOCK": 64}}
    )
    assert not [f for f in result.findings if f.code in ("TL300", "TL400")]
    assert result.error is not None and result.error.startswith("no @triton.jit function named")


def test_hedged_stride_finding_names_every_unseen_stride_of_the_address() -> None:
    # A block pointer with order=(0, 1): the compiler blames `stride_kn`, but the launch's unit stride is
    # `stride_kk`; the advice must name both, or the suggested pragma would not change anything.
    from tritonlens.analysis.compiler.variants import merge_variant_findings
    from tritonlens.analysis.core.findings import Finding, Severity, Span
    from tritonlens.analysis.specialize.choose import ASSUMED_DIVISIBLE, Specialization
    from tritonlens.server.engine.diagnose import VariantResult

    guessed = f"inferred; {ASSUMED_DIVISIBLE}"
    spec = Specialization(
        kernel="k",
        label="defaults",
        signature={"K": "*fp16", "stride_kk": "i32", "stride_kn": "i32", "stride_kz": "i32"},
        constants={},
        divisibility=("K", "stride_kk", "stride_kn", "stride_kz"),
        options={},
        provenance={
            "K": "pragma line 1",
            "stride_kk": guessed,
            "stride_kn": guessed,
            "stride_kz": "pragma line 1",
        },
    )
    data = {
        "culprit": "stride_kn",
        "cause": "stride",
        "runtime_multipliers": ["stride_kk", "stride_kn", "stride_kz"],
    }
    f = Finding(
        "TL301", "load from `K`: multiplied by `stride_kn`", Span(5, 4, 5, 9), Severity.WARNING, data=data
    )
    (got,) = merge_variant_findings([VariantResult(spec, ok=True, findings=[f])])
    assert got.severity == Severity.INFO
    assert "# tritonlens: stride_kk=<value>, stride_kn=<value>" in got.message
    assert "stride_kz=" not in got.message  # its value is known: not part of the guess
    assert "[assumed:" not in got.message  # the advice already says what was guessed


def test_a_stride_the_launch_shows_is_an_outer_dimension_is_a_column_walk_not_a_hedge() -> None:
    # `out[rows, col]` stored with the arange on rows: the launch passes `out.stride(0)` of a rank-2 tensor, which
    # is never 1, so neither the hedge ("when it is 1 ...") nor the advice to pass 1 may appear.
    from tritonlens.analysis.compiler.variants import merge_variant_findings
    from tritonlens.analysis.core.findings import Finding, Severity, Span
    from tritonlens.analysis.specialize.choose import ASSUMED_DIVISIBLE, Specialization
    from tritonlens.analysis.specialize.launch import OUTER_STRIDE
    from tritonlens.server.engine.diagnose import VariantResult

    def variant(row_stride: str, multipliers: tuple[str, ...] = ("stride_outr",)) -> VariantResult:
        s = Specialization(
            kernel="k",
            label="launch at w.py:9",
            signature={"out_ptr": "*i32", "stride_outr": "i32", "stride_outc": "constexpr", "stride_q": "i32"},
            constants={"stride_outc": 1},
            divisibility=("out_ptr", "stride_outr", "stride_q"),
            options={},
            provenance={
                "out_ptr": "launch at w.py:9: torch.empty at line 4 (dtype i32)",
                "stride_outr": row_stride,
                "stride_outc": "launch at w.py:9: innermost stride at line 8; tensor assumed contiguous",
                "stride_q": f"launch at w.py:9: int parameter q; {ASSUMED_DIVISIBLE}",
            },
        )
        data = {
            "culprit": "stride_outr",
            "cause": "stride",
            "runtime_multipliers": list(multipliers),
            "achieved_bits": 32,
            "base": "out_ptr",
            "access": "store",
            "rewrite": "put the unit-stride index innermost, or pass `stride_outr`=1 so Triton specializes it away",
        }
        f = Finding(
            "TL301",
            "store from `out_ptr` is issued as 32-bit accesses per thread: the contiguous index is multiplied by "
            "`stride_outr`",
            Span(6, 4, 6, 30),
            Severity.WARNING,
            estimated_gain="up to 4x fewer store instructions on this line",
            data=data,
        )
        return VariantResult(s, ok=True, findings=[f])

    outer = f"launch at w.py:9: .stride(0) at line 7: {OUTER_STRIDE} of a rank-2 tensor; {ASSUMED_DIVISIBLE}"
    (got,) = merge_variant_findings([variant(outer)])
    assert "when it is 1" not in got.message and "specializes it" not in got.message
    assert "walks a column" in got.message and "different rows" in got.message
    assert "=1" not in got.data["rewrite"] and "`stride_outc`" in got.data["rewrite"]
    assert got.estimated_gain is not None and "instructions" not in got.estimated_gain
    assert "8x fewer memory sectors" in got.estimated_gain  # 32-bit lanes, one 32-byte sector each
    assert got.data["pattern"] == "column-walk" and got.severity == Severity.INFO
    assert "# tritonlens: stride_outr=<value>" in got.message  # its size still depends on the unseen value
    # a stride whose dimension is not shown keeps the hedge
    (hedged,) = merge_variant_findings([variant(f"inferred; {ASSUMED_DIVISIBLE}")])
    assert "when it is 1 at launch" in hedged.message and "walks a column" not in hedged.message
    # as does one with another unseen stride in the address that could be the unit one
    (other,) = merge_variant_findings([variant(outer, ("stride_outr", "stride_q"))])
    assert "walks a column" not in other.message
