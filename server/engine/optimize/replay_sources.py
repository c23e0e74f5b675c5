"""Constexpr values a kernel takes from its own source, not from a launch site: parameter defaults
(`BLOCK: tl.constexpr = 64`), `@triton.autotune` configs written as literals, and `@triton.heuristics` lambdas.

A candidate that changes only those (and launch-site knobs, replay_overrides.py) is replayed with the values its
source gives each recorded launch: a default applies where no launch site passes the name and the record holds the
old default; an autotune config applies to the launches that ran the config at the same place in the original's
list (its values and options match the record), and a list cut to one config to every launch (the autotuner has no choice
left); configs built by a helper function, a module constant or a comprehension are read as a list
(analysis/kernels/config_lists.py); a heuristic is re-evaluated on the launch's recorded values
(analysis/source/safe_eval.py, no call into user code), after checking that the original heuristic gives the
recorded value. Added or pruned configs are accepted where the recorded launch's config is still there unchanged
(replay cannot know which config the autotuner would choose otherwise: that is refused, with the reason).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ....analysis.kernels.config_lists import Config, configs_node, decorator, read_configs
from ....analysis.source.safe_eval import UNKNOWN, evaluate

HOLE = "__tritonlens_source_knob__"


@dataclass
class SourceKnobs:
    defaults: dict[str, Any] = field(default_factory=dict)  # constexpr parameter -> literal default
    configs: list[Config] | None = None  # autotune configs, in order (None: not readable from the text)
    heuristics: dict[str, ast.Lambda] = field(default_factory=dict)


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN


def _heuristics_dict(fn: ast.FunctionDef) -> ast.Dict | None:
    call = decorator(fn, "heuristics")
    node = (call.args[0] if call.args else None) if call else None
    return node if isinstance(node, ast.Dict) else None


def source_knobs(fn: ast.FunctionDef, constexprs: set[str], module: ast.Module | None = None) -> SourceKnobs:
    """`module`: the file, for configs built by a helper function, a module constant or a comprehension."""
    out = SourceKnobs()
    args = fn.args.posonlyargs + fn.args.args
    for arg, default in zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults, strict=True):
        if arg.arg in constexprs and _literal(default) is not UNKNOWN:
            out.defaults[arg.arg] = _literal(default)
    tune = decorator(fn, "autotune")
    if tune is not None:
        out.configs = read_configs(configs_node(tune), module)
    table = _heuristics_dict(fn)
    for key, value in zip(table.keys if table else [], table.values if table else [], strict=True):
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Lambda):
            out.heuristics[key.value] = value
    return out


def blank(fn: ast.FunctionDef, constexprs: set[str], module: ast.Module | None = None) -> None:
    """Replace in `fn` (a copy) what source_knobs reads, so two texts differing only there compare equal (the
    autotune key too: it decides when the autotuner benchmarks again, never which values a recorded launch ran)."""
    args = fn.args.posonlyargs + fn.args.args
    for i, (arg, default) in enumerate(zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults, strict=True)):
        if arg.arg in constexprs and _literal(default) is not UNKNOWN:
            fn.args.defaults[i] = ast.Name(HOLE)
    tune = decorator(fn, "autotune")
    if tune is not None and read_configs(configs_node(tune), module) is not None:
        for kw in tune.keywords:
            if kw.arg in ("configs", "key"):
                kw.value = ast.Name(HOLE)
        tune.args = [ast.Name(HOLE) if i < 2 else a for i, a in enumerate(tune.args)]
    table = _heuristics_dict(fn)
    if table:
        table.values = [ast.Name(HOLE) if isinstance(v, ast.Lambda) else v for v in table.values]


@dataclass
class SourceChange:
    """What the candidate's source changes of one kernel's own constexprs (empty parts: unchanged)."""

    kernel: str
    defaults: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # name -> (old, new)
    configs: tuple[list[Config], list[Config]] | None = None
    heuristics: dict[str, tuple[ast.Lambda | None, ast.Lambda | None]] = field(default_factory=dict)
    passed_at_sites: set[str] = field(default_factory=set)  # names some launch site passes: defaults do not apply
    # every heuristic of both texts: one whose text is unchanged is still re-evaluated when a value it reads moves
    old_heuristics: dict[str, ast.Lambda] = field(default_factory=dict)
    new_heuristics: dict[str, ast.Lambda] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.defaults or self.configs or self.heuristics)


def source_change(kernel: str, old: SourceKnobs, new: SourceKnobs, passed: set[str]) -> SourceChange:
    change = SourceChange(kernel, passed_at_sites=passed, old_heuristics=dict(old.heuristics),
                          new_heuristics=dict(new.heuristics))
    for name in set(old.defaults) | set(new.defaults):
        if old.defaults.get(name, UNKNOWN) != new.defaults.get(name, UNKNOWN):
            change.defaults[name] = (old.defaults.get(name, UNKNOWN), new.defaults.get(name, UNKNOWN))
    if old.configs is not None and new.configs is not None and old.configs != new.configs:
        change.configs = (old.configs, new.configs)
    for name in set(old.heuristics) | set(new.heuristics):
        a, b = old.heuristics.get(name), new.heuristics.get(name)
        if (a and ast.dump(a)) != (b and ast.dump(b)):
            change.heuristics[name] = (a, b)
    return change


def _ran(config: Config, values: dict[str, Any], options: dict[str, Any]) -> bool:
    kwargs, opts = config
    return all(values.get(k) == v for k, v in kwargs.items()) and all(
        options.get(k, v) == v for k, v in opts.items()
    )


def apply_source_change(
    change: SourceChange, values: dict[str, Any], options: dict[str, Any], site: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, Any]] | str:
    """(constexprs, options) the candidate's source gives a launch recorded with `values` and `options` (and the
    candidate's launch-site constexprs `site`), or why replay cannot tell."""
    constexprs: dict[str, Any] = {}
    opts: dict[str, Any] = {}
    if change.configs:
        old, new = change.configs
        ran = next((i for i, c in enumerate(old) if _ran(c, values, options)), None)
        if ran is None:
            return f"the recorded launch of {change.kernel} ran no autotune config of the original text"
        if len(new) == 1:  # one config: the autotuner has no choice, every launch runs it
            constexprs.update(new[0][0])
            opts.update(new[0][1])
        elif len(old) == len(new):
            constexprs.update(new[ran][0])
            opts.update(new[ran][1])
        elif old[ran] not in new:
            return (f"the candidate drops the autotune config the recorded launch of {change.kernel} ran "
                    f"({old[ran][0]}): replay cannot know which config the autotuner would choose instead")
    for name, (was, now) in change.defaults.items():
        if name in change.passed_at_sites or name in constexprs or values.get(name) != was:
            continue  # a launch site passes it, or a config sets it: the default is not what the launch used
        if now is UNKNOWN:
            return f"the candidate removes {change.kernel}'s default for {name}, which the recorded launch used"
        constexprs[name] = now
    env = {**values, **constexprs, **(site or {})}
    for name in change.heuristics:
        if name not in change.new_heuristics:
            return f"the candidate removes {change.kernel}'s heuristic for {name}"
    for name, now in change.new_heuristics.items():
        moved = {k for k, v in env.items() if values.get(k) != v}
        was = change.old_heuristics.get(name)
        if name not in change.heuristics and not (moved & _reads(now)):
            continue  # the same heuristic over the same values: the recorded value stands
        if was is not None:
            before = evaluate(was.body, values, was.args.args[0].arg if was.args.args else None)
            if before is UNKNOWN or before != values.get(name):
                return (f"{change.kernel}'s heuristic for {name} cannot be recomputed from the recorded launch "
                        f"(`{ast.unparse(was)}`)")
        value = evaluate(now.body, env, now.args.args[0].arg if now.args.args else None)
        if value is UNKNOWN or not isinstance(value, (int, float, bool)):
            return f"the candidate's heuristic for {name} (`{ast.unparse(now)}`) cannot be computed from the record"
        if value != values.get(name):
            constexprs[name] = value
        env[name] = value
    return constexprs, opts


def _reads(fn: ast.Lambda) -> set[str]:
    """The argument names a heuristic reads (`args["N"]`) and the plain names it uses."""
    arg = fn.args.args[0].arg if fn.args.args else None
    keys = {n.slice.value for n in ast.walk(fn.body) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
            and n.value.id == arg and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)}
    return keys | {n.id for n in ast.walk(fn.body) if isinstance(n, ast.Name)}
