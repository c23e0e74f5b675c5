"""Writing a recipe's rewrite: expression text (parenthesised, with a name substituted, a usable block size),
an argument appended to a call, a mask and-ed into a memory access, and what a new kernel parameter needs at the
launch sites (every site known, the module the launch code names)."""

from __future__ import annotations

import ast

from ..kernels import LaunchSite
from .kernel_patterns import grid_node
from .recipe_kit import Decline, KernelSource
from .source_edit import Edit


def block_size_text(ks: KernelSource, size: str) -> str:
    """`size` when it can be used anywhere in the kernel (a constexpr parameter or an int literal)."""
    if size.isdigit() or any(p.name == size and p.is_constexpr for p in ks.info.params):
        return size
    raise Decline(f"the block size {size} is not a constexpr parameter or a literal")


def paren(text: str) -> str:
    """Parenthesise an expression's text unless it is a name, call or subscript."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return f"({text})"
    return text if isinstance(node, ast.Name | ast.Call | ast.Subscript | ast.Constant | ast.Attribute) else f"({text})"


def substitute(ks: KernelSource, node: ast.AST, name: str, new: str) -> str:
    """The source text of `node` with every Name `name` inside it replaced by `new`."""
    return substitute_all(ks, node, {name: new})


def substitute_all(ks: KernelSource, node: ast.AST, texts: dict[str, str]) -> str:
    """The source text of `node` (the user's spelling kept) with every Name that is a key of `texts` replaced by
    its text."""
    start = ks.text.start(node)
    text = ks.segment(node)
    spans = sorted(
        (ks.text.start(n) - start, ks.text.end(n) - start, texts[n.id])
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and n.id in texts
    )
    for lo, hi, new in reversed(spans):
        text = text[:lo] + new + text[hi:]
    return text


def append_argument(ks: KernelSource, call: ast.Call, text: str) -> Edit:
    """An edit adding `text` (e.g. `num_warps=8`) as the call's last argument, trailing comma or not. After a
    trailing comma (or none argument) the text keeps one of its own, so a second argument appended at the same
    place by another edit still parses (`..., num_stages=3, GROUP_M=8, ws=ws)`)."""
    close = ks.text.end(call) - 1
    before = ks.text.source[:close].rstrip()
    if before.endswith("("):
        return Edit(close, close, f"{text},")
    if before.endswith(","):
        return Edit(close, close, f" {text},")
    return Edit(close, close, f", {text}")


def and_mask(ks: KernelSource, call: ast.Call, extra: str) -> Edit:
    """The tl.load / tl.store / tl.atomic_* call with `extra` and-ed into its mask (or added as the mask)."""
    index = 1 if ks.tl_call(call) == "load" else 2
    mask = call.args[index] if len(call.args) > index else None
    mask = mask or next((k.value for k in call.keywords if k.arg == "mask"), None)
    if mask is not None:
        return ks.text.replace(mask, f"({ks.segment(mask)}) & {extra}")
    if len(call.args) > index:
        raise Decline(f"line {call.lineno}: unexpected positional arguments")
    return append_argument(ks, call, f"mask={extra}")


def imported_as(ks: KernelSource, module: str) -> str:
    """The name under which the file imports `module` (`import torch as th` -> "th")."""
    for node in ast.walk(ks.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == module:
                    return alias.asname or module
    raise Decline(f"the file does not `import {module}` (the rewritten launch needs it)")


def launches_for_new_parameter(ks: KernelSource) -> list[LaunchSite]:
    """The kernel's launch sites, when a parameter can be appended to it: none defaulted, keyword-only or
    variadic (the new last parameter is then passed by keyword at every launch in the file)."""
    args = ks.fn.args
    if args.defaults or args.kw_defaults or args.vararg or args.kwarg or args.kwonlyargs:
        raise Decline("the kernel has defaulted, keyword-only or variadic parameters")
    sites = ks.launches()
    if not sites:
        raise Decline("no launch of the kernel in this file")
    return sites


def launch_grids(ks: KernelSource) -> list[tuple[ast.Call, ast.AST]]:
    """(launch call, its grid expression) at every launch of the kernel, when a parameter can be appended to it
    (`launches_for_new_parameter`): what a recipe that launches more work per program rewrites."""
    return [(call, grid_node(ks, call)) for call in (ks.node_at(site) for site in launches_for_new_parameter(ks))]
