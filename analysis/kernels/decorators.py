"""Decorators of a jit function: `@triton.jit(...)` arguments, `@triton.autotune(configs=..., key=...)` with its
literal `triton.Config`s, `@triton.heuristics({...})`, and the call forms `fn = triton.jit(fn)` read as decorators.

`DecoratorReader` is a part of the collector (collection.py): it reads `lines`, `module_assigns` and `resolve`."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.findings import Span
from ..source.chunks import Chunk
from ..source.lines import SourceText
from .expressions import AUTOTUNE, CONFIG, HEURISTICS, JIT, literal
from .model import AutotuneInfo

# Positional order of triton.Config(kwargs, num_warps, num_stages, num_ctas, maxnreg, pre_hook).
_CONFIG_POSITIONAL = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook")


@dataclass
class Decorators:
    is_jit: bool = False
    jit_kwargs: dict[str, Any] = field(default_factory=dict)
    autotune: AutotuneInfo | None = None
    heuristics: dict[str, str] = field(default_factory=dict)
    nodes: tuple[ast.expr, ...] = ()  # the decorator expressions read, call-form wrappers included


def call_form_wrappers(stmts: list[ast.stmt]) -> dict[str, list[ast.expr]]:
    """For `x = A(B(f))` / a bare `A(B(f))` among `stmts` (and under their `if`/`try` blocks): f -> [A, B],
    the wrapping callables outermost first, as a decorator list reads. Callers decide which chains are jit."""
    out: dict[str, list[ast.expr]] = {}
    stack: list[ast.stmt] = list(stmts)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.If, ast.Try)):
            for name in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(stmt, name, []) or []:
                    stack.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
            continue
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr, ast.AnnAssign)) else None
        chain: list[ast.expr] = []
        while isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
            chain.append(value.func)
            value = value.args[0]
        if chain and isinstance(value, ast.Name):
            out[value.id] = chain
    return out


class DecoratorReader:
    """The collector's decorator reading (mixed into collection.Collector)."""

    source: str
    lines: SourceText
    module_assigns: dict[str, ast.AST]
    resolve: Callable[[ast.AST], str | None]

    def _call_form_jits(self, tops: list[tuple[ast.stmt, Chunk]]) -> dict[str, list[ast.expr]]:
        """def name -> the calls wrapping it (outermost first) in `x = triton.jit(f)`-style statements, and in
        `x = triton.autotune(...)(x)` ones."""
        if "jit(" not in self.source and "autotune(" not in self.source:  # the common case: one text search
            return {}
        chains = call_form_wrappers([stmt for stmt, _ in tops])
        # jit itself, or autotune/heuristics applied later to a `@triton.jit` def (callers check it is jit)
        wrappers = (JIT, AUTOTUNE, HEURISTICS)
        return {
            name: chain
            for name, chain in chains.items()
            if any(self.resolve(d.func if isinstance(d, ast.Call) else d) in wrappers for d in chain)
        }

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Decorators:
        return self._decorators_of(node.decorator_list)

    def _decorators_of(self, decorator_list: list[ast.expr]) -> Decorators:
        out = Decorators(nodes=tuple(decorator_list))
        for deco in decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            name = self.resolve(target)
            if name == JIT:
                out.is_jit = True
                if isinstance(deco, ast.Call):
                    for kw in deco.keywords:
                        if kw.arg:
                            ok, value = literal(kw.value)
                            out.jit_kwargs[kw.arg] = value if ok else self.lines.text(kw.value)
            elif name == AUTOTUNE and isinstance(deco, ast.Call):
                out.autotune = self._autotune(deco)
            elif name == HEURISTICS and isinstance(deco, ast.Call):
                out.heuristics.update(self._heuristics(deco))
        return out

    def _autotune(self, call: ast.Call) -> AutotuneInfo:
        args = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        # autotune(configs, key, ...) positionally
        for pos, name in enumerate(("configs", "key")):
            if pos < len(call.args) and name not in args:
                args[name] = call.args[pos]
        configs_node = args.get("configs")
        if isinstance(configs_node, ast.Name) and configs_node.id in self.module_assigns:
            configs_node = self.module_assigns[configs_node.id]
        configs: list[dict[str, Any]] = []
        spans: list[Span] = []
        complete = isinstance(configs_node, (ast.List, ast.Tuple))
        if isinstance(configs_node, (ast.List, ast.Tuple)):
            for element in configs_node.elts:
                config = self._config(element)
                if config is None:
                    complete = False
                    continue
                configs.append(config)
                spans.append(self.lines.span(element))
        key_node = args.get("key")
        if isinstance(key_node, ast.Name) and key_node.id in self.module_assigns:
            key_node = self.module_assigns[key_node.id]
        key: tuple[str, ...] = ()
        if isinstance(key_node, (ast.List, ast.Tuple)):
            key = tuple(
                e.value for e in key_node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
        options = {k: self.lines.text(v) for k, v in args.items() if k not in ("configs", "key")}
        return AutotuneInfo(
            configs=tuple(configs),
            config_spans=tuple(spans),
            key=key,
            configs_literal=complete,
            configs_text=self.lines.text(args["configs"]) if "configs" in args else "",
            options=options,
            span=self.lines.span(call),
        )

    def _config(self, node: ast.AST) -> dict[str, Any] | None:
        if not isinstance(node, ast.Call) or self.resolve(node.func) != CONFIG:
            return None
        out: dict[str, Any] = {}
        for pos, arg in enumerate(node.args[: len(_CONFIG_POSITIONAL)]):
            out[_CONFIG_POSITIONAL[pos]] = self._value(arg)
        for kw in node.keywords:
            if kw.arg:
                out[kw.arg] = self._value(kw.value)
        if not isinstance(out.get("kwargs", {}), dict):
            out["kwargs_text"] = out.pop("kwargs")
        out.setdefault("kwargs", {})
        return out

    def _value(self, node: ast.AST) -> Any:
        ok, value = literal(node)
        if ok:
            return value
        if isinstance(node, ast.Dict):
            # Keep the literal entries of a partly computed dict.
            return {
                k.value: (v if ok_v else self.lines.text(vn))
                for k, vn in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)
                for ok_v, v in [literal(vn)]
            }
        return self.lines.text(node)

    def _heuristics(self, call: ast.Call) -> dict[str, str]:
        values = (
            call.args[0]
            if call.args
            else next((kw.value for kw in call.keywords if kw.arg == "values"), None)
        )
        if not isinstance(values, ast.Dict):
            return {}
        return {
            k.value: self.lines.text(v)
            for k, v in zip(values.keys, values.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }
