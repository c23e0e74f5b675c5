"""Which kernels of a file are persistent: a fixed grid (typically one program per SM / AI core) whose programs
loop over the tiles with a stride of the program count.

`for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0))` (or a stride passed in, such as
`NUM_SMS`) is the pattern. Such a kernel keeps one or a few programs per SM on purpose, so occupancy and
wave-quantisation verdicts that assume "more, smaller programs" do not apply to it.
"""

from __future__ import annotations

import ast

from . import KernelInfo, ModuleInfo, parse_module

TL = "triton.language."
_RANGES = {"range", TL + "range", TL + "static_range"}


def persistent_kernels(source: str) -> set[str]:
    """Names of the jit functions in `source` that loop over tiles with a program-count stride (or that call a
    helper which does)."""
    module = parse_module(source)
    if module.syntax_error is not None:
        return set()
    looping = {k.name for k in (*module.kernels, *module.helpers) if _has_persistent_loop(module, k)}
    return {
        k.name for k in (*module.kernels, *module.helpers) if k.name in looping or looping & set(k.helpers)
    }


def _has_persistent_loop(module: ModuleInfo, kernel: KernelInfo) -> bool:
    nodes = module.function_tree(kernel).nodes
    from_pid = _names_from_program_id(module, nodes)
    for node in nodes:
        if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call):
            continue
        if module.resolve(node.iter.func) not in _RANGES or len(node.iter.args) < 3:
            continue
        start, _, step = node.iter.args[:3]
        if _calls(module, step, "num_programs"):
            return True
        starts_at_pid = _calls(module, start, "program_id") or bool(_names(start) & from_pid)
        if starts_at_pid and not isinstance(step, ast.Constant):
            return True  # `range(pid, n, NUM_SMS)`: a runtime stride from the launch
    return False


def _names_from_program_id(module: ModuleInfo, nodes: list[ast.AST]) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and _calls(module, node.value, "program_id"):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _calls(module: ModuleInfo, node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and module.resolve(n.func) == TL + name for n in ast.walk(node))


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
