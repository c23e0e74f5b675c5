"""Config search: move block sizes, num_warps and num_stages (CUDA) or multibuffer (Ascend) one step at a time
from the current text (a pattern search across the loop's rounds: each round starts from the config the last
round applied), prune every move by compiling it first, screen the survivors with one short timed run each where
the current text was profiled (config_screen.py: only moves that ran more than 2% faster go on, fastest first),
and hand them to the gate, which verifies them and times them interleaved against the current text.

Like Triton's `autotune` the candidates are concrete configs benchmarked on the device; unlike it, configs are
pruned before timing by what the compiler reports (spilled registers, shared memory beyond the target's per-block
limit, new error-level compiler findings such as an Ascend UB overflow) and the winner is written into the
source, verified. Like Helion's pattern search, each round explores the neighbours of the best config so far.

Ascend: each compiled move carries the compiler's own Unified Buffer verdict (analysis/compiler/ascend/ub_feasibility.py, from
bishengir's PlanMemory); `FEASIBILITY["ascend"]` prunes a move the compiler said overflows the UB and keeps one
it did not decide on (the candidate's rationale says so). `FEASIBILITY[platform]` is the hook for any further
`(facts, config, target) -> reason | None` check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ....analysis.core.findings import Severity
from ....analysis.core.targets import platform_of
from ....analysis.rewrite.model import Candidate, RecipeContext, Verdict
from .autotune_search import autotune_moves
from .config_screen import KEEP_ABOVE, ConfigScreen, screenable
from .derived_knobs import derived_moves
from .knobs import Knob, apply_edits, find_knobs
from .proposers import Declined

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner

BLOCK_RANGE = (16, 8192)
WARPS = (1, 2, 4, 8, 16)
STAGES = (1, 2, 3, 4, 5)
Feasibility = Callable[[dict[str, Any], dict[str, Any], str], "str | None"]


def _ub_overflow(facts: dict[str, Any], config: dict[str, Any], target: str) -> str | None:
    ub = facts.get("ub") or {}
    return f"{target}: {ub.get('reason')}" if ub.get("feasible") is False else None


FEASIBILITY: dict[str, Feasibility] = {"ascend": _ub_overflow}  # platform -> check; see the module docstring


@dataclass(frozen=True)
class Move:
    changes: tuple[tuple[Knob, Any], ...]
    text: str = ""  # a move that is not a set of knob changes (autotune configs) says what it is
    values: dict[str, Any] | None = field(default=None, hash=False, compare=False)

    @property
    def label(self) -> str:
        return self.text or ", ".join(f"{k.label}: {k.value} -> {v}" for k, v in self.changes)

    def config(self) -> dict[str, Any]:
        return dict(self.values) if self.values is not None else {k.label: v for k, v in self.changes}


MAXNREG = (255, 168, 128, 96, 64)  # registers per thread a launch may be capped at (CUDA `maxnreg`)


def maxnreg_moves(knobs: Sequence[Knob], base: dict[str, Any]) -> list[Move]:
    """`maxnreg` caps below what the current text's compile uses (more resident warps per SM); a cap that makes
    the kernel spill is pruned like any other move (the compile result)."""
    out = []
    for k in knobs:
        if k.kind != "maxnreg" or len(k.kernels) != 1:
            continue
        used = int((base.get("kernels", {}).get(next(iter(k.kernels))) or {}).get("registers") or 0)
        below = [v for v in MAXNREG if v < min(used, k.value or 256)]
        out += [Move(((k, v),)) for v in below[:2]]
    return out


# Tile shapes for a kernel whose main loop feeds tl.dot (CUDA): (tile blocks, other blocks, num_warps, num_stages).
# Tile blocks size the grid (one program per output tile): one value for every tile block, or (first, second) for
# a kernel with two (in parameter order: BLOCK_M, BLOCK_N); the others step through the loop (K, or keys). These
# are the shapes tensor-core GEMM / attention kernels settle on (a warp group's 64-row wgmma tile and up, 128x256
# with 8 warps for large GEMMs, 2-4 stages of cp.async/TMA pipelining); each is compiled first, so a shape that
# spills or overflows shared memory is pruned before timing. The last two are the key blocks flash attention
# settles on for Hopper (128 queries x 128 keys with 8 warps, 64 x 128 with 4); they come last because they need
# the most shared memory, and config_screen.py times them before the gate does.
TILE_JUMPS: tuple[tuple[int | tuple[int, int], int, int, int], ...] = (
    (128, 64, 8, 3), ((128, 256), 64, 8, 3), (128, 32, 8, 4), (64, 64, 4, 4), (128, 64, 4, 3),
    (128, 128, 8, 3), (64, 128, 4, 3),
)
GROUP_RANGE = (2, 64)  # a constexpr that sizes no block (a program-group width): moved last, in this range


def tile_jumps(knobs: Sequence[Knob]) -> list[Move]:
    """Whole tile shapes at once for a kernel with a dot loop: a one-step search would need several rounds to
    climb from a first draft's 32x32 tiles to a tensor-core shape, and each single step alone may be slower."""
    out: list[Move] = []
    by_kernel: dict[str, list[Knob]] = {}
    for k in knobs:
        if k.dot_loop and len(k.kernels) == 1:
            by_kernel.setdefault(next(iter(k.kernels)), []).append(k)
    for group in by_kernel.values():
        tiles = [k for k in group if k.kind == "block" and k.grid_axis is not None and k.lane]
        others = [k for k in group if k.kind == "block" and k.grid_axis is None and k.lane]
        warps = next((k for k in group if k.kind == "num_warps"), None)
        stages = next((k for k in group if k.kind == "num_stages"), None)
        if not tiles or len(tiles) > 2:
            continue
        for tile, other, n_warps, n_stages in TILE_JUMPS:
            if isinstance(tile, tuple) and len(tiles) != 2:
                continue
            sizes = tile if isinstance(tile, tuple) else (tile,) * len(tiles)
            changes = [(k, v) for k, v in zip(tiles, sizes, strict=True)] + [(k, other) for k in others]
            changes += [(warps, n_warps)] if warps is not None else []
            changes += [(stages, n_stages)] if stages is not None else []
            changes = [(k, v) for k, v in changes if k.value != v]
            if changes and all(BLOCK_RANGE[0] <= v for k, v in changes if k.kind == "block"):
                out.append(Move(tuple(changes)))
    return _unique(out)


