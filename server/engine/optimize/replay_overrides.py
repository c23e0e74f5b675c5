"""Launch-site overrides for replay: a candidate that changes only the knobs a launch site passes can still be
verified by replaying the recorded launches.

Replay launches each kernel with its recorded arguments, grid and options. A candidate that differs from the
original outside the kernels' bodies ONLY in the constexpr arguments and launch options (num_warps, num_stages,
...) given at a launch site, and in that site's grid, is replayed with those values overridden: the candidate's
constexprs/options replace the recorded ones, and a changed grid is recomputed by evaluating the candidate's grid
expression (analysis/source/safe_eval.py: no call into user code) with the recorded values of the kernel arguments the
site passes by name, and the candidate's constexprs. Anything else (wrapper logic, a changed non-constexpr
argument, a new argument, a signature, a grid built from values replay does not know) is refused with the reason.
"""

from __future__ import annotations

import ast
import copy
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ....analysis.source.safe_eval import UNKNOWN, call_name, evaluate
from .replay_sources import SourceChange, apply_source_change, blank, source_change, source_knobs

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "multibuffer", "enable_fp_fusion")
_HOLE = "__tritonlens_knob__"


@dataclass
class Site:
    """One launch `kernel[grid](...)`: the kernel's name, its arguments by parameter name, its options."""

    kernel: str
    grid: ast.expr
    args: dict[str, ast.expr] = field(default_factory=dict)
    options: dict[str, ast.expr] = field(default_factory=dict)


@dataclass
class Override:
    """What replaces the recorded values of every launch of `kernel` (the worker applies it to the candidate)."""

    kernel: str
    constexprs: dict[str, ast.expr]  # evaluated per launch: `triton.next_power_of_2(n_cols)` reads its n_cols
    options: dict[str, ast.expr]
    grid: ast.expr | None  # the candidate's grid expression where it changed, else None (the recorded grid)
    arg_names: dict[str, str]  # a name used at the site -> the kernel parameter it is passed as
    # a `lambda META: ...` grid (the candidate's, and the original's): recomputed from the candidate's values
    # whenever a constexpr changes, since the recorded grid was computed from the old ones
    grid_lambda: ast.Lambda | None = None
    recorded_lambda: ast.Lambda | None = None
    source: SourceChange | None = None  # constexprs the kernel's own source gives (defaults, configs, heuristics)
    # the site's grid is a name replay cannot read (a parameter, a callable it does not understand): the recorded
    # grid may have been computed from the constexprs, so a candidate that moves one is refused, never launched on
    # the old grid (a block move of a matmul on a stale META grid read out of bounds)
    grid_opaque: str | None = None

    def key(self) -> str:
        """Equal for two sites whose overrides compute the same values (the wrapper's own names for the
        arguments may differ: only those the expressions read count)."""
        exprs = [*self.constexprs.values(), *self.options.values(), *([self.grid] if self.grid else [])]
        used: set[str] = set().union(*(_free_names(e) for e in exprs))
        return repr(([(k, ast.dump(v)) for k, v in sorted({**self.constexprs, **self.options}.items())],
                     self.grid and ast.dump(self.grid), sorted((k, v) for k, v in self.arg_names.items() if k in used)))


