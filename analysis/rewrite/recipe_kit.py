"""What every recipe needs: the kernel's own AST (a private parse), `tl.*` name resolution, and a checked result.

A recipe recognises its pattern on `KernelSource` (helpers in `kernel_patterns.py`), builds `Edit`s (helpers in
`recipe_edits.py`, primitives in `source_edit.py`), and calls `finish`, which applies them, checks that the new file
still parses and still defines the kernel, and wraps it in a `Candidate` tied to the findings that motivated it.
Anything not exactly the pattern is a `NotApplicable` with the reason: never half an edit.
"""

from __future__ import annotations

import ast

from ..kernels import LaunchSite
from .model import Candidate, NotApplicable, RecipeContext
from .source_edit import Edit, SourceText, apply_edits

TL = "triton.language."


class Decline(Exception):
    """Raised inside a recipe when the code is not exactly its pattern; turned into NotApplicable."""


class KernelSource:
    def __init__(self, ctx: RecipeContext) -> None:
        self.ctx = ctx
        self.text = SourceText(ctx.source)
        try:
            self.tree = ast.parse(ctx.source)
        except SyntaxError as exc:
            raise Decline(f"the file does not parse (line {exc.lineno})") from None
        self.aliases = ctx.module.aliases
        info = ctx.module.kernel(ctx.kernel)
        if info is None:
            raise Decline(f"no jit function named {ctx.kernel} in this file")
        self.info = info
        self.fn = next(
            (
                n
                for n in ast.walk(self.tree)
                if isinstance(n, ast.FunctionDef) and n.name == ctx.kernel and n.lineno == info.def_span.line
            ),
            None,
        )
        if self.fn is None:
            raise Decline(f"cannot locate {ctx.kernel} in the file")
        self.tl_alias = ctx.module.language_alias
        self._parents: dict[int, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self._parents[id(child)] = node

    # names ------------------------------------------------------------------------------------------------
    def resolve(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])

    def tl_call(self, node: ast.AST | None) -> str | None:
        """"sum" for `tl.sum(...)` (any alias of triton.language, tl.math included), else None."""
        if not isinstance(node, ast.Call):
            return None
        name = self.resolve(node.func)
        if name and name.startswith(TL):
            return name[len(TL) :].removeprefix("math.")
        return None

    def is_tl(self, node: ast.AST | None, *names: str) -> bool:
        return self.tl_call(node) in names

    def tl(self, attr: str) -> str:
        """Source text that names triton.language.<attr> in this file."""
        return f"{self.tl_alias}.{attr}"

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(id(node))

    def fresh(self, base: str) -> str:
        used = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)}
        used |= {a.arg for a in ast.walk(self.tree) if isinstance(a, ast.arg)}
        name, i = base, 1
        while name in used:
            i += 1
            name = f"{base}{i}"
        return name

    def launches(self) -> list[LaunchSite]:
        sites = self.ctx.module.launches_of(self.ctx.kernel)
        shared = next((s for s in sites if len(s.shared_by) > 1), None)
        if shared is not None:  # its grid and arguments also feed the other kernels: an edit would change them
            raise Decline(f"the launch at line {shared.span.line} runs `{shared.through}`, one of "
                          f"{', '.join(shared.shared_by)}: rewriting it would change the others too")
        return sites

    def node_at(self, site: LaunchSite) -> ast.Call:
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Call)
                and node.lineno == site.node.lineno
                and node.col_offset == site.node.col_offset
            ):
                return node
        raise Decline("cannot locate the launch site")

    def enclosing_statement(self, node: ast.AST) -> ast.stmt:
        while not isinstance(node, ast.stmt):
            node = self.parent(node)
            if node is None:
                raise Decline("expression outside a statement")
        return node

    def segment(self, node: ast.AST) -> str:
        if not hasattr(node, "lineno"):  # synthesised (e.g. the implicit 0 of `range(n)`)
            return ast.unparse(node)
        return self.text.text(node)


def finish(
    recipe: object,
    ctx: RecipeContext,
    edits: list[Edit],
    title: str,
    rationale: str,
    *,
    config: dict | None = None,
) -> Candidate:
    """Apply the edits and check the result; raises Decline when the rewrite would not be valid Python."""
    if not edits:
        raise Decline("nothing to change")
    try:
        new_source = apply_edits(ctx.source, edits)
    except ValueError as exc:  # overlapping edits: a recipe bug must decline, never half-apply
        raise Decline(f"the rewrite's edits conflict ({exc})") from None
    try:
        tree = ast.parse(new_source)
    except SyntaxError as exc:  # a bug in the recipe must never reach the user
        raise Decline(f"the rewrite would not parse ({exc.msg}, line {exc.lineno})") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == ctx.kernel for n in ast.walk(tree)):
        raise Decline("the rewrite lost the kernel")
    keys = set(recipe.keys)
    matched = [f for f in ctx.findings if f.code in keys and f.kernel in (ctx.kernel, None)]
    evidence = tuple(sorted({f.code for f in matched}))
    level = max((int(f.level) for f in matched), default=1)
    return Candidate(
        source=new_source,
        origin="recipe",
        producer=recipe.name,
        kernel=ctx.kernel,
        title=title,
        rationale=rationale,
        evidence=evidence,
        level=level,
        config=dict(config or {}),
    )


class SourceRecipe:
    """A recipe whose `build(recipe, ks)` returns candidates or raises Decline (one module defines one)."""

    def __init__(self, name: str, title: str, keys: tuple[str, ...], build: callable, summary: str = "") -> None:
        self.name = name
        self.title = title
        self.keys = keys
        self.summary = summary
        self._build = build

    def propose(self, ctx: RecipeContext) -> list[Candidate] | NotApplicable:
        try:
            candidates = self._build(self, KernelSource(ctx))
        except Decline as exc:
            return NotApplicable(self.name, str(exc))
        if not candidates:
            return NotApplicable(self.name, "the pattern was not found")
        return candidates

    def __repr__(self) -> str:
        return f"<recipe {self.name}>"
