"""The optimize loop for one file, shared by `tritonlens optimize` and the language server. The reference is the
file's KernelBench `Model`, or else its kernels' recorded launches, replayed (replay.py).

    evidence (levels 1, 3-4, 2 where timed) -> proposers (recipes, config search, LLM) -> gate -> apply the
    fastest accepted candidate -> re-diagnose -> propose again, within a budget of candidates, rounds and time.

Under `interpret`, and for an Ascend target off an Ascend device, nothing is timed: correct candidates are kept as "verified correct, not timed" (never as
faster), none is applied, and the loop stops after one round.
"""

from __future__ import annotations

import ast
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ....analysis.core.targets import DEFAULT_CUDA_TARGET
from ....analysis.kernels import parse_module
from ....analysis.rewrite.model import Candidate, RecipeContext, Verdict
from ..record.launch_store import recorded_for
from .evidence import Evidence, collect
from .gate import Gate, GateConfig
from .proposer_set import build_proposers
from .proposers import Declined, Proposer
from .replay import replay_launches, replay_plan
from .shapes import ShapePlan, plan_shapes
from .timing import timing_meaningful
from .verify_plan import VerificationPlan

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner

Progress = Callable[[str, float | None], None]


@dataclass
class Budget:
    candidates: int = 24  # candidates sent to the gate, all rounds together
    rounds: int = 3
    seconds: float = 1800.0

    @classmethod
    def parse(cls, text: str) -> Budget:
        """"candidates=12,rounds=2,seconds=600" (any subset)."""
        out = cls()
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep or key not in ("candidates", "rounds", "seconds"):
                raise ValueError(f"budget item {part!r}: use candidates=N, rounds=N, seconds=S")
            try:
                setattr(out, key, float(value) if key == "seconds" else int(value))
            except ValueError:
                raise ValueError(f"budget item {part!r}: {value!r} is not a number") from None
        return out


@dataclass
class Step:
    candidate: Candidate
    verdict: Verdict
    round: int

    def to_dict(self) -> dict[str, Any]:
        c, v = self.candidate, self.verdict
        return {
            "id": c.id, "round": self.round, "origin": c.origin, "producer": c.producer, "kernel": c.kernel,
            "title": c.title, "rationale": c.rationale, "evidence": list(c.evidence), "level": c.level,
            "config": dict(c.config), "accepted": v.accepted, "stage": v.stage, "reason": v.reason,
            "speedup": v.speedup, "spread": v.spread, "max_error": v.max_error, "details": v.details,
        }


@dataclass
class OptimizeResult:
    path: str
    original: str
    final: str
    backend: str
    target: str
    shapes: ShapePlan | None = None
    applied: list[Step] = field(default_factory=list)  # the chain of rewrites, in order (timed backends only)
    offered: list[Step] = field(default_factory=list)  # accepted, shown separately (verified-correct only)
    rejected: list[Step] = field(default_factory=list)
    declined: list[Declined] = field(default_factory=list)
    overall: Verdict | None = None  # the final text against the original, measured once more
    evidence_before: Evidence | None = None
    evidence_after: Evidence | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    cancelled: bool = False
    elapsed_s: float = 0.0
    device_wait_s: float = 0.0  # waits for a device other jobs held: inside elapsed_s, outside the time budget

    ascend_original: dict[str, Any] | None = None  # an Ascend target: the original text's BiSheng record

    @property
    def timing_meaningful(self) -> bool:
        return timing_meaningful(self.backend, self.target)


@dataclass
class OptimizeOptions:
    target: str = DEFAULT_CUDA_TARGET
    backend: str = "interpret"
    budget: Budget = field(default_factory=Budget)
    gate: GateConfig | None = None  # default: GateConfig(backend, target)
    profile: bool = True  # level-2 evidence where timing means something
    kernel: str | None = None  # optimize only this kernel (the editor's lens on it); None: every kernel


def kernels_of(source: str) -> list[str]:
    module = parse_module(source)
    return [k.name for k in module.kernels if not k.is_helper]


