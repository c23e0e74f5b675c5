"""Replay verification for files not in KernelBench form: the kernel's recorded launches are the reference.

`tritonlens record -- COMMAND` (or the editor's Record command) keeps each kernel's distinct launches in the
workspace's launch store, tagged with the kernel text they were recorded from. When a file has no `Model` to
compare with but its kernels have launches recorded from their current text, the gate replays those launches:
original and candidate kernels on the same freshly drawn arguments, every tensor argument compared
(ascend_runner/worker/replay_verify.py). A candidate that changes only a launch site's constexprs, launch options
or grid is replayed with those overridden (replay_overrides.py). What replay cannot check is said, never skipped
silently: any other change outside the kernels (wrapper logic, a signature, new arguments) is declined with that
reason before it takes a verification slot; no shape is held out (every recorded launch is checked; the record
names how many).
"""

from __future__ import annotations

import ast
from typing import Any

from ..record.launch_store import recorded_for
from .shapes import Shape, ShapePlan

MAX_PER_KERNEL = 3  # the smallest two and the largest recorded launch of each kernel (interpret is slow)


def _bytes(launch: dict[str, Any]) -> int:
    return sum(int(a.get("nbytes") or 0) for a in launch.get("args") or [] if isinstance(a, dict))


def replayable(launch: dict[str, Any]) -> bool:
    """Every argument can be rebuilt from the record: tensors, scalars, constexprs, None (not, e.g., a
    TensorDescriptor or another object the recorder could only name)."""
    return all(isinstance(a, dict) and a.get("kind") in ("tensor", "int", "float", "bool", "constexpr", "none")
               for a in launch.get("args") or [])


def replay_launches(path: str, source: str, kernels: list[str]) -> list[dict[str, Any]]:
    """The replayable recorded launches of `kernels` still valid for `source` (none for an edited kernel), a few
    per kernel: the smallest two and the largest, so sizes the program really used are checked at both ends."""
    chosen: list[dict[str, Any]] = []
    for kernel in kernels:
        launches = sorted((x for x in recorded_for(path, source, kernel) if replayable(x)), key=_bytes)
        picks = launches[:MAX_PER_KERNEL - 1] + launches[MAX_PER_KERNEL - 1:][-1:]
        chosen.extend(picks)
    return chosen


def replay_plan(launches: list[dict[str, Any]], total_recorded: int | None = None) -> ShapePlan:
    kernels = sorted({str(x.get("kernel")) for x in launches})
    shape = Shape(f"{len(launches)} recorded launch(es)", {}, False)
    note = (
        f"replay of {len(launches)} recorded launch(es) of {', '.join(kernels)} (the launch store, "
        "`tritonlens record`): fresh arguments drawn from each launch's dtypes, shapes, strides and recorded value "
        "ranges; every tensor argument compared; no shape held out"
    )
    if total_recorded is not None and total_recorded > len(launches):
        note += f" ({len(launches)} of {total_recorded} recorded launches: the smallest two and largest per kernel)"
    return ShapePlan((shape,), (), shape, note, guessed=False)


def _is_kernel(node: ast.stmt) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return any("jit" in ast.unparse(d) or "autotune" in ast.unparse(d) or "heuristics" in ast.unparse(d)
               for d in node.decorator_list)


def _outside_kernels(tree: ast.Module) -> list[str]:
    """Every top-level statement except kernel bodies (a kernel's name and parameters count: replay binds them)."""
    out = []
    for node in tree.body:
        if _is_kernel(node):
            out.append(f"kernel {node.name}({ast.unparse(node.args)}) {[ast.unparse(d) for d in node.decorator_list]}")
        else:
            out.append(ast.dump(node, include_attributes=False))
    return out


def first_changed_line(before: str, after: str) -> int | None:
    """The line in `after` of the first top-level statement that differs outside the kernels' bodies."""
    try:
        old, new = ast.parse(before), ast.parse(after)
    except SyntaxError:
        return None
    a, b = _outside_kernels(old), _outside_kernels(new)
    if a == b:
        return None
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return new.body[first].lineno if first < len(new.body) else None
