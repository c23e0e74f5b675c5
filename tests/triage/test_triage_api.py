"""triage(): syntax errors, non-Triton files, the rule registry, fixes, the examples, speed and the CLI."""

from __future__ import annotations

import ast
import json
import re

import pytest
from triage_helpers import DATA, EXAMPLES, run

from tritonlens.analysis.core import rules
from tritonlens.analysis.core.findings import Finding, Level, Span
from tritonlens.analysis.core.settings import Settings
from tritonlens.analysis.triage import triage
from tritonlens.server.cli import main


def test_syntax_error_gives_one_tl001_at_the_error() -> None:
    result = triage("import triton\n@triton.jit\ndef k(x):\n    y = (x +\n", "broken.py")
    (f,) = result.findings
    assert f.code == "TL001" and f.span.line == 4 and f.span.col == 8
    assert result.module.syntax_error is not None and not result.module.kernels
    assert f.message.endswith("(the file's 1 @triton.jit function is not analysed until it parses)")
    assert "not analysed" not in triage("x = (\n", "plain.py").findings[0].message
    # an error outside every kernel (a bad import, host code half typed): that line is left out and the kernels are
    # checked; the message says so
    kernel = ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef a(p, BLOCK: tl.constexpr):\n"
              "    offs = tl.arange(0, BLOCK)\n    tl.store(p + offs, tl.load(p + offs).to(tl.float64))\n\n"
              "@triton.jit(debug=True)\ndef b(p):\n    pass\n")
    around = triage("from my-pkg import x\n" + kernel, "import_typo.py").findings
    assert [(f.code, f.span.line) for f in around] == [("TL001", 1), ("TL122", 8)], around
    assert "the file's 2 @triton.jit functions are checked with line 1 left out" in around[0].message
    assert triage("from my-pkg import x\n" + kernel, "import_typo.py").module.syntax_error is not None  # as written
    # an error inside a kernel hides them all: the message counts them, since nothing else can
    inside = triage(kernel.replace("tl.arange(0, BLOCK)", "tl.arange(0, BLOCK"), "half_typed.py").findings
    assert [f.code for f in inside] == ["TL001"] and "2 @triton.jit functions are not analysed" in inside[0].message


@pytest.mark.parametrize(
    "source",
    ["", "print('hello')\n", "import numpy as np\n\ndef f(x):\n    return np.sum(x)\n", "\x00\x01garbage"],
)
def test_files_without_kernels_have_no_findings_except_syntax(source: str) -> None:
    findings = triage(source).findings
    assert all(f.code == "TL001" for f in findings)
    if "\x00" not in source:
        assert findings == []