def optimize_source(
    source: str,
    path: str,
    runner: Runner,
    options: OptimizeOptions,
    proposers: Sequence[Proposer] | None = None,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> OptimizeResult:
    clock = BudgetClock()
    say = progress or (lambda message, fraction: None)
    out = OptimizeResult(path, source, source, options.backend, options.target)
    try:
        out.shapes = plan_shapes(source)
    except ValueError as exc:
        out.error = f"cannot optimize {path}: {exc}"
        return out
    names = {n.name for n in ast.parse(source).body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    missing = [n for n in ("Model", "ModelNew", "get_inputs", "get_init_inputs") if n not in names]
    kernels = kernels_of(source)
    launches: list[dict[str, Any]] = []
    if missing and kernels:
        launches = replay_launches(path, source, kernels)
        if not launches:
            out.error = (
                f"{path} is not in KernelBench form (missing {', '.join(missing)}) and none of its kernels has "
                "replayable launches recorded from its current text (tensors, scalars and constexprs; not "
                "descriptors): the gate needs a reference. Record the program that "
                "launches them (`tritonlens record -- COMMAND`, or the editor's Record command) to verify by "
                "replay, or add Model/ModelNew/get_inputs (see bench/README.md)"
            )
            return out
        out.shapes = replay_plan(launches, len(recorded_for(path, source)))
        out.notes.append(f"verified by replaying {len(launches)} recorded launch(es): {out.shapes.source_note}")
    if not kernels:
        out.error = f"{path} has no @triton.jit kernel to optimize"
        return out
    if options.kernel is not None and options.kernel not in kernels:
        out.error = f"{path} has no @triton.jit kernel named {options.kernel!r} to optimize"
        return out
    config = options.gate or GateConfig(backend=options.backend, target=options.target)
    gate = Gate(runner, config, out.shapes, path, reference_source=source, launches=launches)
    if proposers is None:  # the recipes alone
        proposers = build_proposers(runner, options.target, options.backend, config_search=False)
    proposers = list(proposers)
    feedback: dict[tuple[str, str], list[Verdict]] = {}
    seen: set[str] = set()
    tried: set[tuple[str, str]] = set()  # (kernel, producer) pairs the gate has judged, on any text
    spent = 0
    costs: list[float] = []  # seconds each verification took (compile check, correctness, timing)
    replay_declined: list[Declined] = []  # candidates replay cannot verify: declined before they take a slot
    ev_for: tuple[str, Evidence] | None = None
    budget = options.budget
    current = source
    for round_no in range(1, budget.rounds + 1):
        if _stop(cancel, out, clock, budget):
            break
        if ev_for is not None and ev_for[0] == current:  # a round that applied nothing: same text, same evidence
            ev = ev_for[1]
        else:
            say(f"round {round_no}: collecting evidence", None)
            ev = collect(current, path, options.target, runner, backend=options.backend, cancel=cancel,
                         profile=options.profile and not launches,  # level 2 profiles KernelBench modules
                         untrusted=_llm_text(out))
            clock.excuse(ev.device_wait_s)
            ev_for = (current, ev)
        if round_no == 1:
            out.evidence_before = ev
        waited = _proposers_waited(proposers)
        candidates, deferred = _propose(current, path, options.target, ev, proposers, feedback, seen, out, tried,
                                        only=options.kernel)
        clock.excuse(_proposers_waited(proposers) - waited)  # config search's screens queue on the device too
        if not candidates:
            out.notes.append(f"round {round_no}: no new candidate from {', '.join(p.name for p in proposers)}")
            break
        planned = _verifiable(gate, current, candidates, replay_declined)
        if not planned:
            out.notes.append(f"round {round_no}: no candidate replay can verify")
            break
        accepted: list[Step] = []
        for i, (source_name, cand, plan) in enumerate(planned):
            if spent >= budget.candidates or _stop(cancel, out, clock, budget, costs):
                break
            spent += 1
            say(f"round {round_no}: verifying {cand.title} ({i + 1}/{len(planned)})", spent / budget.candidates)
            began = time.monotonic()
            verdict = gate.check(current, cand, cancel, plan=plan, budget_s=_left(clock, budget)).verdict
            waited = clock.excuse(verdict.details.get("device_wait_s"))
            if verdict.stage != "budget":
                costs.append(time.monotonic() - began - waited)
            tried.add((cand.kernel, cand.producer))
            step = Step(cand, verdict, round_no)
            feedback.setdefault((source_name, cand.kernel), []).append(verdict)
            (accepted if verdict.accepted else out.rejected).append(step)
        if not out.timing_meaningful:
            out.offered.extend(accepted)  # correct, not timed: offered one by one, never chained
            break
        faster = [s for s in accepted if s.verdict.details.get("faster")]
        if not faster:
            if deferred:  # the proposers that waited for the recipes take the next round on the same text
                out.notes.append(f"round {round_no}: no recipe was faster; {', '.join(deferred)} next")
                continue
            break
        best = max(faster, key=lambda s: s.verdict.speedup or 0.0)
        out.applied.append(best)
        out.offered.extend(s for s in faster if s is not best)  # measured against the same text; not applied
        current = best.candidate.source
    out.final = current
    if out.applied and not out.cancelled:
        say("measuring the final text against the original", None)
        whole = Candidate(
            source=current, origin=out.applied[-1].candidate.origin, producer="optimize",
            kernel=out.applied[-1].candidate.kernel, title="all applied rewrites",
            rationale="the final text against the original", level=max(s.candidate.level for s in out.applied),
        )
        out.overall = gate.check(source, whole, cancel, budget_s=max(60.0, _left(clock, budget))).verdict
        if cancel is not None and cancel.is_set():  # stopped while measuring the final text: no result, not a miss
            out.cancelled = True
        out.evidence_after = collect(current, path, options.target, runner, backend=options.backend,
                                     cancel=cancel, profile=options.profile and not launches, untrusted=_llm_text(out))
    original = gate.original_ascend(cancel) if not out.cancelled else None
    out.ascend_original = original.to_dict() if original is not None else None
    out.declined = [d for p in proposers for d in getattr(p, "declined", [])] + replay_declined
    out.notes.extend(n for p in proposers if callable(getattr(p, "notes", None)) for n in p.notes())
    out.elapsed_s = time.monotonic() - clock.started
    out.device_wait_s = clock.excused
    if clock.excused >= 1.0:
        out.notes.append(f"waited {clock.excused:.0f} s for the device while other jobs' timings held it (outside "
                         "the time budget)")
    return out


def _verifiable(
    gate: Gate, current: str, candidates: list[tuple[str, Candidate]], declined: list[Declined]
) -> list[tuple[str, Candidate, VerificationPlan]]:
    """The candidates the gate can verify, each with its verification plan (computed here, once, and reused by
    the gate); the others (a change replay cannot express) are declined with the reason, so they cost none of the
    candidate budget."""
    kept = []
    for source_name, cand in candidates:
        plan = gate.plan(current, cand.source)
        if plan.request is not None:
            kept.append((source_name, cand, plan))
        else:
            declined.append(Declined(cand.producer, cand.kernel, f"{cand.title}: {plan.refusal}"))
    return kept


MIN_SHARE_OF_TYPICAL = 0.6  # start a candidate only with at least this share of a typical verification's seconds left


@dataclass
class BudgetClock:
    """What a task's time budget has spent: the wall time less the waits for a device that other jobs held (`bench
    --jobs N` shares one device: one task's search is not cut short by the others' timings and profiles). The waits
    are the workers' own counts (worker/device_lock.py); an LLM candidate's are not believed (gate.judge_reply)."""

    started: float = field(default_factory=lambda: time.monotonic())  # looked up at each start (tests' clock)
    excused: float = 0.0

    def spent(self) -> float:
        return time.monotonic() - self.started - self.excused

    def excuse(self, seconds: Any) -> float:
        """Leave `seconds` (a worker's reported wait) out of the budget; returns what was left out."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
            return 0.0
        seconds = min(float(seconds), time.monotonic() - self.started - self.excused)  # never more than passed
        self.excused += seconds
        return seconds


def _profiled_kernels(ev: Evidence) -> set[str]:
    """The kernels the level-2 profile saw launched at the timing shape (empty: no profile, or none recorded)."""
    profile = ev.profile or {}
    if not profile.get("timing_meaningful"):
        return set()
    return {str(rec.get("kernel")) for rec in profile.get("launches") or [] if isinstance(rec, dict)
            and rec.get("kernel")}


def _proposers_waited(proposers: Sequence[Proposer]) -> float:
    """Device waits the proposers' own runs reported so far (config search's screens)."""
    return sum(float(getattr(p, "device_wait_s", 0.0) or 0.0) for p in proposers)


def _left(clock: BudgetClock, budget: Budget) -> float:
    """Seconds the budget has left (at least a few: a candidate taken in the last second still gets a verdict)."""
    return max(5.0, budget.seconds - clock.spent())


def _llm_text(out: OptimizeResult) -> bool:
    """Whether the current text holds an applied LLM rewrite (its code runs only inside the gate's sandbox)."""
    return any(s.candidate.origin == "llm" for s in out.applied)


def _stop(cancel: threading.Event | None, out: OptimizeResult, clock: BudgetClock, budget: Budget,
          costs: Sequence[float] = ()) -> bool:
    """Whether to stop: cancelled, the budget spent, or (with `costs`, the seconds earlier verifications took) less
    left than a verification here takes: one started then is killed by the budget, which only wastes the device."""
    if cancel is not None and cancel.is_set():
        out.cancelled = True
        return True
    left = budget.seconds - clock.spent()
    typical = statistics.median(costs) if costs else 0.0
    if left <= MIN_SHARE_OF_TYPICAL * typical:
        note = "time budget spent" if left <= 0 else (
            f"time budget spent: {left:.0f} s left, less than a verification here takes (about {typical:.0f} s); "
            "no further candidate started")
        if not any(n.startswith("time budget spent") for n in out.notes):
            out.notes.append(note)
        return True
    return False


def _propose(
    current: str,
    path: str,
    target: str,
    ev: Evidence,
    proposers: Sequence[Proposer],
    feedback: dict[tuple[str, str], list[Verdict]],
    seen: set[str],
    out: OptimizeResult,
    tried: set[tuple[str, str]] = frozenset(),  # type: ignore[assignment]
    only: str | None = None,
) -> tuple[list[tuple[str, Candidate]], list[str]]:
    """(proposer name, candidate) for every new candidate of every kernel, and the proposers that waited.

    A proposer with `waits_for_recipes` (config search) is not asked while recipes the gate has not judged yet for
    the kernel have candidates: tuning launch values of a text a recipe is about to restructure spends the
    candidate budget on a text that will not stay. It takes the round after (on the restructured text, or on the
    same one if none won); recipes already judged on an earlier text do not hold it back again. `only`: the one
    kernel asked for (the others are not proposed for)."""
    module = parse_module(current)
    found: list[tuple[str, Candidate]] = []
    deferred: list[str] = []
    launched = _profiled_kernels(ev)
    for kernel in kernels_of(current):
        if only is not None and kernel != only:
            continue
        if launched and kernel not in launched and only is None:  # a fallback the timing shape never runs
            note = f"{kernel}: not launched at the timing shape (the profile), so not rewritten"
            if note not in out.notes:
                out.notes.append(note)
            continue
        ctx = RecipeContext(
            source=current, path=path, kernel=kernel, module=module, findings=tuple(ev.findings),
            target=target, profile=ev.profile,
        )
        new_for_kernel = 0
        for proposer in proposers:
            if getattr(proposer, "waits_for_recipes", False) and new_for_kernel:
                deferred.append(f"{proposer.name} ({kernel})")
                continue
            try:
                proposed = proposer.propose(ctx, feedback.get((proposer.name, kernel), []))
            except Exception as exc:
                out.notes.append(f"{proposer.name} failed on {kernel}: {type(exc).__name__}: {exc}")
                continue
            for cand in proposed:
                if cand.id not in seen and cand.source != current:
                    seen.add(cand.id)
                    found.append((proposer.name, cand))
                    new_for_kernel += (kernel, cand.producer) not in tried
    return found, deferred