def _kernels(tree: ast.Module) -> dict[str, tuple[list[str], set[str]]]:
    """Each jitted kernel's parameter names and which of them are constexpr."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
            k in ast.unparse(d) for d in node.decorator_list for k in ("jit", "autotune", "heuristics")
        ):
            params = [a.arg for a in node.args.posonlyargs + node.args.args]
            const = {a.arg for a in node.args.posonlyargs + node.args.args
                     if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
            out[node.name] = (params, const)
    return out


def _sites(tree: ast.AST, kernels: dict[str, tuple[list[str], set[str]]]) -> list[tuple[ast.Call, Site]]:
    sites = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in kernels):
            params, const = kernels[node.func.value.id]
            site = Site(node.func.value.id, node.func.slice)
            for name, arg in zip(params, node.args, strict=False):
                site.args[name] = arg
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                (site.options if kw.arg in LAUNCH_OPTIONS and kw.arg not in params else site.args)[kw.arg] = kw.value
            sites.append((node, site))
    return sites


def _knobs(site: Site, const: set[str]) -> list[ast.expr]:
    """The expressions of a launch that replay can override: its grid, constexpr arguments and options."""
    return [site.grid, *(v for k, v in site.args.items() if k in const), *site.options.values()]


def _knob_locals(func: ast.AST, knobs: list[ast.expr]) -> dict[str, ast.Assign]:
    """Locals of `func` bound once by `NAME = expr` and read only by a launch's knobs or by other such locals
    (`BLOCK = 64`, `grid = (triton.cdiv(n, BLOCK),)`): a new value there changes nothing but the knobs."""
    stores = Counter(n.id for n in ast.walk(func) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    params = {a.arg for a in ast.walk(func) if isinstance(a, ast.arg)}
    chosen = {
        s.targets[0].id: s for s in ast.walk(func)
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        and stores[s.targets[0].id] == 1 and s.targets[0].id not in params
    }
    knob_ids = {id(n) for k in knobs for n in ast.walk(k)}
    while True:
        inside = knob_ids | {id(n) for a in chosen.values() for n in ast.walk(a.value)}
        drop = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                and n.id in chosen and id(n) not in inside}
        if not drop:
            return chosen
        for name in drop:
            del chosen[name]


def _scopes(
    tree: ast.Module, kernels: dict[str, tuple[list[str], set[str]]]
) -> list[tuple[ast.Call, Site, dict[str, ast.Assign]]]:
    """Every launch site with the knob locals of the function that makes it (none at module level)."""
    out, claimed = [], set()
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and not (n in tree.body and n.name in kernels)]
    for scope in [*funcs, tree]:
        sites = [(c, s) for c, s in _sites(scope, kernels) if id(c) not in claimed]
        claimed |= {id(c) for c, _ in sites}
        knobs = [k for _, s in sites for k in _knobs(s, kernels[s.kernel][1])]
        local = _knob_locals(scope, knobs) if sites and scope is not tree else {}
        out.extend((c, s, local) for c, s in sites)
    return out


def _inline(node: ast.expr, local: dict[str, ast.Assign], depth: int = 0) -> ast.expr:
    """`node` with each knob local replaced by the expression it was assigned (a few levels deep)."""

    class Inline(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            if isinstance(n.ctx, ast.Load) and n.id in local and depth < 8:
                return _inline(local[n.id].value, local, depth + 1)
            return n

    return Inline().visit(copy.deepcopy(node))


def _without_knobs(tree: ast.Module, kernels: dict[str, tuple[list[str], set[str]]]) -> str:
    """The module with every launch site's grid, constexpr arguments and options blanked, and the locals only
    they read (kernel bodies too)."""
    tree = copy.deepcopy(tree)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in kernels:
            node.body = [ast.Pass()]
            blank(node, kernels[node.name][1], tree)  # defaults, literal autotune configs, heuristics: replayed too
    for call, site, local in _scopes(tree, kernels):
        params, const = kernels[site.kernel]
        for assign in local.values():
            assign.value = ast.Name(_HOLE)
        call.func.slice = ast.Name(_HOLE)
        call.args = [ast.Name(_HOLE) if i < len(params) and params[i] in const else a for i, a in enumerate(call.args)]
        call.keywords = sorted(
            (kw for kw in call.keywords if not (kw.arg in const or (kw.arg in LAUNCH_OPTIONS and kw.arg not in params))),
            key=lambda kw: kw.arg or "",
        )
    return ast.dump(tree, include_attributes=False)


def _resolved(site: Site, const: set[str], local: dict[str, ast.Assign]) -> Site:
    """The site with its knobs' locals inlined, so a block size moved in `BLOCK = 64` shows at the launch."""
    return Site(site.kernel, _inline(site.grid, local),
                {k: _inline(v, local) if k in const else v for k, v in site.args.items()},
                {k: _inline(v, local) for k, v in site.options.items()})


