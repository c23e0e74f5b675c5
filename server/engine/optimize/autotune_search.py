"""Config search inside `@triton.autotune`: candidates that edit the kernel's config list in place (the rest of
the file as the user wrote it), for configs written as literals or built by a helper / comprehension
(analysis/kernels/config_lists.py).

Moves, in the order they are timed:
1. **Prune to the measured best**: with recorded launches (the launch store), the config the autotuner chose for
   most of them, alone: the launch becomes deterministic (no benchmarking at the first call of each key).
2. **One config, a neighbour of the best-known** (the recorded best, else the first config): tile blocks x2 with
   num_warps x2 (a larger tile), each block x2 and /2, num_warps and num_stages to their neighbours. A list of one
   config is what every launch runs, so replay verifies it launch by launch and the gate times it.
3. **More configs** (files verified in KernelBench form, where the autotuner itself chooses on the device): the
   list plus the neighbours it lacks, and the key completed with the arguments the tiles depend on (a size that a
   block's mask or loop bound compares against, missing from `key=`, means configs tuned for one size are reused
   for another). Replay cannot tell which config the autotuner would pick, so with recorded launches these are
   not proposed.
Pure functions over text.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ....analysis.kernels.config_lists import Config, configs_node, decorator, key_node, read_configs
from .knobs import _program_axes, _Text, apply_edits

BLOCK_RANGE = (16, 8192)
WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)
MAX_ADDED = 6


@dataclass(frozen=True)
class TuneMove:
    label: str
    source: str
    config: dict[str, Any]


def _fmt(config: Config, prefix: str) -> str:
    values, options = config
    inner = ", ".join(f"{k!r}: {v!r}" for k, v in values.items())
    opts = "".join(f", {k}={v!r}" for k, v in options.items())
    return f"{prefix}({{{inner}}}{opts})"


def _describe(config: Config) -> str:
    values, options = config
    return ", ".join([*(f"{k}={v}" for k, v in values.items()), *(f"{k}={v}" for k, v in options.items())])


def _is_block(value: Any) -> bool:
    return type(value) is int and value >= 2 and not value & (value - 1)


def neighbours(config: Config, tiles: set[str], has_loop: bool) -> list[Config]:
    """One-step moves of one config: a larger tile with more warps, each block x2 and /2, warps, stages."""
    values, options = config
    out: list[Config] = []
    warps = options.get("num_warps", 4)
    grid_blocks = [k for k, v in values.items() if k in tiles and _is_block(v)]
    if grid_blocks and all(values[k] * 2 <= BLOCK_RANGE[1] for k in grid_blocks) and warps * 2 in WARPS:
        out.append(({**values, **{k: values[k] * 2 for k in grid_blocks}}, {**options, "num_warps": warps * 2}))
    for factor in (2, 0.5):
        for k, v in values.items():
            new = int(v * factor)
            if _is_block(v) and BLOCK_RANGE[0] <= new <= BLOCK_RANGE[1]:
                out.append(({**values, k: new}, options))
    for name, ladder, default in (("num_warps", WARPS, 4), ("num_stages", STAGES, 3)):
        if name == "num_stages" and not has_loop:
            continue
        now = options.get(name, default)
        i = ladder.index(now) if now in ladder else 2
        out += [(values, {**options, name: ladder[j]}) for j in (i + 1, i - 1) if 0 <= j < len(ladder)]
    return out


def _ran(config: Config, launch: dict[str, Any]) -> bool:
    values = {a.get("name"): a.get("value") for a in launch.get("args") or [] if isinstance(a, dict)}
    options = dict(launch.get("options") or {})
    return all(values.get(k) == v for k, v in config[0].items()) and all(
        options.get(k, v) == v for k, v in config[1].items())


def best_recorded(configs: list[Config], launches: list[dict[str, Any]]) -> int | None:
    """The config most recorded launches ran (weighted by how often the program made each), or None."""
    counts: Counter[int] = Counter()
    for launch in launches:
        ran = next((i for i, c in enumerate(configs) if _ran(c, launch)), None)
        if ran is not None:
            counts[ran] += int(launch.get("count") or 1)
    return counts.most_common(1)[0][0] if counts else None


def tile_dependent_args(fn: ast.FunctionDef, names: set[str]) -> list[str]:
    """The kernel's non-constexpr arguments a tile of `names` depends on: compared against an offset built from a
    block (`offs_n < N`), or a loop bound / cdiv over one (`range(0, K, BLOCK_K)`, `tl.cdiv(K, BLOCK_K)`)."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args
              if not (a.annotation is not None and "constexpr" in ast.unparse(a.annotation))]
    deps: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            for target in node.targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        deps.setdefault(t.id, set()).update(used)
    closure: dict[str, set[str]] = {}

    def reach(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if name in closure:
            return closure[name]
        out = {name}
        for dep in deps.get(name, ()):
            if dep not in seen:
                out |= reach(dep, seen | {name})
        closure[name] = out
        return out

    found: list[str] = []
    for node in ast.walk(fn):
        sides: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in ("range", "cdiv", "static_range"):
            sides = list(node.args)
        if len(sides) < 2:
            continue
        reads = [{r for n in ast.walk(s) if isinstance(n, ast.Name) for r in reach(n.id)} for s in sides]
        for i, side in enumerate(reads):
            others = set().union(*(r for j, r in enumerate(reads) if j != i))
            if others & names:
                found += [p for p in params if p in side and p not in names and p not in found
                          and not p.endswith("ptr") and not p.startswith("stride")]
    return found


def autotune_moves(source: str, kernel: str, launches: list[dict[str, Any]]) -> tuple[list[TuneMove], str | None]:
    """(moves, None), or ([], why not) for a kernel whose configs cannot be read."""
    tree = ast.parse(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    call = decorator(fn, "autotune") if fn is not None else None
    node = configs_node(call) if call is not None else None
    configs = read_configs(node, tree)
    if fn is None or call is None or node is None or not configs:
        return [], "the autotune configs cannot be read from the text (a list built from values only known at run time)"
    text = _Text(source)
    span = (text.start(node), text.end(node))
    prefix = next((ast.unparse(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)
                   and ast.unparse(c.func).split(".")[-1] == "Config"), "triton.Config")
    tiles = set(_program_axes(fn))
    has_loop = any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(fn))
    best = best_recorded(configs, launches)
    base = configs[best if best is not None else 0]
    out: list[TuneMove] = []

    def single(config: Config, label: str) -> TuneMove:
        return TuneMove(label, apply_edits(source, [(*span, f"[{_fmt(config, prefix)}]")]),
                        {"autotune": "single", **config[0], **config[1]})

    if best is not None and len(configs) > 1:
        out.append(single(base, f"autotune: keep only the recorded best config ({_describe(base)})"))
    for config in neighbours(base, tiles, has_loop):
        if config != base:
            out.append(single(config, f"autotune: one config {_describe(config)} (from {_describe(base)})"))
    if not launches:
        added = [c for c in dict.fromkeys(
            (tuple(v.items()), tuple(o.items())) for v, o in neighbours(base, tiles, has_loop))]
        new = [(dict(v), dict(o)) for v, o in added if (dict(v), dict(o)) not in configs][:MAX_ADDED]
        if new:
            edits = [_append(source, text, node, span, [_fmt(c, prefix) for c in new])]
            names = {k for c in configs for k in c[0]}
            key = key_node(call)
            missing = [a for a in tile_dependent_args(fn, names)
                       if isinstance(key, (ast.List, ast.Tuple)) and a not in {
                           e.value for e in key.elts if isinstance(e, ast.Constant)}]
            label = f"autotune: {len(new)} more config(s) around {_describe(base)}"
            if missing and isinstance(key, (ast.List, ast.Tuple)):
                end = text.end(key) - 1
                sep = ", " if key.elts else ""
                edits.append((end, end, sep + ", ".join(repr(m) for m in missing)))
                label += f"; key gains {', '.join(missing)} (the tiles depend on it)"
            out.append(TuneMove(label, apply_edits(source, edits), {"autotune": "added", "configs": len(new),
                                                                    "key_added": missing}))
    return _unique(out), None


def _append(source: str, text: _Text, node: ast.expr, span: tuple[int, int], configs: list[str]) -> tuple[int, int, str]:
    """Configs added to the list where it is written: after a literal list's last element (its indentation), or
    `<expression> + [...]` for a list built by a helper or a comprehension."""
    if isinstance(node, ast.List) and node.elts:
        last = node.elts[-1]
        at = text.end(last)
        line_start = source.rfind("\n", 0, text.start(last)) + 1
        indent = source[line_start:text.start(last)]
        joiner = (",\n" + indent) if not indent.strip() and "\n" in source[span[0]:span[1]] else ", "
        return (at, at, "".join(joiner + c for c in configs))
    return (span[1], span[1], " + [" + ", ".join(configs) + "]")


def _unique(moves: list[TuneMove]) -> list[TuneMove]:
    seen: set[str] = set()
    return [m for m in moves if not (m.source in seen or seen.add(m.source))]  # type: ignore[func-returns-value]
