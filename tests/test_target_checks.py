"""Target names are parsed in one place (analysis/core/targets.py): a check such as `target.startswith("ascend")`
anywhere else in the server process's code fails here, with the line to route through `targets`.

Scanned: server/, analysis/ and the runner's client side. Not scanned: the runner's workers and protocol, which
run under the runner environments' Python, cannot import the package, and keep their own table (held equal to
analysis/core/targets.py by tests/test_layers.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from tritonlens.analysis.core.targets import (
    ASCEND_TARGETS,
    CUDA_TARGETS,
    cuda_capability,
    is_ascend_target,
    is_cuda_target,
    platform_of,
)

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("server", "analysis", "ascend_runner")
NOT_SCANNED = ("analysis/core/targets.py", "ascend_runner/worker/", "ascend_runner/protocol.py")

_NAME = r"(?:sm|ascend|cuda|gfx)"  # how target names begin (NVIDIA, Ascend, a CUDA alias, AMD)
AD_HOC = [
    # target.startswith("ascend"), .startswith(("sm_", "cuda")), .removeprefix("sm_"), ...
    re.compile(rf"""\.(?:startswith|endswith|removeprefix|lstrip)\(\s*\(?\s*[rbu]?["']{_NAME}""", re.I),
    # "ascend" in target, "sm_" not in ctx.target
    re.compile(rf"""["']{_NAME}_?["']\s+(?:not\s+)?in\s+[\w.]*target""", re.I),
    # target[:2] == "sm", target[:6] != "ascend"
    re.compile(rf"""target\s*\[[^\]]*\]\s*[=!]=\s*["']{_NAME}""", re.I),
    # re.match(r"sm_(\d+)", target)
    re.compile(rf"""re\.(?:compile|match|search|fullmatch)\(\s*[rbu]*["'][\^(?:]*{_NAME}_""", re.I),
]


def ad_hoc_target_checks(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of `text` that reads a target name itself."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        if any(p.search(code) for p in AD_HOC):
            found.append((n, line.strip()))
    return found


def _sources() -> list[Path]:
    paths = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(NOT_SCANNED):
                paths.append(path)
    return paths


def test_no_target_name_is_read_outside_targets_py():
    sources = _sources()
    assert len(sources) > 100  # the scan sees the tree (a wrong root would pass vacuously)
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line}"
        for path in sources
        for n, line in ad_hoc_target_checks(path.read_text(encoding="utf-8"))
    ]
    assert not found, "read target names through analysis/core/targets.py:\n" + "\n".join(found)


def test_the_scan_catches_the_checks_it_replaced():
    # The checks that were in config_search.py, persistent_grid.py, split_reduction.py and llm_prompt.py.
    caught = [
        'return "ascend" if target.startswith("ascend") else "cuda"',
        "    if not ks.ctx.target.startswith('ascend'):",
        'spec = DEVICES.get("h100") if target.startswith("sm_9") else None',
        'if target.lower().startswith("ascend"):',
        'if target.startswith(("sm_", "cuda")):',
        'if "ascend" in ctx.target:',
        'if target[:3] == "sm_":',
        'm = re.match(r"sm_(\\d+)", target)',
    ]
    for line in caught:
        assert ad_hoc_target_checks(line), line
    # Platform settings ("cuda" | "ascend") and device paths are not target names.
    passed = [
        'if platform == "ascend":',
        'return cuda_target if "cuda" in platforms else ascend_target',
        'n.startswith("davinci")',
        "# a target.startswith('ascend') in a comment",
    ]
    for line in passed:
        assert not ad_hoc_target_checks(line), line


def test_targets_reads_every_compile_target():
    assert all(is_cuda_target(t) and not is_ascend_target(t) for t in CUDA_TARGETS)
    assert all(is_ascend_target(t) and not is_cuda_target(t) for t in ASCEND_TARGETS)
    assert is_ascend_target("Ascend910B3") and platform_of("Ascend910B3") == "ascend"
    assert [cuda_capability(t) for t in CUDA_TARGETS] == [80, 86, 89, 90, 100]
    assert cuda_capability("sm_90a") == 90 and cuda_capability("cuda:90") == 90
    # An Ascend SoC's digits are not a compute capability (they read as 9103 before).
    assert cuda_capability("ascend910b3") is None and cuda_capability("auto") is None
