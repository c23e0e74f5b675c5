"""Launch sites that leave a required constexpr unset (TL136): proven from the source, the launch fails."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from ..kernels import ModuleInfo
from ..source.node_memo import per_node, subtree
from . import references as ref
from .base import finding, kernel_check
from .context import KernelContext

MISSING_CONSTEXPR = register(
    Rule(
        code="TL136",
        name="launch-missing-constexpr",
        title="A launch leaves a tl.constexpr parameter without a value",
        level=Level.TRIAGE,
        severity=Severity.ERROR,
        platforms=("cuda", "ascend"),
        rationale=(
            "Every `tl.constexpr` parameter without a default must get its value at the launch, from "
            "`@triton.autotune` configs or from `@triton.heuristics`: Triton compiles one binary per value and "
            "raises *missing a required argument* (or a TypeError from the binder) when none is given. A launch "
            "that passes fewer arguments than the kernel has, with no config or heuristic naming the rest, fails "
            "on its first call.\n\n**Fix:** pass the value at the launch (`BLOCK=...`), give the parameter a "
            "default, or add it to every autotune config."
        ),
        references=(ref.CONSTEXPR,),
    )
)


@kernel_check
def launch_missing_constexpr(ctx: KernelContext) -> Iterator[Finding]:
    kernel = ctx.kernel
    if kernel.is_helper:
        return
    required = [p for p in kernel.params if p.is_constexpr and not p.has_default and p.kind == "positional"]
    if not required:
        return
    if kernel.autotune is None and _rebound_by_a_tuner(ctx):
        return  # `fn = triton.autotune(...)(fn)`: configs this model did not read
    if _unread_decorators(ctx):
        return  # heuristics from a helper, or a wrapper of unknown effect: what they provide is not known here
    provided = set(kernel.heuristics)
    if kernel.autotune is not None:
        if not kernel.autotune.configs_literal:
            return  # configs built elsewhere: what they set is not known from this file
        configs = [set(c.get("kwargs", {})) for c in kernel.autotune.configs]
        if configs:
            provided |= set.intersection(*configs)  # only what every config sets is always provided
    for launch in ctx.launches:
        if any(a.starred for a in (*launch.args, *launch.kwargs)):
            continue  # *args / **kwargs: the values are not visible here
        bound = launch.bind(kernel)
        missing = [p.name for p in required if p.name not in bound and p.name not in provided]
        grid = f"{launch.grid_text} {launch.grid_resolved_text or ''}"
        if any(f"'{n}'" in grid or f'"{n}"' in grid or _meta_reads(ctx, n) for n in missing):
            continue  # the grid reads META[name]: the author expects a tuner outside this file to supply it
        if not missing:
            continue
        names = ", ".join(f"`{n}`" for n in missing)
        message = f"this launch of {kernel.name} gives no value to the constexpr {names}: the launch fails"
        yield finding(MISSING_CONSTEXPR, ctx, launch.span, message, data={"missing": missing})


def _rebound_by_a_tuner(ctx: KernelContext) -> bool:
    """The module rebinds the kernel's name through autotune/heuristics after its def (`k = triton.autotune(..)(k)`)."""
    return ctx.kernel.name in _tuner_rebinds(ctx.module)


def _tuner_rebinds(module: ModuleInfo) -> frozenset[str]:
    """Names the file assigns from an autotune/heuristics call: computed once per file (once per top-level
    statement across keystrokes), not once per kernel: a walk per kernel made files of thousands of kernels
    quadratic."""
    key = ("triage.tuner_rebinds",)
    hit = module.memo.get(key)
    if hit is None:
        tree = module.tree
        hit = frozenset().union(*(per_node("triage.tuner_rebinds", stmt, _rebinds_in) for stmt in tree.body)) \
            if tree is not None else frozenset()
        module.memo[key] = hit
    return hit  # type: ignore[no-any-return]


_TUNERS = ("autotune", "heuristics")
_TOKEN_TYPES = frozenset((ast.Name, ast.Attribute, ast.keyword, ast.arg, ast.Constant))  # nodes with a token


def _rebinds_in(stmt: ast.AST) -> frozenset[str]:
    nodes = subtree(stmt)
    if not any(_names_a_tuner(node) for node in nodes if type(node) in _TOKEN_TYPES):
        return frozenset()  # nothing to unparse: unparsing every assignment of a file was most of this rule's cost
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign):
            text = ast.unparse(node.value)
            if "autotune" in text or "heuristics" in text:
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def _names_a_tuner(node: ast.AST) -> bool:
    """Whether this node's own token (a name, attribute, keyword, parameter or string) contains a tuner's name: an
    unparsed expression contains one only inside a single token, as the names are letters only."""
    if isinstance(node, ast.Name):
        word: object = node.id
    elif isinstance(node, ast.Attribute):
        word = node.attr
    elif isinstance(node, (ast.keyword, ast.arg)):
        word = node.arg
    elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        word = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
    else:
        return False
    return isinstance(word, str) and any(t in word for t in _TUNERS)


def _unread_decorators(ctx: KernelContext) -> bool:
    """A decorator other than triton.jit whose contribution the model did not read (a non-literal heuristics
    table, an autotune whose configs are built elsewhere, a library wrapper)."""
    for deco in ctx.kernel.decorators:
        text = ast.unparse(deco)
        if text.split("(", 1)[0].rsplit(".", 1)[-1] == "jit":
            continue
        if "heuristics" in text and ctx.kernel.heuristics:
            continue
        if "autotune" in text and ctx.kernel.autotune is not None:
            continue
        return True
    return False


def _meta_reads(ctx: KernelContext, name: str) -> bool:
    """Some grid of the file reads `meta["NAME"]`: the author expects the value to come from a tuner."""
    source = ctx.module.source
    return f"['{name}']" in source or f'["{name}"]' in source
