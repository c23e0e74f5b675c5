"""The jit functions of a file as specialization reads them, derived from the shared kernel model
(`analysis.kernels`, parsed once per text): parameters, constexprs, defaults, autotune configs, heuristics,
`do_not_specialize` and the kernel's `# tritonlens:` pragma. Built once per parse and kept in the model's memo.

Values are read with `safe_eval` (never `eval`); a dtype attribute (`tl.float16`) reads as its name.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.findings import Span
from ..kernels import KernelInfo, ModuleInfo, parse_module
from ..kernels.config_lists import read_configs
from ..source.lines import source_lines
from ..source.safe_eval import UNKNOWN, evaluate
from .pragmas import DTYPE_VALUE_RE, Pragma, comment_lines, pragma_for
from .scope import CallIndex, index_calls, module_scope
from .variant import OPTION_NAMES


@dataclass
class SpecKernel:
    """One `@triton.jit` function as specialization sees it (a view of its `KernelInfo`)."""

    info: KernelInfo
    node: ast.FunctionDef | ast.AsyncFunctionDef
    param_names: list[str]  # positional parameters, in order (what a launch binds)
    constexpr: set[str]
    defaults: dict[str, ast.expr]
    configs: list[tuple[int, dict[str, Any], dict[str, Any]]]  # (line, kwargs, options) per triton.Config
    configs_unreadable: bool
    heuristics: dict[str, tuple[ast.Lambda, int]]  # param -> (lambda, line)
    do_not_specialize: set[str]
    pragma: Pragma
    module_env: Mapping[str, ast.expr] = field(default_factory=dict)  # module-level bindings it can read
    module_functions: Mapping[str, ast.FunctionDef] = field(default_factory=dict)  # module-level defs

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def first_line(self) -> int:
        """The first decorator line (or the def's, for the `fn = triton.jit(fn)` form)."""
        return self.info.span.line

    @property
    def name_span(self) -> Span:
        return self.info.name_span


@dataclass
class KernelTable:
    tree: ast.Module | None
    source: str
    kernels: dict[str, SpecKernel] = field(default_factory=dict)
    error: str | None = None
    _calls: CallIndex | None = None

    @property
    def calls(self) -> CallIndex:
        """Launch sites and calls of the whole module, indexed once (shared by every kernel)."""
        if self._calls is None:
            assert self.tree is not None
            self._calls = index_calls(self.tree)
        return self._calls


_MEMO_KEY = ("specialization.kernel_table",)


def kernel_table(module: ModuleInfo | str) -> KernelTable:
    """The jit functions of `module` (the kernel model, or text parsed through `parse_module`), built once per
    parse: every caller of the same document version shares it."""
    if isinstance(module, str):
        module = parse_module(module)
    table = module.memo.get(_MEMO_KEY)
    if table is None:
        table = module.memo[_MEMO_KEY] = _table(module)
    return table  # type: ignore[no-any-return]


def _table(module: ModuleInfo) -> KernelTable:
    error = module.syntax_error
    if error is not None or module.tree is None:
        where = f"{error.message} (line {error.line})" if error is not None else "no syntax tree"
        return KernelTable(None, module.source, error=f"the file does not parse: {where}")
    tree = module.tree
    table = KernelTable(tree, module.source)
    if not module.functions:
        return table
    module_env = module_scope(tree).bindings
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    comments = comment_lines(module.source)
    lines = source_lines(module.source)
    top_level = {id(n) for n in tree.body}
    for info in module.functions:  # source order: the first of two same-named functions wins, except that a
        # later module-level def rebinds the name (what the module binds at import, and what the runner compiles)
        if info.name not in table.kernels or id(info.node) in top_level:
            pragma = pragma_for(comments, info.span.line, info.node.lineno, lines)
            table.kernels[info.name] = _kernel(info, module_env, functions, pragma, tree)
    return table


def _kernel(
    info: KernelInfo,
    module_env: Mapping[str, ast.expr],
    functions: Mapping[str, ast.FunctionDef],
    pragma: Pragma,
    tree: ast.Module | None = None,
) -> SpecKernel:
    node = info.node
    args = node.args
    params = [*args.posonlyargs, *args.args]
    names = [p.arg for p in params]
    defaults = dict(zip(names[len(params) - len(args.defaults) :], args.defaults, strict=True))
    constexpr = {
        p.name
        for p in info.params
        if p.kind == "positional" and (p.is_constexpr or "constexpr" in (p.annotation or ""))
    }
    configs: list[tuple[int, dict, dict]] = []
    unreadable = False
    heuristics: dict[str, tuple[ast.Lambda, int]] = {}
    dns: set[str] = set()
    for dec in info.decorators:
        kind = _decorator_kind(dec)
        if kind == "autotune" and isinstance(dec, ast.Call):
            configs, unreadable = _read_configs(dec, module_env, functions, tree)
        elif kind == "heuristics" and isinstance(dec, ast.Call):
            heuristics.update(_read_heuristics(dec))
        elif kind == "jit" and isinstance(dec, ast.Call):
            listed = literal_value(_keyword(dec, "do_not_specialize"))
            if isinstance(listed, (list, tuple)):
                dns |= {names[n] if isinstance(n, int) and n < len(names) else str(n) for n in listed}
    return SpecKernel(
        info=info,
        node=node,
        param_names=names,
        constexpr=constexpr,
        defaults=defaults,
        configs=configs,
        configs_unreadable=unreadable,
        heuristics=heuristics,
        do_not_specialize=dns,
        pragma=pragma,
        module_env=module_env,
        module_functions=functions,
    )


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _decorator_kind(dec: ast.expr) -> str:
    last = _dotted(dec).rsplit(".", 1)[-1]
    return last if last in ("jit", "autotune", "heuristics") else ""


def literal_value(node: ast.expr | None) -> Any:
    if node is None:
        return UNKNOWN
    value = evaluate(node, {})
    if value is UNKNOWN and isinstance(node, ast.Attribute):
        text = ast.unparse(node)
        if DTYPE_VALUE_RE.match(text):  # `OUT_DTYPE: tl.constexpr = tl.float16`, a dtype in a Config
            return "tl." + node.attr
    return value


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _config_list(
    node: ast.expr | None,
    module_env: Mapping[str, ast.expr],
    functions: Mapping[str, ast.FunctionDef],
    depth: int,
) -> ast.expr | None:
    """The literal list behind `configs=`: a module-level name, or a module function without arguments
    that returns one (`configs=get_autotune_config()`, as in the Triton tutorials; its first return)."""
    if depth > 4 or node is None:
        return node
    if isinstance(node, ast.Name) and node.id in module_env:
        return _config_list(module_env[node.id], module_env, functions, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args and not node.keywords:
        fn = functions.get(node.func.id)
        returns = (
            sorted((r for r in ast.walk(fn) if isinstance(r, ast.Return)), key=lambda r: r.lineno)
            if fn
            else []
        )
        for ret in returns:  # the first return, in source order, that gives a non-empty list
            got = _config_list(ret.value, module_env, functions, depth + 1)
            if isinstance(got, (ast.List, ast.Tuple)) and got.elts:
                return got
    return node


def _read_configs(
    dec: ast.Call,
    module_env: Mapping[str, ast.expr],
    functions: Mapping[str, ast.FunctionDef] | None = None,
    tree: ast.Module | None = None,
) -> tuple[list[tuple[int, dict, dict]], bool]:
    functions = functions or {}
    given = _keyword(dec, "configs") or (dec.args[0] if dec.args else None)
    node = _config_list(given, module_env, functions, 0)
    if not isinstance(node, (ast.List, ast.Tuple)) and given is not None:
        # built by the file (a comprehension or an appending loop over literal lists): read statically
        built = read_configs(given, tree)
        if built:
            line = _config_line(given, functions)
            return [(line, kwargs, options) for kwargs, options in built], False
    if not isinstance(node, (ast.List, ast.Tuple)):
        return [], node is not None
    configs: list[tuple[int, dict, dict]] = []
    unreadable = False
    for item in node.elts:
        if not (isinstance(item, ast.Call) and _dotted(item).endswith("Config")):
            unreadable = True
            continue
        raw = item.args[0] if item.args else _keyword(item, "kwargs")
        kwargs: dict[str, Any] = {}
        if isinstance(raw, ast.Dict):
            for k, v in zip(raw.keys, raw.values, strict=True):
                key, value = literal_value(k), literal_value(v)
                if isinstance(key, str) and value is not UNKNOWN:
                    kwargs[key] = value
        elif isinstance(raw, ast.Call) and _dotted(raw) == "dict":
            kwargs = {
                kw.arg: literal_value(kw.value)
                for kw in raw.keywords
                if kw.arg and literal_value(kw.value) is not UNKNOWN
            }
        options = {
            kw.arg: literal_value(kw.value)
            for kw in item.keywords
            if kw.arg in OPTION_NAMES and literal_value(kw.value) is not UNKNOWN
        }
        configs.append((item.lineno, kwargs, options))
    return configs, unreadable


def _config_line(node: ast.expr, functions: Mapping[str, ast.FunctionDef]) -> int:
    """The line of the `triton.Config(...)` a built list comes from (its helper's first), else the argument's."""
    where: ast.AST = node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
        where = functions[node.func.id]
    calls = [c for c in ast.walk(where) if isinstance(c, ast.Call) and _dotted(c).endswith("Config")]
    return min((c.lineno for c in calls), default=node.lineno)


def _read_heuristics(dec: ast.Call) -> dict[str, tuple[ast.Lambda, int]]:
    node = _keyword(dec, "values") or (dec.args[0] if dec.args else None)
    out: dict[str, tuple[ast.Lambda, int]] = {}
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            key = literal_value(k)
            if isinstance(key, str) and isinstance(v, ast.Lambda):
                out[key] = (v, v.lineno)
    return out
