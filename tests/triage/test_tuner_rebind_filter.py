"""The cheap filter before TL136's unparse of assignments (launch_args._names_a_tuner): exact, i.e. wherever
`ast.unparse` of a statement's assignment mentions a tuner, some token of the statement does."""

from __future__ import annotations

import ast

import pytest

from tritonlens.analysis.triage.launch_args import _rebinds_in

STATEMENTS = [
    "k = triton.autotune(configs=[], key=['n'])(k)",
    "k = triton.heuristics({'B': lambda a: 1})(k)",
    "k = autotune(k)",
    "k = my_autotuner(k)",
    "k = wrap(k, mode='autotune')",
    "k = wrap(k, mode=b'heuristics')",
    "k = wrap(k, autotune=True)",
    "k = wrap(lambda autotune: 1)",
    "k = f'{autotune}'",
    "def host():\n    k = triton.autotune(configs=[], key=[])(kern)\n    return k",
    "k = triton.jit(k)",
    "k = wrap(k, mode='auto' 'tune')",
    "x = 1 + 2",
    "if cond:\n    a, b = autotune, 3\nelse:\n    a = 2",
]


def _by_unparse(stmt: ast.AST) -> frozenset[str]:
    """The rule before the filter: every assignment unparsed."""
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Assign):
            text = ast.unparse(node.value)
            if "autotune" in text or "heuristics" in text:
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


@pytest.mark.parametrize("source", STATEMENTS)
def test_filtered_rebinds_equal_the_unparse_of_every_assignment(source: str) -> None:
    (stmt,) = ast.parse(source).body
    assert _rebinds_in(stmt) == _by_unparse(stmt)


def test_the_cases_cover_both_answers() -> None:
    found = [bool(_by_unparse(ast.parse(s).body[0])) for s in STATEMENTS]
    assert any(found) and not all(found)
