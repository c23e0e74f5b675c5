"""Which jit functions of a file are compiled on their own: launched ones and those no other jit function
calls (helpers are compiled inline into their callers)."""

from __future__ import annotations

import ast
from typing import Any

from ....analysis.kernels import parse_module
from ....analysis.specialization_kernels import KernelTable, kernel_table


def launchable_kernels(source: str, parsed: KernelTable | None = None) -> list[str]:
    """Kernels worth compiling on their own: jit functions that are launched here or called by no other
    jit function (helpers are compiled inlined into their callers)."""
    module = parse_module(source)
    parsed = parsed or kernel_table(module)
    # a jit function only referenced by others (a `tl.reduce` combine function) is compiled inside them
    return [k.name for k in module.kernels if not _helper_only(parsed, k.name, source)]


def callers_of(parsed: KernelTable, kernel: str) -> list[str]:
    return [n for n, other in parsed.kernels.items() if n != kernel and kernel in _names(other.node)]


def _helper_only(parsed: KernelTable, kernel: str, source: str) -> bool:
    """Compiled only inside other jit functions: referenced by one (a `tl.reduce` combine function), or
    returning a value (a device function: a launched kernel cannot return one), and never launched here."""
    if f"{kernel}[" in source:
        return False
    info = parsed.kernels.get(kernel)
    returns = info is not None and any(
        isinstance(n, ast.Return) and n.value is not None for n in ast.walk(info.node)
    )
    return returns or bool(callers_of(parsed, kernel))


def _names(node: Any) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