def test_registry_has_at_least_twenty_documented_triage_rules() -> None:
    triage_rules = [r for r in rules.all_rules() if r.code.startswith("TL1")]
    assert len(triage_rules) >= 20
    for rule in triage_rules:
        assert re.fullmatch(r"TL1\d\d", rule.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", rule.name), rule.name
        assert rule.level == Level.TRIAGE
        assert rule.platforms and set(rule.platforms) <= {"cuda", "ascend"}
        assert len(rule.rationale) > 200 and "**" in rule.rationale, rule.code
        assert rule.references and all(r.startswith("https://") for r in rule.references), rule.code
    names = [r.name for r in triage_rules]
    assert len(names) == len(set(names))
    assert rules.get("TL001") is not None


def test_every_finding_is_registered_and_tied_to_a_kernel() -> None:
    for path in [*EXAMPLES.glob("*.py"), *DATA.glob("*.py")]:
        source = path.read_text(encoding="utf-8")
        n_lines = len(source.splitlines())
        for f in triage(source, str(path), strict=True).findings:
            rule = rules.get(f.code)
            assert rule is not None
            assert f.kernel, f
            # a cause merged into a platform-specific finding stays for its other platforms only (lanes.py)
            assert set(f.platforms) <= set(rule.platforms) and f.level == Level.TRIAGE
            if f.platforms != rule.platforms:
                assert f.code == "TL103" and f.platforms == ("ascend",), f
            assert 1 <= f.span.line <= f.span.end_line <= n_lines
            assert f.evidence and f.evidence[0].kind == "ast"
            assert Finding.from_dict(json.loads(json.dumps(f.to_dict()))) == f


EXPECTED = {
    "vector_add.py": set(),
    "naive_softmax.py": {"TL103", "TL106", "TL108", "TL113", "TL117", "TL125", "TL126", "TL135", "TL137"},
    "matmul.py": {"TL111", "TL120"},
    "gather.py": {"TL116"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_examples_report_their_known_problems(name: str) -> None:
    source = (EXAMPLES / name).read_text(encoding="utf-8")
    result = triage(source, name, strict=True)
    assert {f.code for f in result.findings} == EXPECTED[name]
    kernel = {
        "vector_add.py": "add_kernel",
        "naive_softmax.py": "softmax_kernel",
        "matmul.py": "matmul_kernel",
    }
    kernel["gather.py"] = "gather_kernel"
    assert [k.name for k in result.module.kernels] == [kernel[name]]


def test_examples_and_good_kernels_are_clean_for_cuda() -> None:
    cuda = Settings(target="cuda")
    assert not cuda.apply(run((EXAMPLES / "vector_add.py").read_text(encoding="utf-8")))
    assert not cuda.apply(run((EXAMPLES / "gather.py").read_text(encoding="utf-8")))
    for path in DATA.glob("*.py"):
        assert not run(path.read_text(encoding="utf-8")), path.name


def _apply(source: str, f: Finding) -> str:
    lines = source.split("\n")
    for edit in sorted(f.fix.edits, key=lambda e: (e.span.line, e.span.col), reverse=True):
        s: Span = edit.span
        assert s.line == s.end_line
        line = lines[s.line - 1]
        lines[s.line - 1] = line[: s.col] + edit.new_text + line[s.end_col :]
    return "\n".join(lines)


FIXABLE = """
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)

k[(4,)](x, 4000, BLOCK=1000)
"""


def test_fixes_apply_cleanly_and_remove_their_finding() -> None:
    source = FIXABLE
    for code in ("TL101", "TL102"):
        (f,) = [f for f in run(source) if f.code == code]
        assert f.fix is not None and rules.get(code).has_fix
        source = _apply(source, f)
        ast.parse(source)
        assert not [g for g in run(source) if g.code == code]
    assert "BLOCK: tl.constexpr" in source and "BLOCK=1024" in source


def test_rules_with_fixes_are_declared() -> None:
    fixed_codes = {f.code for f in run(FIXABLE) if f.fix is not None}
    declared = {r.code for r in rules.all_rules() if r.code.startswith("TL1") and r.has_fix}
    assert fixed_codes <= declared


def _big_file(lines: int) -> str:
    parts = ["import triton\nimport triton.language as tl\n"]
    sources = [
        (EXAMPLES / n).read_text(encoding="utf-8") for n in ("naive_softmax.py", "matmul.py", "gather.py")
    ]
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        body = sources[i % len(sources)].replace('if __name__ == "__main__":', f"if __name__ == 'x{i}':")
        body = re.sub(
            r"\b(softmax_kernel|matmul_kernel|gather_kernel|softmax|matmul|gather)\b", rf"\1_{i}", body
        )
        parts.append(body)
        i += 1
    return "\n".join(parts)


def test_two_thousand_line_file_is_triaged_whole() -> None:
    # Latency is measured by benchmarks/lsp_latency.py, not asserted here.
    source = _big_file(2000)
    assert source.count("\n") >= 2000
    result = triage(source, strict=True)
    assert len(result.module.kernels) >= 30 and result.findings
    assert {f.kernel for f in result.findings} >= {"softmax_kernel_0", "matmul_kernel_1", "gather_kernel_2"}


def test_triage_never_raises_on_prefixes_of_the_examples() -> None:
    for path in sorted(EXAMPLES.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for cut in range(0, len(text), 11):
            findings = triage(text[:cut], strict=True).findings
            # a cut outside every kernel leaves its line out and checks the kernels beside TL001
            assert all(f.code == "TL001" or f.kernel for f in findings)
            assert sum(f.code == "TL001" for f in findings) <= 1


def test_cli_check_and_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "naive_softmax.py")]) == 1
    out = capsys.readouterr().out
    assert "naive_softmax.py:36:" in out and "TL108" in out
    assert main(["check", "--target", "cuda", str(EXAMPLES / "vector_add.py")]) == 0
    capsys.readouterr()
    assert main(["rules", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    codes = {r["code"] for r in listed}
    assert "TL001" in codes and len({c for c in codes if c.startswith("TL1")}) >= 20
