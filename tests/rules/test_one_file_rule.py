"""Adding a TL3xx rule is one file (issue 8 item 3): the example module in docs/architecture.md ("Adding a rule")
is dropped into the `analysis` package as a new file, and without touching any other module the registry lists
it, the NVIDIA analysis runs its check, escalation lets it absorb the triage finding it declares it confirms,
the value-dependency policy reads its `depends_on`, and `tritonlens rules` shows it."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import tritonlens.analysis as analysis_package
from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.analysis.compiler.variants import value_dependency
from tritonlens.analysis.core import rules
from tritonlens.analysis.core.escalation import merge
from tritonlens.analysis.core.findings import Level
from tritonlens.analysis.specialize.choose import ASSUMED_DIVISIBLE, Specialization
from tritonlens.analysis.triage import triage

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "ir"))  # cuda_cases

from cuda_cases import load_case  # noqa: E402

MODULE = "compiler_cuda_scalar_loads"


def documented_rule_module() -> str:
    """The first Python block of docs/architecture.md's "Adding a rule" section."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Adding a rule", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "docs/architecture.md must show the rule module"
    return match.group(1)


@pytest.fixture
def new_rule_file(tmp_path: Path) -> Iterator[Path]:
    """The documented module as one new file of the package (a second folder of `tritonlens.analysis`), found
    by the registry's discovery; removed again afterwards."""
    path = tmp_path / f"{MODULE}.py"
    path.write_text(documented_rule_module(), encoding="utf-8")
    analysis_package.__path__.append(str(tmp_path))
    rules.discover()
    try:
        yield path
    finally:
        analysis_package.__path__.remove(str(tmp_path))
        sys.modules.pop(f"tritonlens.analysis.{MODULE}", None)
        rules._RULES.pop("TL399", None)
        for family in rules._CHECKS.values():
            family[:] = [c for c in family if not c.name.startswith(f"{MODULE}.")]
        rules._generation += 1


def test_the_documented_rule_is_registered_with_its_check(new_rule_file: Path) -> None:
    rule = rules.get("TL399")
    assert rule is not None and rule.level == Level.COMPILER and rule.platforms == ("cuda",)
    assert rule.checks == (f"{MODULE}.check_scalar_loads",)
    assert [c.lower for c in rule.confirms] == ["TL106"]
    assert "TL399" in rules.require("TL106").to_dict()["confirmed_by"]


def test_the_compiler_analysis_runs_its_check_and_escalation_uses_its_confirms(new_rule_file: Path) -> None:
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


def test_value_dependency_follows_the_rules_declaration(new_rule_file: Path) -> None:
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


def test_tritonlens_rules_lists_it_only_while_the_file_exists(new_rule_file: Path) -> None:
    # a fresh process discovers the package's own folders only: the command lists what the package holds
    code = (
        "import sys, tritonlens.analysis as a; a.__path__.append(sys.argv[1]);"
        "from tritonlens.server.commands.rules import run; import argparse;"
        "run(argparse.Namespace(format='text'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(new_rule_file.parent)], capture_output=True, text=True, timeout=120
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
