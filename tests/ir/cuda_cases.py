"""Real NVIDIA compiler outputs (tests/fixtures/cuda, made by generate.py) and the corpus they came from."""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonlens.analysis.compiler.dispatch import analyze
from tritonlens.analysis.compiler.report import CompilerReport

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "cuda"
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


@dataclass(frozen=True)
class Case:
    name: str
    stages: dict[str, str]
    meta: dict[str, Any]
    resources: dict[str, Any]
    source: str
    # The corpus file's name in another folder: the compiler recorded /work/main/..., a user's
    # editor path differs, and attribution must still find the user's lines.
    path: str

    @property
    def kernel(self) -> str:
        return str(self.meta["kernel"])

    def line(self, needle: str, occurrence: int = 1) -> int:
        """1-based line of the n-th source line containing `needle` inside this case's kernel."""
        lines = self.source.splitlines()
        start = next(i for i, t in enumerate(lines) if t.startswith(f"def {self.kernel}("))
        hits = [i + 1 for i, t in enumerate(lines) if i >= start and needle in t]
        assert len(hits) >= occurrence, f"{needle!r} not in {self.kernel}"
        return hits[occurrence - 1]


@functools.cache
def load_case(name: str) -> Case:
    folder = FIXTURES / name
    meta = json.loads((folder / "meta.json").read_text())
    stages = {s: (folder / s).read_text() for s in STAGES if (folder / s).exists()}
    resources = {
        "ptxas_log": (folder / "ptxas_v").read_text(),
        "res_usage": (folder / "res_usage").read_text(),
        "shared": meta["metadata"]["shared"],
    }
    source = (ROOT / meta["corpus"]).read_text()
    path = os.path.join("/home/user/project", Path(meta["corpus"]).name)
    return Case(name, stages, meta, resources, source, path)


@functools.cache
def report_for(name: str, target: str | None = None) -> CompilerReport:
    """The analysis of a fixture, for the GPU it was compiled for unless `target` says otherwise."""
    case = load_case(name)
    target = target or str(case.meta.get("target", "sm_90"))
    return analyze(
        case.stages, case.meta["metadata"], case.resources, target, case.source, case.kernel, case.path
    )


def all_cases() -> list[str]:
    return sorted(p.name for p in FIXTURES.iterdir() if (p / "meta.json").exists())