def launch_overrides(before: str, after: str) -> tuple[list[Override], str | None]:
    """The overrides that make replaying `before`'s recorded launches test `after`, or ([], why not).

    ([], None) when nothing outside the kernels' bodies changed at any launch site."""
    try:
        old, new = ast.parse(before), ast.parse(after)
    except SyntaxError:
        return [], None  # the gate's own syntax check reports it
    kernels = _kernels(old)
    if kernels != _kernels(new) or _without_knobs(old, kernels) != _without_knobs(new, kernels):
        return [], "it changes code outside the kernels' bodies other than a launch site's constexprs, options or grid"
    per_kernel: dict[str, Override] = {}
    lambdas: dict[str, tuple[ast.Lambda | None, ast.Lambda | None, dict[str, str]]] = {}
    opaque: dict[str, str] = {}
    passed: dict[str, set[str]] = {}
    grids_old, grids_new = _grid_functions(old), _grid_functions(new)
    for (_, a, la), (_, b, lb) in zip(_scopes(old, kernels), _scopes(new, kernels), strict=True):
        const = kernels[a.kernel][1]
        a, b = _resolved(a, const, la), _resolved(b, const, lb)
        a.grid, b.grid = _as_lambda(a.grid, grids_old), _as_lambda(b.grid, grids_new)
        if isinstance(b.grid, ast.Name) or isinstance(b.grid, ast.Call) and not _tuple_like(b.grid):
            opaque[a.kernel] = ast.unparse(b.grid)
        passed.setdefault(a.kernel, set()).update(b.args)
        if isinstance(b.grid, ast.Lambda) or isinstance(a.grid, ast.Lambda):
            lambdas[a.kernel] = (
                b.grid if isinstance(b.grid, ast.Lambda) else None,
                a.grid if isinstance(a.grid, ast.Lambda) else None,
                {v.id: k for k, v in b.args.items() if isinstance(v, ast.Name)},
            )
        dump = lambda d: {k: ast.dump(v) for k, v in d.items()}  # noqa: E731
        if dump(a.args) == dump(b.args) and dump(a.options) == dump(b.options) and ast.dump(a.grid) == ast.dump(b.grid):
            if a.kernel in per_kernel:
                return [], f"{a.kernel} is launched from several sites and only some of them changed"
            per_kernel[a.kernel] = None  # type: ignore[assignment]
            continue
        if set(a.args) - set(b.args):
            removed = ", ".join(sorted(set(a.args) - set(b.args)))
            return [], f"it drops {a.kernel}'s argument(s) {removed} at the launch site"
        constexprs = {name: node for name, node in b.args.items()
                      if name in const and (name not in a.args or ast.dump(a.args[name]) != ast.dump(node))}
        # only what changed: an unchanged `num_warps=nw` keeps the recorded value, which the record holds
        # even where the wrapper computed `nw` from values it does not hold
        options = {name: node for name, node in b.options.items()
                   if name not in a.options or ast.dump(a.options[name]) != ast.dump(node)}
        grid = None if ast.dump(a.grid) == ast.dump(b.grid) else b.grid
        names = {v.id: k for k, v in b.args.items() if isinstance(v, ast.Name)}
        override = Override(a.kernel, constexprs, options, grid, names)
        if a.kernel in per_kernel and (per_kernel[a.kernel] is None or per_kernel[a.kernel].key() != override.key()):
            return [], f"{a.kernel} is launched from several sites with different values"
        per_kernel[a.kernel] = override
    functions = {n.name: n for n in old.body if isinstance(n, ast.FunctionDef) and n.name in kernels}
    for node in new.body:
        if not (isinstance(node, ast.FunctionDef) and node.name in functions):
            continue
        const = kernels[node.name][1]
        change = source_change(node.name, source_knobs(functions[node.name], const, old), source_knobs(node, const, new),
                               passed.get(node.name, set()))
        if change or (change.new_heuristics and per_kernel.get(node.name) is not None):
            if per_kernel.get(node.name) is None:
                names = lambdas.get(node.name, (None, None, {}))[2]
                per_kernel[node.name] = Override(node.name, {}, {}, None, names)
            per_kernel[node.name].source = change
    for name, (candidate, recorded, _) in lambdas.items():
        if per_kernel.get(name) is not None:
            per_kernel[name].grid_lambda, per_kernel[name].recorded_lambda = candidate, recorded
    for name, grid in opaque.items():
        if per_kernel.get(name) is not None:
            per_kernel[name].grid_opaque = grid
    return [o for o in per_kernel.values() if o is not None], None


def _grid_functions(tree: ast.Module) -> dict[str, ast.Lambda]:
    """Module-level `def grid(META): return (...)` as the lambda it is, so it is recomputed like one."""
    out = {}
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and len(node.args.args) == 1 and not node.decorator_list):
            continue
        body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            out[node.name] = ast.Lambda(args=node.args, body=body[0].value)
    return out


def _as_lambda(grid: ast.expr, functions: dict[str, ast.Lambda]) -> ast.expr:
    return functions.get(grid.id, grid) if isinstance(grid, ast.Name) else grid


def _tuple_like(node: ast.expr) -> bool:
    """A call that computes a number (`triton.cdiv(n, B)`, `min(...)`), not one that returns a grid callable."""
    return call_name(node.func) in ("cdiv", "next_power_of_2", "min", "max", "int") if isinstance(node, ast.Call) \
        else True


