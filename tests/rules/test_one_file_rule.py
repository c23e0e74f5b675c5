"""Adding a rule of any level is one file (issue 20 item 2): a `Rule` declared next to the check that emits it,
dropped into its family's package (`analysis/triage/`, `analysis/profile/`, `analysis/compiler/cuda/`,
`analysis/compiler/ascend/`) as a new module. Without touching any other module the registry lists it with its
check, the family's engine runs the check and reports its finding, and it is gone again with the file.

The TL3xx module is the one docs/architecture.md shows ("Adding a rule"); for it the test also checks that
escalation lets it absorb the triage finding it declares it confirms, that the value-dependency policy reads
its `depends_on`, and that `tritonlens rules` lists it."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.analysis.compiler.variants import value_dependency
from tritonlens.analysis.core import devices, rules
from tritonlens.analysis.core.escalation import merge
from tritonlens.analysis.core.findings import Level
from tritonlens.analysis.profile.analyze import analyze_run
from tritonlens.analysis.specialize.choose import ASSUMED_DIVISIBLE, Specialization
from tritonlens.analysis.triage import triage

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "ir"))  # cuda_cases
sys.path.insert(0, str(ROOT / "tests" / "ascend"))  # ascend_cases

from ascend_cases import fixture_case  # noqa: E402
from cuda_cases import load_case  # noqa: E402

CUDA_MODULE = "scalar_loads"

TRIAGE_RULE = '''"""TL199: a kernel whose body is only `pass` (an example rule of level 1)."""

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from .base import finding, kernel_check
from .context import KernelContext

EMPTY_KERNEL = register(
    Rule(
        code="TL199",
        name="empty-kernel",
        title="The kernel does nothing",
        level=Level.TRIAGE,
        severity=Severity.HINT,
        platforms=("cuda", "ascend"),
        rationale="A kernel whose body is `pass` launches programs that do no work.",
    )
)


@kernel_check
def empty_kernel(ctx: KernelContext) -> Iterator[Finding]:
    body = ctx.kernel.node.body
    if len(body) == 1 and isinstance(body[0], ast.Pass):
        yield finding(EMPTY_KERNEL, ctx, body[0], f"`{ctx.name}` does nothing")
'''

PROFILE_RULE = '''"""TL299: a launch that ran under a microsecond (an example rule of level 2)."""

from ..core.devices import DeviceSpec
from ..core.findings import Finding, Level, Severity, Span
from ..core.rules import Rule, register, register_check
from .findings import LAUNCH_FAMILY
from .launch import LaunchAnalysis

SUB_MICROSECOND = register(
    Rule(
        code="TL299",
        name="sub-microsecond-launch",
        title="The launch ran under a microsecond",
        level=Level.PROFILE,
        severity=Severity.HINT,
        platforms=("cuda", "ascend"),
        rationale="Launch overhead dominates a kernel this short.",
    )
)


@register_check(LAUNCH_FAMILY, SUB_MICROSECOND)
def check_sub_microsecond(la: LaunchAnalysis, device: DeviceSpec, source_lines: list[str] | None) -> list[Finding]:
    if la.time_ms is None or la.time_ms >= 1e-3:
        return []
    platforms = ("cuda",) if device.vendor == "nvidia" else ("ascend",)
    span = Span(la.line, 0, la.line, 0)
    return [SUB_MICROSECOND.finding(f"{la.time_ms * 1e3:.2f} us", span, kernel=la.kernel, platforms=platforms)]
'''

ASCEND_RULE = '''"""TL499: the kernel's ttadapter allocates local buffers (an example rule of level 4)."""

from ...core.findings import Finding, Level, Severity
from ...core.rules import Rule, register, register_check
from .context import AscendContext
from .declare import ASCEND_FAMILY

LOCAL_BUFFERS = register(
    Rule(
        code="TL499",
        name="local-buffers",
        title="The kernel stages data in local buffers",
        level=Level.COMPILER,
        severity=Severity.HINT,
        platforms=("ascend",),
        rationale="Each local buffer is a tile of the unified buffer.",
    )
)


@register_check(ASCEND_FAMILY, LOCAL_BUFFERS)
def check_local_buffers(ctx: AscendContext) -> list[Finding]:
    if not ctx.module.buffers:
        return []
    message = f"{len(ctx.module.buffers)} local buffers"
    return [ctx.finding(LOCAL_BUFFERS, ctx.kernel_line(), message, [], None, {"count": len(ctx.module.buffers)})]
