"""The per-function triage cache must never change results: cached triage equals fresh (strict) triage."""

from __future__ import annotations

import random
from pathlib import Path

from tritonlens.analysis.triage import triage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _fresh(source: str) -> list:
    return triage(source, "f.py", strict=True).findings  # strict bypasses the cache


def test_cached_results_match_fresh_results_under_random_edits() -> None:
    rng = random.Random(7)
    source = "\n\n".join((EXAMPLES / n).read_text() for n in ("naive_softmax.py", "matmul.py", "gather.py"))
    edits = [
        "BLOCK_SIZE",
        " 17",
        "tl.load(x_ptr)",
        "\n",
        "# c\n",
        "    pass\n",
        "x = 1\n",
        "for i in range(3):\n",
    ]
    for _ in range(120):
        pos = rng.randrange(len(source))
        if rng.random() < 0.5:
            source = source[:pos] + rng.choice(edits) + source[pos:]
        else:
            source = source[:pos] + source[pos + rng.randrange(1, 6) :]
        assert triage(source, "f.py").findings == _fresh(source)


def test_edit_in_one_kernel_keeps_the_other_kernels_findings_identical() -> None:
    source = "\n\n".join((EXAMPLES / n).read_text() for n in ("naive_softmax.py", "gather.py"))
    before = triage(source, "f.py").findings
    edited = source.replace("BLOCK_SIZE", "BLOCK_SIZE ", 1)  # same line count, inside the first kernel
    after = triage(edited, "f.py").findings
    assert after == _fresh(edited)
    gather_before = [f for f in before if f.kernel == "gather_kernel"]
    assert gather_before and gather_before == [f for f in after if f.kernel == "gather_kernel"]


def test_host_code_edit_invalidates_launch_dependent_findings() -> None:
    source = (EXAMPLES / "vector_add.py").read_text()
    assert triage(source, "f.py").findings == _fresh(source)
    changed = source.replace("BLOCK_SIZE=1024", "BLOCK_SIZE=1000")
    assert changed != source
    assert triage(changed, "f.py").findings == _fresh(changed)
