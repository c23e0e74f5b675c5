"""The first-draft bench kernels are correct: ModelNew matches Model at every TEST_SHAPE under TRITON_INTERPRET=1."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from interp_helpers import ROOT, check_files  # noqa: E402

BENCH = sorted((ROOT / "bench").glob("*/*.py"))
CATEGORIES = {
    "elementwise", "reduction", "normalization", "softmax", "loss", "scan", "gather", "transpose", "matmul",
    "attention",
}


def _int_value(node: ast.AST) -> int | None:
    """The value of an integer literal or of integer arithmetic on literals (`64 * 1024 * 1024`)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.FloorDiv | ast.Pow | ast.LShift):
        left, right = _int_value(node.left), _int_value(node.right)
        if left is None or right is None:
            return None
        ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__,
               ast.Pow: int.__pow__, ast.LShift: int.__lshift__}
        return ops[type(node.op)](left, right)
    return None


def test_bench_covers_every_category() -> None:
    assert len(BENCH) >= 12
    assert CATEGORIES <= {p.parent.name for p in BENCH}


@pytest.mark.parametrize("path", BENCH, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_task_form(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    assert "Known problems:" in doc and "\n- line" in doc
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert {"Model", "ModelNew", "get_inputs", "get_init_inputs"} <= names
    shapes = next(
        ast.literal_eval(n.value) for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "TEST_SHAPES"
    )
    assert len(shapes) >= 2
    # the benchmark shape (the module globals the tests override) is larger than every test shape
    sizes = {
        n.targets[0].id: value for n in tree.body
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
        and isinstance(value := _int_value(n.value), int)
    }
    for shape in shapes:
        assert set(shape) <= set(sizes)
        assert all(sizes[k] >= v for k, v in shape.items())


@pytest.mark.cuda_env
def test_first_drafts_match_reference_under_interpreter() -> None:
    records = check_files(BENCH)
    failures = [r for r in records if not r["ok"]]
    assert not failures, failures
    assert {Path(r["file"]) for r in records} == set(BENCH)