'''


def documented_rule_module() -> str:
    """The first Python block of docs/architecture.md's "Adding a rule" section."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Adding a rule", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "docs/architecture.md must show the rule module"
    return match.group(1)


def drop(tmp_path: Path, package: str, name: str, text: str, code: str) -> Iterator[Path]:
    """`text` as module `name` of `package` (a second folder of the package), found by discovery; removed again
    afterwards with everything it registered."""
    folder = tmp_path / package.replace(".", "_")
    folder.mkdir()
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    pkg: ModuleType = importlib.import_module(package)
    pkg.__path__.append(str(folder))
    rules.discover()
    try:
        yield path
    finally:
        pkg.__path__.remove(str(folder))
        sys.modules.pop(f"{package}.{name}", None)
        rules._RULES.pop(code, None)
        for family in rules._CHECKS.values():
            family[:] = [c for c in family if not c.name.startswith(f"{name}.")]
        rules._generation += 1
        rules.discover()


@pytest.fixture
def cuda_rule_file(tmp_path: Path) -> Iterator[Path]:
    yield from drop(tmp_path, "tritonlens.analysis.compiler.cuda", CUDA_MODULE, documented_rule_module(), "TL399")


@pytest.fixture
def triage_rule_file(tmp_path: Path) -> Iterator[Path]:
    yield from drop(tmp_path, "tritonlens.analysis.triage", "empty_kernel", TRIAGE_RULE, "TL199")


@pytest.fixture
def profile_rule_file(tmp_path: Path) -> Iterator[Path]:
    yield from drop(tmp_path, "tritonlens.analysis.profile", "sub_microsecond", PROFILE_RULE, "TL299")


@pytest.fixture
def ascend_rule_file(tmp_path: Path) -> Iterator[Path]:
    yield from drop(tmp_path, "tritonlens.analysis.compiler.ascend", "local_buffers", ASCEND_RULE, "TL499")


# --- level 1 ---------------------------------------------------------------------------------------------------

EMPTY = "import triton\n\n\n@triton.jit\ndef idle_kernel_of_the_one_file_test(x):\n    pass\n"


def test_a_triage_rule_is_one_file(triage_rule_file: Path) -> None:
    rule = rules.require("TL199")
    assert rule.level == Level.TRIAGE and rule.checks == ("empty_kernel.empty_kernel",)
    found = [f for f in triage(EMPTY, "one_file_rule_l1.py").findings if f.code == "TL199"]
    assert [(f.span.line, f.message) for f in found] == [(6, "`idle_kernel_of_the_one_file_test` does nothing")]


def test_without_the_file_the_triage_rule_is_gone() -> None:
    assert rules.get("TL199") is None
    assert not [f for f in triage(EMPTY + "\n", "one_file_rule_l1b.py").findings if f.code == "TL199"]


# --- level 2 ---------------------------------------------------------------------------------------------------

RUN1 = ROOT / "benchmarks" / "gpu" / "results" / "run1"


def _short_launch() -> tuple[dict, devices.DeviceSpec]:
    result = json.loads((RUN1 / "profile_add.json").read_text())
    device = devices.from_runner(result["device"], result["ceilings"])
    for launch in result["launches"]:
        launch["time_ms"] = {**launch["time_ms"], "median": 0.0005}  # 0.5 us
    return result, device


def test_a_profile_rule_is_one_file(profile_rule_file: Path) -> None:
    rule = rules.require("TL299")
    assert rule.level == Level.PROFILE and rule.checks == ("sub_microsecond.check_sub_microsecond",)
    result, device = _short_launch()
    report = analyze_run(result, device, source=(ROOT / "benchmarks" / "gpu" / "kb_copy.py").read_text())
    assert [f.message for f in report.findings if f.code == "TL299"] == ["0.50 us"]


def test_without_the_file_the_profile_rule_is_gone() -> None:
    result, device = _short_launch()
    report = analyze_run(result, device, source=(ROOT / "benchmarks" / "gpu" / "kb_copy.py").read_text())
    assert rules.get("TL299") is None and "TL299" not in [f.code for f in report.findings]


# --- level 3-4, NVIDIA: the documented module ------------------------------------------------------------------


def test_the_documented_rule_is_registered_with_its_check(cuda_rule_file: Path) -> None:
    rule = rules.get("TL399")
    assert rule is not None and rule.level == Level.COMPILER and rule.platforms == ("cuda",)
    assert rule.checks == (f"{CUDA_MODULE}.check_scalar_loads",)
    assert [c.lower for c in rule.confirms] == ["TL106"]
    assert "TL399" in rules.require("TL106").to_dict()["confirmed_by"]


def test_the_compiler_analysis_runs_its_check_and_escalation_uses_its_confirms(cuda_rule_file: Path) -> None:
    # TL106: `scale = tl.load(scale_ptr)` runs on every iteration of the third loop and never changes; a
    # scalar load in PTX. (A load under `if start == 0:` runs once and is not TL106 since the held-out fixes.)
    case = load_case("softmax_multipass")
    report = analyze(
        case.stages, case.meta["metadata"], case.resources, "sm_90", case.source, case.kernel, case.path
    )
    line = case.line("tl.load(scale_ptr)")
    mine = [f for f in report.findings if f.code == "TL399"]
    assert [f.span.line for f in mine] == [line] and "32 bits per thread" in mine[0].message
    symptoms = [
        f for f in triage(case.source, case.path).findings if f.kernel == case.kernel and f.code == "TL106"
    ]
    assert [f.span.line for f in symptoms] == [line]
    merged = [f for f in merge([*symptoms, *mine], ["cuda"]) if f.span.line == line]
    assert [f.code for f in merged] == ["TL399"] and merged[0].data["confirms"] == ["TL106"]
    assert merged[0].evidence[0].summary.startswith("TL106 (level 1)")


def test_value_dependency_follows_the_rules_declaration(cuda_rule_file: Path) -> None:
    case = load_case("first_iter_only")
    report = analyze(
        case.stages, case.meta["metadata"], case.resources, "sm_90", case.source, case.kernel, case.path
    )
    finding = next(f for f in report.findings if f.code == "TL399")
    spec = Specialization(
        kernel=case.kernel, label="defaults", signature={}, constants={}, divisibility=("n",), options={},
        provenance={"n": ASSUMED_DIVISIBLE},
    )  # fmt: skip
    # depends_on=COMPILE: any guessed value of the compile (here `n`, on another line) may change its widths
    arg, advice = value_dependency(finding, spec, {finding.span.line + 40: "n"})
    assert arg == "n" and "`n` has no visible value" in advice


def test_tritonlens_rules_lists_it_only_while_the_file_exists(cuda_rule_file: Path) -> None:
    # a fresh process discovers the package's own folders only: the command lists what the package holds
    code = (
        "import sys, tritonlens.analysis.compiler.cuda as a; a.__path__.append(sys.argv[1]);"
        "from tritonlens.server.commands.rules import run; import argparse;"
        "run(argparse.Namespace(format='text'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(cuda_rule_file.parent)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "TL399  scalar-global-load  (cuda; level 4; info)" in out.stdout
    assert "confirms TL106" in out.stdout
    plain = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "no-such-folder")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "TL399" not in plain.stdout


# --- level 3-4, Ascend -----------------------------------------------------------------------------------------


def _ascend_report():  # noqa: ANN202
    case = fixture_case("add")
    req = case["request"]
    return analyze(
        case["stages"], case["metadata"], case["resources"], req["target"], case["source"], req["kernel"],
        req["path"],
    )  # fmt: skip


def test_an_ascend_rule_is_one_file(ascend_rule_file: Path) -> None:
    rule = rules.require("TL499")
    assert rule.platforms == ("ascend",) and rule.checks == ("local_buffers.check_local_buffers",)
    mine = [f for f in _ascend_report().findings if f.code == "TL499"]
    assert len(mine) == 1 and mine[0].data["count"] > 0 and mine[0].message.endswith("local buffers")


def test_without_the_file_the_ascend_rule_is_gone() -> None:
    assert rules.get("TL499") is None and "TL499" not in [f.code for f in _ascend_report().findings]


# --- the one shape ---------------------------------------------------------------------------------------------


def test_every_family_check_is_registered_where_it_is_defined() -> None:
    """No registration table: `register_check` is only ever a decorator (or `kernel_check`, which is one), and
    every rule a family check emits is declared in that family's package."""
    analysis = ROOT / "analysis"
    for path in analysis.rglob("*.py"):
        if path.relative_to(analysis).as_posix() in ("core/rules.py", "triage/base.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        decorators = {id(d) for n in ast.walk(tree) for d in getattr(n, "decorator_list", ())}
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
            if name == "register_check":
                assert id(call) in decorators, f"{path}: register_check called outside a decorator (a table)"
    for family in ("cuda", "ascend", "profile-launch", "profile-ncu"):
        for check in rules.checks(family):
            package = check.run.__module__.rpartition(".")[0]
            for code in check.emits:
                rule = rules.require(code)
                declared_in = {
                    m.__name__
                    for m in list(sys.modules.values())
                    if getattr(m, "__name__", "").startswith(package + ".")
                    and any(v is rule for k, v in vars(m).items() if k.isupper() and not k.startswith("_"))
                    and _defines(m, rule)
                }
                assert declared_in, f"{code} (emitted by {check.name}) is not declared in {package}"


def _defines(module: ModuleType, rule: rules.Rule) -> bool:
    """The module's own text declares the rule (not just imports it)."""
    text = Path(module.__file__ or "").read_text(encoding="utf-8") if module.__file__ else ""
    return f'"{rule.code}"' in text
