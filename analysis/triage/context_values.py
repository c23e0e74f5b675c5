"""Values given to a kernel parameter, for `KernelContext`: literal defaults, launch keywords, autotune configs
and heuristics (`ValueSite`), the `tl.arange` sizes of the function and the parameters that size blocks."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..core.findings import Span
from ..kernels import LaunchSite, literal
from .context_names import TL, bare_names, is_number


@dataclass(frozen=True)
class ValueSite:
    """A literal value given to a kernel parameter somewhere: a default, a launch keyword, an autotune config."""

    value: Any
    span: Span
    origin: str  # "default" | "launch" | "autotune" | "heuristics"


class ValueFacts:
    """Part of `context.KernelContext` (its fields and caches are the context's)."""

    def value_sites(self, param: str) -> list[ValueSite]:
        """Literal values this parameter receives in the file: default, launch keywords/positions, autotune."""
        key = f"value_sites:{param}"
        cached = self.memo.get(key)
        if cached is None:
            cached = self._value_sites(param)
            self.memo[key] = cached
        return cached

    def _value_sites(self, param: str) -> list[ValueSite]:
        sites: list[ValueSite] = []
        p = self.params.get(param)
        if p is not None and p.has_default and p.default_span is not None and is_number(p.default):
            sites.append(ValueSite(p.default, p.default_span, "default"))
        for launch in self.launches:
            arg = self._bound(launch).get(param)
            if arg is not None and arg.has_literal and is_number(arg.value):
                sites.append(ValueSite(arg.value, arg.span, "launch"))
        if self.kernel.autotune is not None:
            for config_node in self._config_kwarg_nodes(param):
                ok, value = literal(config_node)
                if ok and is_number(value):
                    sites.append(ValueSite(value, self.span(config_node), "autotune"))
        return sites

    def _bound(self, launch: LaunchSite) -> dict[str, Any]:
        bound = self._bindings.get(id(launch))
        if bound is None:
            bound = launch.bind(self.kernel)
            self._bindings[id(launch)] = bound
        return bound

    @cached_property
    def _bindings(self) -> dict[int, dict[str, Any]]:
        return {}

    def _config_kwarg_nodes(self, param: str) -> Iterable[ast.AST]:
        """Value nodes for `param` inside the autotune configs' kwargs dicts."""
        for deco in self.kernel.node.decorator_list:
            if not isinstance(deco, ast.Call) or self.resolve(deco.func) != "triton.autotune":
                continue
            for sub in self.walk(deco):
                if isinstance(sub, ast.Call) and self.resolve(sub.func) == "triton.Config":
                    kwargs = (
                        sub.args[0]
                        if sub.args
                        else next((k.value for k in sub.keywords if k.arg == "kwargs"), None)
                    )
                    if isinstance(kwargs, ast.Dict):
                        for key, value in zip(kwargs.keys, kwargs.values, strict=True):
                            if isinstance(key, ast.Constant) and key.value == param:
                                yield value

    @cached_property
    def arange_sizes(self) -> list[tuple[ast.Call, ast.AST]]:
        """(arange call, its end expression) for every `tl.arange(start, end)` in this function."""
        out = []
        for call in self.calls_to(TL + "arange"):
            end = (
                call.args[1]
                if len(call.args) >= 2
                else next((k.value for k in call.keywords if k.arg == "end"), None)
            )
            if end is not None:
                out.append((call, end))
        return out

    @cached_property
    def block_size_params(self) -> set[str]:
        """Parameters used as the size of a block: `tl.arange(0, P)`, or in the shape of tl.zeros/tl.full."""
        params = set(self.params)
        out: set[str] = set()
        for _, end in self.arange_sizes:
            out.update(n for n in bare_names(end) if n in params)
        for call in self.calls_to(TL + "zeros", TL + "full"):
            shape = (
                call.args[0]
                if call.args
                else next((k.value for k in call.keywords if k.arg == "shape"), None)
            )
            if shape is not None:
                out.update(n for n in bare_names(shape) if n in params)
        return out
