"""Launch-site overrides for replay: a candidate that changes only the knobs a launch site passes can still be
verified by replaying the recorded launches.

Replay launches each kernel with its recorded arguments, grid and options. A candidate that differs from the
original outside the kernels' bodies ONLY in the constexpr arguments and launch options (num_warps, num_stages,
...) given at a launch site, and in that site's grid, is replayed with those values overridden: the candidate's
constexprs/options replace the recorded ones, and a changed grid is recomputed by evaluating the candidate's grid
expression (analysis/safe_eval.py: no call into user code) with the recorded values of the kernel arguments the
site passes by name, and the candidate's constexprs. Anything else (wrapper logic, a changed non-constexpr
argument, a new argument, a signature, a grid built from values replay does not know) is refused with the reason.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Any

from ....analysis.safe_eval import UNKNOWN, evaluate

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
    constexprs: dict[str, Any]
    options: dict[str, Any]
    grid: ast.expr | None  # the candidate's grid expression where it changed, else None (the recorded grid)
    arg_names: dict[str, str]  # a name used at the site -> the kernel parameter it is passed as


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
            params, _ = kernels[node.func.value.id]
            site = Site(node.func.value.id, node.func.slice)
            for name, arg in zip(params, node.args, strict=False):
                site.args[name] = arg
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                (site.options if kw.arg in LAUNCH_OPTIONS and kw.arg not in params else site.args)[kw.arg] = kw.value
            sites.append((node, site))
    return sites


def _without_knobs(tree: ast.Module, kernels: dict[str, tuple[list[str], set[str]]]) -> str:
    """The module with every launch site's grid, constexpr arguments and options blanked (kernel bodies too)."""
    tree = copy.deepcopy(tree)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in kernels:
            node.body = [ast.Pass()]
    for call, site in _sites(tree, kernels):
        _, const = kernels[site.kernel]
        call.func.slice = ast.Name(_HOLE)
        params = kernels[site.kernel][0]
        call.args = [ast.Name(_HOLE) if i < len(params) and params[i] in const else a for i, a in enumerate(call.args)]
        call.keywords = sorted(
            (kw for kw in call.keywords if not (kw.arg in const or (kw.arg in LAUNCH_OPTIONS and kw.arg not in params))),
            key=lambda kw: kw.arg or "",
        )
    return ast.dump(tree, include_attributes=False)


def _value(node: ast.expr) -> Any:
    value = evaluate(node, {})
    return UNKNOWN if value is UNKNOWN or not isinstance(value, (int, float, bool)) else value


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
    for (_, a), (_, b) in zip(_sites(old, kernels), _sites(new, kernels), strict=True):
        dump = lambda d: {k: ast.dump(v) for k, v in d.items()}  # noqa: E731
        if dump(a.args) == dump(b.args) and dump(a.options) == dump(b.options) and ast.dump(a.grid) == ast.dump(b.grid):
            if a.kernel in per_kernel:
                return [], f"{a.kernel} is launched from several sites and only some of them changed"
            per_kernel[a.kernel] = None  # type: ignore[assignment]
            continue
        const = kernels[a.kernel][1]
        constexprs, options = {}, {}
        for name, node in b.args.items():
            if name in const and (name not in a.args or ast.dump(a.args[name]) != ast.dump(node)):
                value = _value(node)
                if value is UNKNOWN:
                    return [], f"the new value of {a.kernel}'s {name} (`{ast.unparse(node)}`) is not a constant"
                constexprs[name] = value
        if set(a.args) - set(b.args):
            removed = ", ".join(sorted(set(a.args) - set(b.args)))
            return [], f"it drops {a.kernel}'s argument(s) {removed} at the launch site"
        for name, node in b.options.items():
            value = _value(node)
            if value is UNKNOWN:
                return [], f"the launch option {name}=`{ast.unparse(node)}` is not a constant"
            options[name] = value
        grid = None if ast.dump(a.grid) == ast.dump(b.grid) else b.grid
        names = {v.id: k for k, v in b.args.items() if isinstance(v, ast.Name)}
        override = Override(a.kernel, constexprs, options, grid, names)
        if a.kernel in per_kernel and per_kernel[a.kernel] != override:
            return [], f"{a.kernel} is launched from several sites with different values"
        per_kernel[a.kernel] = override
    return [o for o in per_kernel.values() if o is not None], None


def _free_names(node: ast.AST) -> set[str]:
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called}


def apply_override(launch: dict[str, Any], override: Override) -> dict[str, Any] | str:
    """The candidate's side of one recorded launch ({"grid", "constexprs", "options"}), or why it cannot be
    built (a grid that needs a value the record does not hold)."""
    values = {a.get("name"): a.get("value") for a in launch.get("args") or [] if a.get("kind") in ("int", "float", "bool", "constexpr")}
    values.update(override.constexprs)
    grid = list(launch.get("grid") or [])
    if override.grid is not None:
        node = override.grid
        # a name in the grid is the wrapper's: it has a recorded value only where the site passes it as an argument
        env = {site: values[param] for site, param in override.arg_names.items() if param in values}
        args_name = None
        if isinstance(node, ast.Lambda) and len(node.args.args) == 1:  # `lambda meta: (cdiv(n, meta["BLOCK"]),)`
            args_name, node = node.args.args[0].arg, node.body
            if any(env.get(n) != values.get(n) for n in _free_names(node) - {args_name}):
                value = UNKNOWN  # `meta[...]` and the wrapper's names share one environment: only when they agree
            else:
                value = evaluate(node, {**env, **values}, args_name)
        else:
            value = evaluate(node, env)
        if isinstance(value, int) and not isinstance(value, bool):
            value = (value,)
        if not (isinstance(value, tuple) and value and all(isinstance(v, int) and v > 0 for v in value)):
            return (f"the candidate's grid `{ast.unparse(override.grid)}` cannot be computed from the recorded "
                    "launch's arguments (it needs a value the record does not hold)")
        grid = list(value) + [1] * (3 - len(value))
    return {"grid": grid, "constexprs": dict(override.constexprs),
            "options": {**(launch.get("options") or {}), **override.options}}


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
