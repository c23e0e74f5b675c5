"""Every finding of every level is built through its rule (issue 8 item 3): its level, severity and platforms are
ones its registered rule declares. Runs every check family over the committed fixtures (triage over the repo's
kernels, NVIDIA and Ascend compiler output, profiles measured on the H200 and hand-made launch records, compile
errors, specialization) and compares each finding with `rules.get(code)`; a structural test forbids building a
`Finding(...)` anywhere but `Rule.finding`."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tritonlens.analysis.compiler.ascend.hivm import SCALAR_FALLBACK, SCALAR_SYNC_IN_LOOP
from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.analysis.compiler.errors import compile_error_findings
from tritonlens.analysis.core import devices, rules
from tritonlens.analysis.core.findings import Finding, Severity, Span
from tritonlens.analysis.profile import analyze as profiling
from tritonlens.analysis.profile.ncu import parse_source_csv
from tritonlens.analysis.specialize.choose import specializations
from tritonlens.analysis.specialize.findings import specialization_findings
from tritonlens.analysis.triage import triage

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "ir"))  # cuda_cases
sys.path.insert(0, str(ROOT / "tests" / "ascend"))  # ascend_cases

from ascend_cases import FIXTURES as ASCEND_FIXTURES  # noqa: E402
from ascend_cases import fixture_case  # noqa: E402
from cuda_cases import all_cases, report_for  # noqa: E402

DISTRIBUTION = ("analysis", "server", "ascend_runner")
HIVM_CODES = (SCALAR_FALLBACK.code, SCALAR_SYNC_IN_LOOP.code)
RUN1 = ROOT / "benchmarks" / "gpu" / "results" / "run1"


def mismatch(f: Finding) -> str | None:
    rule = rules.get(f.code)
    if rule is None:
        return f"{f.code}: no registered rule"
    if f.level != rule.level:
        return f"{f.code}: level {int(f.level)}, rule says {int(rule.level)}"
    if f.severity not in rule.severities:
        names = sorted(s.name.lower() for s in rule.severities)
        return f"{f.code}: severity {f.severity.name.lower()}, rule declares {names}"
    if not f.platforms or set(f.platforms) - set(rule.platforms):
        return f"{f.code}: platforms {list(f.platforms)}, rule is for {list(rule.platforms)}"
    return None


def assert_all_match(findings: list[Finding]) -> None:
    bad = sorted({m for m in map(mismatch, findings) if m})
    assert not bad, bad


def test_no_finding_is_constructed_outside_rule_finding() -> None:
    offenders = []
    for folder in DISTRIBUTION:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "analysis/core/rules.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    func = node.func
                    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                    if name == "Finding":
                        offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, f"build findings with Rule.finding, not Finding(...): {offenders}"


def test_rule_finding_refuses_what_the_rule_does_not_declare() -> None:
    rule = rules.require("TL301")  # warning, cuda only
    span = Span(1, 0, 1, 1)
    assert rule.finding("m", span).severity == Severity.WARNING
    with pytest.raises(ValueError, match="declares severities"):
        rule.finding("m", span, severity=Severity.ERROR)
    with pytest.raises(ValueError, match="declared for"):
        rule.finding("m", span, platforms=("ascend",))


def test_triage_findings_match_their_rules() -> None:
    files = [
        p
        for d in ("examples", "bench", "tests/triage/data", "tests/corpus")
        for p in (ROOT / d).rglob("*.py")
    ]
    found = [f for p in sorted(files) for f in triage(p.read_text(encoding="utf-8"), str(p)).findings]
    assert len({f.code for f in found}) >= 15  # the corpus exercises most triage rules
    assert_all_match(found)
    emitted = {code for check in rules.checks("triage") for code in check.emits}
    assert {f.code for f in found} <= emitted
    assert all(rule.checks for rule in rules.all_rules() if rule.code.startswith("TL1"))


def test_nvidia_compiler_findings_match_their_rules_and_their_checks() -> None:
    reports = [report_for(name) for name in all_cases()]
    # a check that built a finding its rule does not declare raised: its note says so, and it must not happen
    assert not [n for r in reports for n in r.notes if " skipped: " in n]
    found = [f for r in reports for f in r.findings]
    assert {f.code for f in found} >= {"TL301", "TL302", "TL303", "TL305", "TL308", "TL314"}
    assert_all_match(found)
    emitted = {code for check in rules.checks("cuda") for code in check.emits}
    assert {f.code for f in found} <= emitted  # every TL3xx comes from a check that declares it
    for rule in rules.all_rules():
        if rule.code.startswith("TL3") and rule.code != "TL300":  # TL300: compile errors, not a check
            assert rule.checks, f"{rule.code} is emitted by no registered check"


def test_ascend_compiler_findings_match_their_rules() -> None:
    cases: list[tuple[str, dict, dict | None]] = []
    for meta in sorted(ASCEND_FIXTURES.glob("*.json")):
        raw = json.loads(meta.read_text())
        if "request" in raw and (ASCEND_FIXTURES / f"{meta.stem}.ttadapter").exists():
            cases.append((meta.stem, {}, None))
    # the branches that take another severity: bishengir's exact UB size, grids over the core count and the limit
    cases += [
        ("add", {}, {"required_ub_bits": 300 * 1024 * 8}),
        ("add", {"grid": [1000]}, None),
        ("add", {"grid": [70000]}, None),
        ("matmul", {"grid": [8, 8]}, None),
    ]
    found = []
    for name, metadata, resources in cases:
        case = fixture_case(name)
        req = case["request"]
        report = analyze(
            case["stages"], {**case["metadata"], **metadata}, resources or case["resources"], req["target"],
            case["source"], req["kernel"], req["path"],
        )  # fmt: skip
        assert not [n for n in report.notes if " failed: " in n], report.notes
        found.extend(report.findings)
    assert {"TL401", "TL402", "TL403", "TL404"} <= {f.code for f in found}
    assert Severity.ERROR in {f.severity for f in found if f.code == "TL403"}
    assert_all_match(found)
    emitted = {code for check in rules.checks("ascend") for code in check.emits}
    assert {f.code for f in found} <= emitted | set(
        HIVM_CODES
    )  # hivm findings: analysis/compiler/ascend/hivm.py


@pytest.mark.parametrize("device", ["h100", "ascend910b"])
def test_profiling_findings_match_their_rules(device: str) -> None:
    spec = devices.DEVICES[device]

    def tensor(
        name: str, shape: list[int], written: bool | None = None, dtype: str = "float32", size: int = 4
    ):
        n = 1
        for s in shape:
            n *= s
        return {
            "name": name,
            "kind": "tensor",
            "dtype": dtype,
            "shape": shape,
            "nbytes": n * size,
            "written": written,
        }

    def launch(grid: list[int], ms: float, args: list[dict], **extra: object) -> dict:
        return {"index": 0, "kernel": "k", "file": "k.py", "line": 3, "grid": grid, "args": args,
                "time_ms": {"median": ms}, "count": extra.pop("count", 1), **extra}  # fmt: skip

    big = [tensor("x", [1 << 22]), tensor("y", [1 << 22], written=True)]
    mm = [tensor(n, [4096, 4096], w, "bfloat16", 2) for n, w in (("a", False), ("b", False), ("c", True))]
    flops = 2 * 4096**3
    records = [
        launch([16, 1, 1], 0.5, big),  # small grid
        launch([290, 1, 1], 0.5, big, resources={"num_warps": 32, "n_regs": 32, "shared": 0}),  # wave tail
        launch([4096, 1, 1], 2.0, big, resources={"num_warps": 8, "n_regs": 255, "shared": 0}),  # occupancy
        launch([1, 1, 1], 0.004, big[:1], count=50),  # launch overhead
        launch([32, 32, 1], flops / 100e12 * 1e3, mm, uses_dot=True),  # compute-bound, slow
        launch([32, 32, 1], flops / 900e12 * 1e3, mm, uses_dot=True),  # near the roofline
        launch([1 << 20, 1, 1], 5.0, big),  # many tiny programs
    ]
    found = [
        f
        for rec in records
        for f in profiling.analyze_run({"launches": [rec], "timing_meaningful": True}, spec).findings
    ]
    if device == "h100":
        h200_run = json.loads((RUN1 / "profile_transpose.json").read_text())
        h200 = devices.from_runner(
            h200_run["device"], json.loads((RUN1 / "profile_add.json").read_text())["ceilings"]
        )
        view = parse_source_csv((RUN1 / "ncu_transpose_source.csv").read_text())
        kb = ROOT / "benchmarks" / "gpu" / "kb_copy.py"
        found += profiling.analyze_run(h200_run, h200, source=kb.read_text(), path=str(kb), ncu=view).findings
        assert {"TL207", "TL208"} <= {f.code for f in found}
    assert len({f.code for f in found}) >= 5
    assert_all_match(found)
    emitted = {
        code for family in ("profile-launch", "profile-ncu") for c in rules.checks(family) for code in c.emits
    }
    assert {f.code for f in found} <= emitted
    assert all(rule.checks for rule in rules.all_rules() if rule.code.startswith("TL2"))


def test_compile_error_and_specialization_findings_match_their_rules() -> None:
    error = SimpleNamespace(
        stage="ttgir", message="error: arange's range must be a power of 2", line=3, col=4
    )
    source = "import triton\n\n\n@triton.jit\ndef k(x, BLOCK: tl.constexpr):\n    pass\n"
    found = []
    for platform in ("cuda", "ascend"):
        found += compile_error_findings([error], platform, source, "k", Span(1, 0, 1, 1), "BLOCK=64")
    kernel = (
        "import triton\nimport triton.language as tl\n\n\n# tritonlens: NOPE=1, BLOCK=\n@triton.jit\n"
        "def k(x, n, BLOCK: tl.constexpr, FLAG: tl.constexpr):\n    tl.store(x + tl.arange(0, BLOCK), 1.0)\n"
    )
    specs = specializations(kernel, "k", overrides={})
    found += specialization_findings(kernel, "k", specs, overrides={"missing_param": 1})
    assert {f.code for f in found} >= {"TL300", "TL400", "TL003"}
    assert_all_match(found)