def _unique(found: list[Move]) -> list[Move]:
    seen: set[str] = set()
    return [m for m in found if not (m.label in seen or seen.add(m.label))]  # type: ignore[func-returns-value]


def moves(knobs: Sequence[Knob], platform: str = "cuda") -> list[Move]:
    """Moves in the order they are timed when the round's budget is short: whole tile shapes for dot loops
    (CUDA), larger blocks (first drafts tend to use small ones), block x2 with warps x2 together (a bigger tile
    usually wants more warps), warps up and down, smaller blocks, pipeline stages (kernels with a loop), then
    constexpr counts that size no block (a grouped program order's group width)."""
    blocks = [k for k in knobs if k.kind == "block" and k.lane]
    counts = [k for k in knobs if k.kind == "block" and not k.lane]

    def block_moves(factors: tuple[float, ...]) -> list[Move]:
        out = []
        for factor in factors:
            for k in blocks:
                v = int(k.value * factor)
                if BLOCK_RANGE[0] <= v <= BLOCK_RANGE[1] and v != k.value:
                    out.append(Move(((k, v),)))
        return out

    def neighbours(k: Knob, values: tuple[int, ...]) -> list[Move]:
        i = values.index(k.value) if k.value in values else 2
        return [Move(((k, values[j]),)) for j in (i + 1, i - 1) if 0 <= j < len(values)]

    warps = {w.label.split(".")[0]: w for w in knobs if w.kind == "num_warps"}
    joint = []
    for k in blocks:
        w = next((warps[n] for n in sorted(k.kernels) if n in warps), None)
        if w is not None and k.value * 2 <= BLOCK_RANGE[1] and w.value * 2 in WARPS:
            joint.append(Move(((k, k.value * 2), (w, w.value * 2))))
    out = (tile_jumps(knobs) if platform == "cuda" else []) + block_moves((2, 4)) + joint
    out += [m for k in knobs if k.kind == "num_warps" for m in neighbours(k, WARPS)]
    out += block_moves((0.5, 0.25))
    out += [m for k in knobs if k.kind == "num_stages" and k.has_loop for m in neighbours(k, STAGES)]
    out += [Move(((k, not k.value),)) for k in knobs if k.kind == "multibuffer"]
    out += [Move(((k, v),)) for k in counts for v in (k.value * 2, k.value // 2)
            if GROUP_RANGE[0] <= v <= GROUP_RANGE[1]]
    return out


def _faster(feedback: Sequence[Verdict]) -> list[Verdict]:
    """Verdicts of moves the gate accepted as faster, fastest first."""
    won = [v for v in feedback if v.accepted and v.details.get("faster")]
    return sorted(won, key=lambda v: -(v.speedup or 0.0))


def combined_moves(knobs: Sequence[Knob], faster: Sequence[dict[str, Any]]) -> list[Move]:
    """Moves the gate found faster on an earlier text (fastest first), re-applied to this one (which holds the
    round's applied move): all together first (on a knob two of them moved, the faster one's value), then each
    alone. A round applies
    only its best move, so a second independent gain (warps after a block, stages after a tile) would otherwise
    wait for the pattern search to find it again, which the time budget rarely allows."""
    by_label = {k.label: k for k in knobs}
    out: list[Move] = []
    merged: dict[str, Any] = {}
    for config in faster:
        if not all(label in by_label for label in config):
            continue  # a knob of it is gone from this text (a recipe restructured the launch)
        changes = [(by_label[label], value) for label, value in config.items() if by_label[label].value != value]
        if changes:
            out.append(Move(tuple(changes)))
        for label, value in config.items():
            merged.setdefault(label, value)
    together = [(by_label[label], value) for label, value in merged.items()
                if label in by_label and by_label[label].value != value]
    if len(together) > max((len(m.changes) for m in out), default=0):
        out.insert(0, Move(tuple(together)))
    return out


COMPILED, CAPPED, SCREENED_OUT, NOT_RUN = ("compile result", "beyond the round's cap",
                                          "screened slower or within 2%", "did not run when screened")


@dataclass
class Pruned:
    move: str
    reason: str
    cause: str = COMPILED  # which step kept it from the gate (the report's notes count them)


@dataclass
class ConfigSearch:
    runner: Runner
    target: str
    backend: str = "cuda"
    max_survivors: int = 8  # moves handed to the gate per round (the rest are compiled but not timed)
    workers: int = 2  # parallel compiles (the runner's pool decides how many really run at once)
    screen: ConfigScreen | None = None  # times compiled moves first (config_screen.py); None: the gate alone
    max_screened: int = 24  # compiled moves a round screens (when screening)
    name: str = "config-search"
    waits_for_recipes: bool = True  # the loop asks it only once the recipes have no new candidate (loop._propose)
    declined: list[Declined] = field(default_factory=list)
    pruned: list[Pruned] = field(default_factory=list)
    cancel: threading.Event | None = None
    # knob label -> value of each knob move proposed, by candidate id: a move the gate found faster but the round
    # did not apply is combined with the applied one next round (combined_moves)
    proposed: dict[str, dict[str, Any]] = field(default_factory=dict)

    def notes(self) -> list[str]:
        """What happened to the moves that did not reach the gate, per cause (the report's notes)."""
        if not self.pruned:
            return []
        causes: dict[str, int] = {}
        for p in self.pruned:
            causes[p.cause] = causes.get(p.cause, 0) + 1
        best = [p for p in self.pruned if p.cause == SCREENED_OUT]
        told = ", ".join(f"{n} {cause}" for cause, n in causes.items())
        return [f"{self.name}: {len(self.pruned)} move(s) kept from the gate ({told})"
                + (f"; e.g. {best[0].move}: {best[0].reason}" if best else "")]

    @property
    def device_wait_s(self) -> float:
        """Seconds the screens waited for other jobs' timings (the loop leaves them out of the budget)."""
        return self.screen.device_wait_s if self.screen is not None else 0.0

    def propose(self, ctx: RecipeContext, feedback: Sequence[Verdict]) -> list[Candidate]:
        if self.backend == "interpret":
            if not any(d.proposer == self.name for d in self.declined):
                self.declined.append(Declined(self.name, ctx.kernel, "needs a backend whose timings mean something"))
            return []
        survivors, _ = self.search(ctx, feedback)
        return survivors

    def search(self, ctx: RecipeContext, feedback: Sequence[Verdict] = ()) -> tuple[list[Candidate], list[Pruned]]:
        """Every one-step move of ctx.kernel's launches, compiled; (survivors as candidates, pruned moves)."""
        kinfo = next((k for k in ctx.module.kernels if k.name == ctx.kernel), None)
        if kinfo is not None and kinfo.autotune is not None:
            return self._search_autotune(ctx)
        params = {k.name: [(p.name, p.is_constexpr) for p in k.params] for k in ctx.module.kernels}
        try:
            knobs = [k for k in find_knobs(ctx.source, params, platform_of(self.target)) if ctx.kernel in k.kernels]
            constexprs = [p for p, is_const in params.get(ctx.kernel, []) if is_const]
            derived = derived_moves(ctx.source, ctx.kernel, constexprs)
        except SyntaxError:
            return [], []
        if not knobs and not derived:
            self.declined.append(Declined(self.name, ctx.kernel, "no literal block size or launch option to move"))
            return [], []
        base = self._compile(ctx, ctx.source, sorted({n for k in knobs for n in k.kernels} | {ctx.kernel}))
        if base.get("error"):
            self.declined.append(Declined(self.name, ctx.kernel, f"the current text does not compile: {base['error']}"))
            return [], []
        candidates: list[tuple[Move, str]] = []
        combined = combined_moves(knobs, [self.proposed[v.candidate_id] for v in _faster(feedback)
                                          if v.candidate_id in self.proposed])
        for move in _unique(combined + moves(knobs, platform_of(self.target)) + maxnreg_moves(knobs, base)):
            edits = [e for knob, value in move.changes for e in knob.edits(value, ctx.source)]
            if edits:
                candidates.append((move, apply_edits(ctx.source, edits)))
        candidates += [(Move((), m.label, m.config), m.source) for m in derived]  # heuristics, wrapper expressions
        return self._judge(ctx, base, candidates, "A one-step move of the launch configuration")

    def _search_autotune(self, ctx: RecipeContext) -> tuple[list[Candidate], list[Pruned]]:
        """Moves inside the kernel's `@triton.autotune` configs (autotune_search.py), compiled and pruned alike."""
        from ..record.launch_store import recorded_for

        launches = recorded_for(ctx.path, ctx.source, ctx.kernel)
        try:
            found, why = autotune_moves(ctx.source, ctx.kernel, launches)
        except SyntaxError:
            return [], []
        if why:
            self.declined.append(Declined(self.name, ctx.kernel, f"autotuned: {why}"))
            return [], []
        base = self._compile(ctx, ctx.source, [ctx.kernel])
        if base.get("error"):
            self.declined.append(Declined(self.name, ctx.kernel, f"the current text does not compile: {base['error']}"))
            return [], []
        candidates = [(Move((), m.label, m.config), m.source) for m in found]
        return self._judge(ctx, base, candidates, "A move inside the kernel's autotune configs")

    def _judge(self, ctx: RecipeContext, base: dict[str, Any], candidates: list[tuple[Move, str]],
               what: str) -> tuple[list[Candidate], list[Pruned]]:
        with ThreadPoolExecutor(max_workers=max(1, self.workers)) as pool:
            facts = list(pool.map(
                lambda mc: self._compile(ctx, mc[1], sorted({n for k, _ in mc[0].changes for n in k.kernels})
                                         or [ctx.kernel]),
                candidates,
            ))
        compiled: list[tuple[Move, str, dict[str, Any], str]] = []
        pruned: list[Pruned] = []
        screening = self.screen is not None and screenable(ctx.profile)
        cap = self.max_screened if screening else self.max_survivors
        for (move, text), fact in zip(candidates, facts, strict=True):
            reason = self._prune_reason(fact, base, move)
            if reason:
                pruned.append(Pruned(move.label, reason))
            elif len(compiled) >= cap:
                pruned.append(Pruned(move.label, "compiled fine; beyond this round's timing budget", CAPPED))
            else:
                compiled.append((move, text, fact, ""))
        if screening and compiled:
            compiled = self._screened(ctx, compiled, pruned)
        survivors = [self._candidate(ctx, m, t, f, what, note) for m, t, f, note in compiled[: self.max_survivors]]
        for cand, (move, _, _, _) in zip(survivors, compiled, strict=False):
            if move.changes:
                self.proposed[cand.id] = {k.label: v for k, v in move.changes}
        pruned += [Pruned(m.label, "screened faster, but beyond this round's timing budget", CAPPED)
                   for m, _, _, _ in compiled[self.max_survivors:]]
        self.pruned.extend(pruned)
        return survivors, pruned

    def _screened(self, ctx: RecipeContext, compiled: list[tuple[Move, str, dict[str, Any], str]],
                  pruned: list[Pruned]) -> list[tuple[Move, str, dict[str, Any], str]]:
        """The moves that ran faster than the current text at the timing shape, fastest first (config_screen.py);
        the others are pruned with their screened time. If the current text itself did not run, nothing is
        screened out."""
        assert self.screen is not None
        times = self.screen.time(ctx.path, [ctx.source] + [t for _, t, _, _ in compiled])
        current, rest = times[0], times[1:]
        if current.ms is None:
            return compiled
        ranked = []
        for (move, text, fact, _), got in zip(compiled, rest, strict=True):
            ratio = got.ratio(current.ms)
            if ratio is None:
                pruned.append(Pruned(move.label, f"screened: did not run at the timing shape ({got.error})",
                                     NOT_RUN))
            elif ratio <= KEEP_ABOVE:
                pruned.append(Pruned(move.label, f"screened: {ratio:.2f}x of the current text at the timing shape",
                                     SCREENED_OUT))
            else:
                note = (f"screened at {ratio:.2f}x of the current text at the timing shape (one short run each, "
                        "before the gate)")
                ranked.append((ratio, (move, text, fact, note)))
        ranked.sort(key=lambda r: -r[0])
        return [entry for _, entry in ranked]

    def _compile(self, ctx: RecipeContext, source: str, kernels: list[str]) -> dict[str, Any]:
        """Registers, spills, shared memory and error findings per kernel, from the pipeline's compile."""
        from ..diagnose import analyze_document
        from .gate import compile_facts

        out: dict[str, Any] = {"kernels": {}}
        for analysis in analyze_document(source, ctx.path, self.target, self.runner, kernels=kernels,
                                         cancel=self.cancel, max_variants=1):
            facts = compile_facts(analysis)
            if platform_of(self.target) == "ascend" and analysis.primary is not None:
                from dataclasses import asdict

                from .ascend_compile import kernel_compile, ub_text

                # the gate's own reading of BiSheng's result (ascend_compile.py): pruned here on the same verdict
                k = kernel_compile(analysis, self.target)
                stopped = k.compiled is False and k.ub_feasible is not False
                facts["ub"] = {"feasible": False if stopped else k.ub_feasible,
                               "reason": k.reason if stopped or k.ub_feasible is not True else ub_text(asdict(k)),
                               "source": k.stage}
            facts["errors"] = sorted(
                {f.code for f in analysis.findings if f.severity == Severity.ERROR and f.code[:3] in ("TL3", "TL4")}
            )
            failed = [e for v in analysis.variants if not v.ok for e in v.errors]
            if analysis.runner_unavailable or (analysis.error and not analysis.variants):
                out["error"] = analysis.error or "not compiled"
            elif failed:
                out["error"] = f"{failed[0].stage}: {failed[0].message.strip()[:300]}"
            out["kernels"][analysis.kernel] = facts
        return out

    def _prune_reason(self, fact: dict[str, Any], base: dict[str, Any], move: Move) -> str | None:
        from ....analysis.compiler.cuda.limits import limits_for

        if fact.get("error"):
            return f"does not compile: {fact['error']}"
        limits = limits_for(self.target) if platform_of(self.target) == "cuda" else None
        for kernel, facts in fact["kernels"].items():
            before = base["kernels"].get(kernel, {})
            spills = int(facts.get("spill_stores") or 0)
            if spills > int(before.get("spill_stores") or 0):
                return f"{kernel} spills {spills} bytes of registers (compile result)"
            shared = int(facts.get("shared") or 0)
            if limits is not None and shared > limits.shared_per_block:
                return f"{kernel} needs {shared} bytes of shared memory; {limits.name} allows {limits.shared_per_block}"
            new_errors = set(facts.get("errors") or []) - set(before.get("errors") or [])
            if new_errors:
                return f"{kernel}: new compiler error finding(s) {', '.join(sorted(new_errors))}"
            check = FEASIBILITY.get(platform_of(self.target))
            if check is not None:
                why = check(facts, move.config(), self.target)
                if why:
                    return why
        return None

    def _candidate(self, ctx: RecipeContext, move: Move, text: str, fact: dict[str, Any], what: str,
                   screened: str = "") -> Candidate:
        resources = "; ".join(
            f"{k}: {f['ub']['reason']}" if "ub" in f else
            f"{k}: {f.get('registers')} registers, {f.get('spill_stores') or 0} spilled, {f.get('shared')} B shared"
            for k, f in fact["kernels"].items()
        )
        return Candidate(
            source=text,
            origin="config",
            producer=self.name,
            kernel=ctx.kernel,
            title=f"config: {move.label}",
            rationale=f"{what}, compiled for {self.target} first ({resources}"
            f"{'; ' + screened if screened else ''}); kept only if the gate measures it faster.",
            evidence=(),
            level=4,
            config=move.config(),
        )
