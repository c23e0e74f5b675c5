"""Canonical names of what the kernel model looks for, and the import aliases that resolve a file's spelling of
them (`import triton as tr` -> `@tr.jit` is `triton.jit`)."""

from __future__ import annotations

import ast

# Canonical spellings of the decorators and objects we look for; aliases are resolved to these.
JIT = "triton.jit"
AUTOTUNE = "triton.autotune"
HEURISTICS = "triton.heuristics"
CONFIG = "triton.Config"
CONSTEXPR = "triton.language.constexpr"
_CANONICAL = {
    "triton.runtime.jit.jit": JIT,
    "triton.runtime.autotuner.autotune": AUTOTUNE,
    "triton.runtime.autotune": AUTOTUNE,
    "triton.runtime.autotuner.heuristics": HEURISTICS,
    "triton.runtime.heuristics": HEURISTICS,
    "triton.runtime.autotuner.Config": CONFIG,
    "triton.runtime.Config": CONFIG,
    "triton.language.core.constexpr": CONSTEXPR,
}
# Positional order of triton.Config(kwargs, num_warps, num_stages, num_ctas, maxnreg, pre_hook).


def resolve_dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = aliases.get(node.id)
    if base is None:
        return None
    parts.append(base)
    dotted = ".".join(reversed(parts))
    return _CANONICAL.get(dotted, dotted)


# Names libraries re-export Triton under (vllm.triton_utils, vendor shims): taken as Triton wherever imported from.
_REEXPORTED = {"triton": "triton", "tl": "triton.language"}


def add_import(node: ast.Import | ast.ImportFrom, aliases: dict[str, str], other: set[str]) -> None:
    if isinstance(node, ast.Import):
        for item in node.names:
            if item.name == "triton" or item.name.startswith("triton."):
                if item.asname:
                    aliases[item.asname] = item.name
                else:
                    aliases["triton"] = "triton"
            else:
                other.add(item.asname or item.name.split(".")[0])
    elif node.module and node.level == 0:
        if node.module == "triton" or node.module.startswith("triton."):
            for item in node.names:
                if item.name != "*":
                    aliases[item.asname or item.name] = f"{node.module}.{item.name}"
        else:
            for item in node.names:
                if item.name in _REEXPORTED:  # `from vllm.triton_utils import tl, triton`: Triton re-exported
                    aliases[item.asname or item.name] = _REEXPORTED[item.name]
                else:
                    other.add(item.asname or item.name)