def _free_names(node: ast.AST) -> set[str]:
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called}


def apply_override(launch: dict[str, Any], override: Override) -> dict[str, Any] | str:
    """The candidate's side of one recorded launch ({"grid", "constexprs", "options"}), or why it cannot be
    built (a grid that needs a value the record does not hold)."""
    values = {a.get("name"): a.get("value") for a in launch.get("args") or []
              if a.get("kind") in ("int", "float", "bool", "constexpr")}
    # a name at the site is the wrapper's: it has a recorded value only where the site passes it as an argument
    env = {site: values[param] for site, param in override.arg_names.items() if param in values}
    knobs: dict[str, dict[str, Any]] = {"constexprs": {}, "options": {}}
    for part, exprs in (("constexprs", override.constexprs), ("options", override.options)):
        for name, node in exprs.items():
            value = evaluate(node, env)
            if value is UNKNOWN or not isinstance(value, (int, float, bool)):
                return (f"the candidate's {name}=`{ast.unparse(node)}` cannot be computed from the recorded "
                        "launch's arguments")
            knobs[part][name] = value
    recorded_options = dict(launch.get("options") or {})
    if override.source is not None:
        given = apply_source_change(override.source, values, recorded_options, knobs["constexprs"])
        if isinstance(given, str):
            return given
        knobs["constexprs"] = {**given[0], **knobs["constexprs"]}  # a launch site's value wins
        knobs["options"] = {**given[1], **knobs["options"]}
    recorded_values = dict(values)
    values.update(knobs["constexprs"])
    changed = {k for k, v in knobs["constexprs"].items() if recorded_values.get(k) != v}
    grid = list(launch.get("grid") or [])
    node = override.grid
    if node is None and changed and override.grid_lambda is None and override.grid_opaque:
        return (f"the candidate moves {', '.join(sorted(changed))} of {override.kernel}, whose grid "
                f"`{override.grid_opaque}` replay cannot recompute from the candidate's values: launching the "
                "recorded grid could cover too little or read out of bounds")
    if node is None and changed and override.grid_lambda is not None:
        node = override.grid_lambda  # the same `lambda META:` text, but META now holds other values
        if override.recorded_lambda is not None:
            again = _grid_value(override.recorded_lambda, env, recorded_values)
            if again is not None and again + [1] * (3 - len(again)) != grid:
                return (f"the grid `{ast.unparse(override.recorded_lambda)}` recomputed from the recorded launch "
                        f"gives {again}, not the recorded {grid}: replay cannot recompute it for the candidate")
    if node is not None:
        value = _grid_value(node, env, values)
        if value is None:
            return (f"the candidate's grid `{ast.unparse(node)}` cannot be computed from the recorded "
                    "launch's arguments (it needs a value the record does not hold)")
        grid = value + [1] * (3 - len(value))
    return {"grid": grid, "constexprs": knobs["constexprs"], "options": {**recorded_options, **knobs["options"]}}


def _grid_value(node: ast.expr, env: dict[str, Any], values: dict[str, Any]) -> list[int] | None:
    """The grid `node` gives: a tuple/int over the wrapper's names (`env`), or `lambda meta: ...` over the launch's
    values too; None when it needs a value the record does not hold."""
    if isinstance(node, ast.Lambda) and len(node.args.args) == 1:  # `lambda meta: (cdiv(n, meta["BLOCK"]),)`
        args_name, body = node.args.args[0].arg, node.body
        if any(env.get(n) != values.get(n) for n in _free_names(body) - {args_name}):
            return None  # `meta[...]` and the wrapper's names share one environment: only when they agree
        value = evaluate(body, {**env, **values}, args_name)
    else:
        value = evaluate(node, env)
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not (isinstance(value, tuple) and value and all(isinstance(v, int) and v > 0 for v in value)):
        return None
    return list(value)


def candidate_launches(launches: list[dict[str, Any]], before: str, after: str) -> tuple[list[dict[str, Any]], str | None]:
    """`launches` each with the candidate's side under "candidate" where a launch site's knobs changed, or the
    reason replay cannot verify `after`."""
    overrides, why = launch_overrides(before, after)
    if why:
        return [], why
    by_kernel = {o.kernel: o for o in overrides}
    out = []
    for launch in launches:
        override = by_kernel.get(str(launch.get("kernel")))
        if override is None:
            out.append(launch)
            continue
        side = apply_override(launch, override)
        if isinstance(side, str):
            return [], side
        out.append({**launch, "candidate": side})
    return out, None
