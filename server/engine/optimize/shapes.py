"""Which shapes a candidate is checked at: a task's `TEST_SHAPES`, or sizes derived from its integer globals.

bench/README.md: sizes are module-level integer globals that `get_inputs()` reads; `TEST_SHAPES` lists dicts
overriding them with small shapes. The search may use every shape but the held-out one(s); the gate checks them
all, so a candidate correct only where it was searched is caught. The benchmark shape (the globals as written)
is where speed is measured.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Shape:
    label: str
    overrides: dict[str, int] = field(default_factory=dict)
    held_out: bool = False  # never used while searching

    def to_payload(self) -> dict[str, Any]:
        return {"label": self.label, "overrides": dict(self.overrides), "held_out": self.held_out}


@dataclass(frozen=True)
class ShapePlan:
    search: tuple[Shape, ...]
    held_out: tuple[Shape, ...]
    timing: Shape  # the benchmark shape: the module's globals as written
    source_note: str  # where the shapes came from; says so when they were guessed
    guessed: bool = False

    @property
    def all(self) -> tuple[Shape, ...]:
        return (*self.search, *self.held_out)


def _label(values: dict[str, Any]) -> str:
    return "x".join(str(v) for v in values.values()) if values else "as written"


def module_int_globals(tree: ast.Module) -> dict[str, int]:
    out: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Constant) and type(value.value) is int:
                out[node.targets[0].id] = value.value
    return out


def _names_read_by(tree: ast.Module, functions: tuple[str, ...]) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in functions:
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return names


def size_globals(tree: ast.Module) -> dict[str, int]:
    """Upper-case integer globals that get_inputs/get_init_inputs read: the task's sizes."""
    read = _names_read_by(tree, ("get_inputs", "get_init_inputs"))
    return {k: v for k, v in module_int_globals(tree).items() if k.isupper() and k in read}


def _test_shapes(tree: ast.Module) -> list[dict[str, int]] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "TEST_SHAPES" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            if isinstance(value, (list, tuple)) and all(isinstance(v, dict) for v in value):
                return [dict(v) for v in value]
    return None


def declared_test_shapes(source: str) -> list[dict[str, int]] | None:
    """The module's `TEST_SHAPES` entries, or None when it declares none (or the text does not parse)."""
    try:
        return _test_shapes(ast.parse(source))
    except SyntaxError:
        return None


def _odd(v: int) -> int:
    return v - 3 if v > 4 else v + 1  # odd for any even v: no multiple of a power-of-two block


def plan_shapes(source: str) -> ShapePlan:
    """Raises ValueError with a plain message when the file gives no way to choose shapes."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"syntax error on line {exc.lineno}: {exc.msg}") from None
    sizes = size_globals(tree)
    timing = Shape(_label(sizes), {}, False)
    declared = _test_shapes(tree)
    if declared:
        shapes = [Shape(_label(d), {k: v for k, v in d.items()}) for d in declared]
        if len(shapes) == 1:  # one declared shape: keep it for the search, hold out a derived one
            half = {k: max(1, v // 2 + 1) for k, v in shapes[0].overrides.items() if isinstance(v, int)}
            return ShapePlan(
                tuple(shapes),
                (Shape(_label(half) + " (derived)", half, True),),
                timing,
                "TEST_SHAPES (one entry; the held-out shape is derived from it by halving, a guess)",
                guessed=True,
            )
        held = shapes[-1]
        return ShapePlan(
            tuple(shapes[:-1]),
            (Shape(held.label, held.overrides, True),),
            timing,
            f"TEST_SHAPES ({len(shapes)} entries; the last is held out from the search)",
        )
    if not sizes:
        return ShapePlan(
            (Shape("as written", {}),),
            (),
            timing,
            "no TEST_SHAPES and no integer size globals read by get_inputs(): only the shape as written is "
            "checked, and no shape is held out (add TEST_SHAPES to check more)",
            guessed=True,
        )
    odd = {k: _odd(v) for k, v in sizes.items()}
    half = {k: max(1, v // 2 + 1) for k, v in sizes.items()}
    return ShapePlan(
        (Shape(_label(sizes), {}), Shape(_label(odd), odd)),
        (Shape(_label(half), half, True),),
        timing,
        f"derived from the size globals {', '.join(sizes)} (a guess: no TEST_SHAPES in the file)",
        guessed=True,
    )
