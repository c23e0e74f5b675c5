"""The verification gate: every candidate passes it before anyone sees it.

1. It parses and compiles for the target (levels 3-4 through server.engine.diagnose: the same compile the editor uses,
   which also re-diagnoses the candidate for the next round).
2. On the runner's `verify` job: fresh random inputs (several seeds) at every planned shape, the search shapes
   and at least one held-out shape, against the reference `Model` of the ORIGINAL file (a candidate cannot change
   what it is compared with) and the same reference in float64, a tolerance from the dtype, the longest sum the
   reference computes and TF32 evidence (worker harness_tolerance.py, docs/optimize.md "Tolerance"), fresh
   allocations poisoned, NaN never passing.
3. Where timing means something, baseline and candidate timed alternately at the benchmark shape; a gain inside
   run-to-run noise is no gain (timing.judge). Under `interpret` nothing is accepted as faster, and for an Ascend
   target nothing is timed off an Ascend device.
For an Ascend target, step 1 is triton-ascend (ttadapter) and BiSheng's pipeline (HFusion + HIVM, up to hivmc) on
the CPU: the candidate's record (ascend_compile.py: compiled or not with the reason, PlanMemory's UB bytes against
the target's UB, TL4xx findings gained or lost vs the original) rides in the verdict's details["ascend"], and a UB
overflow or a stop other than the hivmc step rejects it at "compile".
Rejections are Verdicts with the stage and the reason; nothing is thrown away.
"""

from __future__ import annotations

import ast
import dataclasses
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ....analysis.core.findings import Finding
from ....analysis.core.targets import DEFAULT_CUDA_TARGET
from ....analysis.rewrite.model import Candidate, Verdict
from ....analysis.trust.redaction import Redactor
from ....ascend_runner.protocol import MAX_KEPT_REFERENCES, HarnessSpec, TimingSpec, VerifyRequest
from ...trust.confined_runner import ConfinedCompiles
from ...trust.secrets import redactor as process_redactor
from .ascend_compile import NO_DEVICE, AscendCompile, applies, ascend_compile
from .faults import device_fault
from .shapes import ShapePlan
from .timing import MIN_GAIN, judge, timed_by_graph, timing_meaningful
from .verify_plan import VerificationPlan, replay_launches_for

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner

WORKER_STAGES = ("worker", "unavailable", "closed", "timeout", "cancelled")
SPILL_REJECT_BYTES, SPILL_REJECT_FACTOR = 8192, 4  # a candidate spilling past both is rejected at its compile
STARTUP_GRACE_S = 90.0  # beyond the candidate's budget: the reference's process, imports and the comparison


@dataclass
class GateConfig:
    backend: str = "interpret"  # runner backend that executes: cuda | npu | interpret
    target: str = DEFAULT_CUDA_TARGET  # compile target for the compile check
    seeds: tuple[int, ...] = (0, 1)
    repeats: int = 5  # interleaved timing repeats
    min_gain: float = MIN_GAIN
    warmup_ms: float = 25.0
    rep_ms: float = 100.0
    timeout_s: float = 600.0
    compile_check: bool = True
    # An LLM's candidate runs only inside the runner's sandbox; where none exists, only if the user opted in.
    allow_unsandboxed: bool = False

    @property
    def timing_meaningful(self) -> bool:
        return timing_meaningful(self.backend, self.target)


@dataclass
class GateResult:
    verdict: Verdict
    findings: list[Finding] = field(default_factory=list)  # levels 3-4 of the candidate (re-diagnosis)
    compile_summary: dict[str, Any] = field(default_factory=dict)
    ascend: AscendCompile | None = None  # an Ascend target's BiSheng record (ascend_compile.py)
    failing: set[str] = field(default_factory=set)  # kernels with a variant that did not compile


def compile_facts(analysis: Any) -> dict[str, Any]:
    """Registers, spills and shared memory of the first variant that compiled (what config search prunes on)."""
    primary = analysis.primary
    res = dict(primary.resources) if primary else {}
    facts: dict[str, Any] = {k: res.get(k) for k in ("registers", "spill_stores", "spill_loads", "shared")}
    facts["variant"] = primary.specialization.label if primary else None
    if analysis.error:
        facts["error"] = analysis.error
    return facts


def tolerance_summary(tolerance: Any) -> str:
    """"atol 0.059 rtol 0.0001 (float32, K=65536 (aten.cumsum), ...)" for a verify job's tolerance record (the
    worker's harness_tolerance.bound; several outputs: the loosest)."""
    if not isinstance(tolerance, dict) or not tolerance:
        return ""
    outputs = tolerance.get("outputs") if isinstance(tolerance.get("outputs"), list) else [tolerance]
    loosest = max((t for t in outputs if isinstance(t, dict)), key=lambda t: float(t.get("atol") or 0), default={})
    if not loosest:
        return ""
    text = f"atol {float(loosest.get('atol') or 0):.2g} rtol {float(loosest.get('rtol') or 0):.2g}"
    basis = str(loosest.get("basis") or "").split(":")[0]  # precision, K and scale; the arithmetic is in the record
    return f"{text} ({basis})" if basis else text


def _reject(candidate: Candidate, stage: str, reason: str, **details: Any) -> Verdict:
    return Verdict(candidate.id, False, reason, stage=stage, details=details)


def _fault(candidate: Candidate, fault: str, what: str, details: dict[str, Any],
           max_error: float | None = None) -> Verdict:
    details = {**details, "fault": fault, "faster": False}
    reason = (f"the candidate faulted on the device ({fault}): {what}. It ran in its own process (a fresh worker per "
              "verify job), so no other candidate's timing was affected")
    return Verdict(candidate.id, False, reason, stage="fault", max_error=max_error, details=details)


class Gate:
    def __init__(
        self,
        runner: Runner,
        config: GateConfig,
        shapes: ShapePlan,
        path: str,
        reference_source: str | None = None,
        launches: list[dict[str, Any]] | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        """`reference_source`: the original text; the reference Model always comes from it, whatever the
        baseline (the text the candidate is timed against) is. `launches`: recorded launches to replay instead
        of a KernelBench Model (replay.py): the original text's kernels are then the reference."""
        self.runner, self.config, self.shapes, self.path = runner, config, shapes, path
        self.reference_source = reference_source
        self.launches = list(launches or [])
        # Verdicts carry what a candidate printed or raised: any key or token of this process is taken out.
        self.redactor = redactor if redactor is not None else process_redactor()
        self._original_result: GateResult | None = None  # the original text's compile check, run once
        self._references: dict[str, str] = {}  # reference outputs the runner kept: key -> digest, oldest first
        self._lock = threading.Lock()

    # -- 1. compile --------------------------------------------------------------------------------------
    def compile_check(
        self, source: str, cancel: threading.Event | None, untrusted: bool = False
    ) -> tuple[str | None, GateResult]:
        """(error or None, partial result with the candidate's level 3-4 findings). `untrusted` (an LLM's text):
        compiled in a confined fresh worker, since compiling runs the file's module-level code."""
        from ..diagnose import analyze_document, find_pyproject_overrides

        out = GateResult(Verdict("", True, ""))
        runner = ConfinedCompiles(self.runner, self.config.allow_unsandboxed) if untrusted else self.runner
        analyses = analyze_document(
            source,
            self.path,
            self.config.target,
            runner,
            overrides=find_pyproject_overrides(self.path),
            cancel=cancel,
        )
        if applies(self.config.target):
            original = self.original_ascend(cancel) if source != self.reference_source else None
            out.ascend = ascend_compile(analyses, self.config.target, original)
        error: str | None = None
        # A kernel the original text does not compile either (values guessed for a kernel no launch was recorded
        # of, an API this Triton lacks) is not the candidate's failure: only new failures reject it.
        failing_before = self.original_failures(cancel) if source != self.reference_source else set()
        for analysis in analyses:
            out.findings.extend(analysis.findings)
            out.compile_summary[analysis.kernel] = compile_facts(analysis)
            if analysis.runner_unavailable:
                out.compile_summary[analysis.kernel]["not_compiled"] = analysis.error
                continue
            for variant in analysis.variants:
                errors = [e for e in variant.errors if e.stage not in WORKER_STAGES]
                if not variant.ok and errors:
                    out.failing.add(analysis.kernel)
                if error is None and not variant.ok and errors and analysis.kernel not in failing_before:
                    first = errors[0]
                    where = f" (line {first.line})" if first.line else ""
                    error = (
                        f"does not compile for {self.config.target}: {analysis.kernel} "
                        f"[{variant.specialization.label}] {first.stage}: {first.message.strip()[:400]}{where}"
                    )
        # an Ascend target: BiSheng's verdict, with the cause attributed (a missing API, a UB overflow) comes first
        ascend_error = out.ascend.rejection() if out.ascend is not None else None
        if error is None and source != self.reference_source:
            error = self._spills_far_more(out, cancel)
        return ascend_error or error, out

    def _spills_far_more(self, out: GateResult, cancel: threading.Event | None) -> str | None:
        """A kernel that spills far more than the original's (SPILL_REJECT_BYTES and SPILL_REJECT_FACTOR times
        as much): its local-memory traffic makes it slower for certain, and verifying it cost a task's budget (a
        row-block candidate with 29,580 spilled bytes took 111 s on blind set 7 and ran at 0.04x)."""
        before = self._original(cancel)
        for kernel, facts in out.compile_summary.items():
            spills = int(facts.get("spill_stores") or 0)
            was = int(((before.compile_summary if before else {}).get(kernel) or {}).get("spill_stores") or 0)
            if spills > SPILL_REJECT_BYTES and spills > SPILL_REJECT_FACTOR * max(was, 1):
                return (f"{kernel} spills {spills} bytes of registers to local memory (the original: {was}); "
                        "compile result, not timed")
        return None

    def _original(self, cancel: threading.Event | None) -> GateResult | None:
        """The original text's own compile check, run once: what a candidate's failures and TL4xx are compared with."""
        if self.reference_source is None:
            return None
        with self._lock:
            if self._original_result is None:
                self._original_result = self.compile_check(self.reference_source, cancel)[1]
            return self._original_result

    def original_failures(self, cancel: threading.Event | None = None) -> set[str]:
        """Kernels of the original text that do not compile (with the same inputs the candidate gets)."""
        res = self._original(cancel)
        return set(res.failing) if res is not None else set()

    def original_ascend(self, cancel: threading.Event | None = None) -> AscendCompile | None:
        """The original text's Ascend record (what a candidate's TL4xx findings are compared with); None without
        an original text or an Ascend target."""
        if not applies(self.config.target):
            return None
        res = self._original(cancel)
        return res.ascend if res is not None else None

    # -- 2 + 3. verify and time --------------------------------------------------------------------------
    def plan(self, baseline_source: str, candidate_source: str) -> VerificationPlan:
        """The candidate's verify request against `baseline_source` (or why replay cannot verify it): a replay of
        the recorded launches when there are any, else the KernelBench comparison at every planned shape. Computed
        once per candidate and handed back to `check`."""
        cfg = self.config
        timing = TimingSpec(warmup_ms=cfg.warmup_ms, rep_ms=cfg.rep_ms)
        original = self.reference_source
        reference = original if original is not None and original != baseline_source else None
        if self.launches:
            replayed = replay_launches_for(self.launches, original or baseline_source, baseline_source,
                                           candidate_source)
            if isinstance(replayed, str):
                return VerificationPlan(baseline_source, candidate_source, None, replayed)
            request = VerifyRequest(
                harness=HarnessSpec(mode="replay", path=self.path, source=candidate_source),
                launches=replayed,
                seeds=list(cfg.seeds),
                baseline_source=baseline_source,
                time=cfg.timing_meaningful,
                timing=timing,
                interleave={"repeats": cfg.repeats},
                reference_source=reference,
                backend=cfg.backend,
            )
            return VerificationPlan(baseline_source, candidate_source, request)
        interleave = None
        if cfg.timing_meaningful:
            t = self.shapes.timing
            interleave = {"repeats": cfg.repeats, "overrides": dict(t.overrides), "label": t.label}
        request = VerifyRequest(
            harness=HarnessSpec(mode="kernelbench", path=self.path, source=candidate_source),
            seeds=list(cfg.seeds),
            shapes=[s.to_payload() for s in self.shapes.all],
            baseline_source=baseline_source,
            poison=True,
            time=cfg.timing_meaningful,
            timing=timing,
            reference_source=reference,
            interleave=interleave,
            backend=cfg.backend,
        )
        return VerificationPlan(baseline_source, candidate_source, request)

    def check(
        self,
        baseline_source: str,
        candidate: Candidate,
        cancel: threading.Event | None = None,
        plan: VerificationPlan | None = None,
        budget_s: float | None = None,
    ) -> GateResult:
        """`budget_s`: the seconds the optimize budget has left; the candidate's process is killed then."""
        try:
            ast.parse(candidate.source)
        except SyntaxError as exc:
            return GateResult(_reject(candidate, "compile", f"syntax error on line {exc.lineno}: {exc.msg}"))
        result = GateResult(Verdict(candidate.id, False, ""))
        if plan is None or not plan.matches(baseline_source, candidate.source):
            plan = self.plan(baseline_source, candidate.source)
        if plan.request is None:
            result.verdict = _reject(candidate, "replay", plan.refusal or "replay cannot verify it")
            return result
        began = time.monotonic()
        if self.config.compile_check:
            error, result = self.compile_check(candidate.source, cancel, untrusted=candidate.origin == "llm")
            ascend = {"ascend": result.ascend.to_dict()} if result.ascend is not None else {}
            if error:
                result.verdict = _reject(candidate, "compile", error, compile=result.compile_summary, **ascend)
                return result
        if cancel is not None and cancel.is_set():
            result.verdict = _reject(candidate, "cancelled", "cancelled before verification")
            return result
        compile_s = time.monotonic() - began
        request = self.trusted(plan.request, candidate, budget_s)
        began = time.monotonic()
        reply = self.send(request, cancel)
        verify_s = time.monotonic() - began
        self._remember_reference(reply)
        cut = request.budget_s if budget_s is not None and budget_s < self.config.timeout_s else None
        verdict = self.judge_reply(candidate, reply, result.compile_summary, budget_cut_s=cut)
        if result.ascend is not None:
            verdict.details["ascend"] = result.ascend.to_dict()
        # where the verification's seconds went: the compile check here, the verify job (its phases as the worker
        # measured them, a shared device's waits among them)
        verdict.details["seconds"] = {"compile_check": round(compile_s, 2), "verify_job": round(verify_s, 2),
                                      **verdict.details.get("seconds", {})}
        result.verdict = self.redacted(verdict)
        return result

    def trusted(self, request: VerifyRequest, candidate: Candidate, budget_s: float | None) -> VerifyRequest:
        """The plan's request with what depends on who wrote the candidate: an LLM's text runs confined, it must
        launch the kernel it rewrites (KernelBench form), and its process is killed at the budget's seconds."""
        cfg = self.config
        kernels = [candidate.kernel] if candidate.kernel and request.harness.mode == "kernelbench" else []
        return dataclasses.replace(
            request,
            untrusted=candidate.origin == "llm",
            allow_unsandboxed=cfg.allow_unsandboxed,
            kernels=kernels,
            budget_s=min(cfg.timeout_s, budget_s) if budget_s is not None else cfg.timeout_s,
            kept_references=self._kept_references(),
        )

    def _remember_reference(self, reply: dict[str, Any]) -> None:
        """The key and secret of the reference outputs a verify job computed: the runner keeps them sealed with the
        secret, and only a later job of this gate, which sends it back, can reuse them (worker/sealed.py)."""
        kept = (reply.get("result") or {}).get("reference_kept") if isinstance(reply.get("result"), dict) else None
        if isinstance(kept, dict) and isinstance(kept.get("key"), str) and isinstance(kept.get("secret"), str):
            with self._lock:
                self._references.pop(kept["key"], None)
                self._references[kept["key"]] = kept["secret"]
                while len(self._references) > MAX_KEPT_REFERENCES:
                    self._references.pop(next(iter(self._references)))

    def _kept_references(self) -> dict[str, str]:
        with self._lock:
            return dict(self._references)

    def send(self, request: VerifyRequest, cancel: threading.Event | None = None) -> dict[str, Any]:
        """The runner's verify reply to `request` (an envelope: ok, result or error)."""
        wall = float(request.budget_s or self.config.timeout_s) + STARTUP_GRACE_S
        return self.runner.verify(self.config.backend, request, cancel=cancel, timeout_s=wall)

    def redacted(self, verdict: Verdict) -> Verdict:
        if not self.redactor:
            return verdict
        return dataclasses.replace(verdict, reason=self.redactor.text(verdict.reason),
                                   details=self.redactor.data(verdict.details))

    def judge_reply(
        self, candidate: Candidate, reply: dict[str, Any], compiled: dict[str, Any], budget_cut_s: float | None = None
    ) -> Verdict:
        """Turn the runner's verify reply into a Verdict (pure: unit-testable on recorded replies). `budget_cut_s`:
        the seconds the optimize budget had left when it was shorter than the gate's own timeout; a candidate killed
        then was cut by the budget, which says nothing about the candidate (stage "budget", never "correctness")."""
        details: dict[str, Any] = {"compile": compiled, "backend": self.config.backend}
        res0 = reply.get("result") if isinstance(reply.get("result"), dict) else {}
        if res0.get("sandbox"):
            details["sandbox"] = res0["sandbox"]  # how the candidate's process was confined, or why it was not
        if isinstance(res0.get("seconds"), dict):
            details["seconds"] = {k: v for k, v in res0["seconds"].items() if isinstance(v, (int, float))}
        if candidate.origin != "llm" and isinstance(res0.get("device_wait_s"), (int, float)):
            # waits for other jobs' holds, outside the budget; an LLM's process could claim any wait
            details["device_wait_s"] = res0["device_wait_s"]
        if not reply.get("ok"):
            error = reply.get("error") or {}
            message = error.get("message") if isinstance(error, dict) else str(error)
            fault = device_fault(str(message))
            if fault:  # the candidate's own worker died: that worker was fresh and is gone; nothing else is touched
                return _fault(candidate, fault, f"its verify job's worker died: {message}", details)
            return Verdict(candidate.id, False, f"the runner failed: {message}", stage="runner", details=details)
        res = dict(reply.get("result") or {})
        checks = list(res.get("checks") or [])
        details.update(
            checks=checks,
            mode=res.get("mode", "kernelbench"),
            tolerance=res.get("tolerance"),
            shapes=[s.to_payload() for s in self.shapes.all],
            shapes_note=self.shapes.source_note,
            seeds=list(self.config.seeds),
            errors=res.get("errors") or [],
            reference_outputs=res.get("reference_outputs"),
        )
        errs = [abs(c["max_abs"]) for c in checks if c.get("max_abs") is not None]
        max_error = max(errs) if errs else None
        if not res.get("ok", False):
            why = "; ".join(res.get("errors") or ["the verify job failed"])
            if device_fault(why):
                return _fault(candidate, device_fault(why) or "", f"could not run: {why}", details)
            return Verdict(candidate.id, False, f"could not run: {why}", stage="compile", details=details)
        if budget_cut_s is not None and res.get("timed_out_s") is not None:
            return Verdict(candidate.id, False, f"not verified: the optimize time budget had {budget_cut_s:.0f} s left "
                           "when it started, and its verification ran past them (the budget's cut, no verdict on "
                           "the candidate)", stage="budget", details=details)
        failed = [c for c in checks if not c.get("passed")]
        if failed:
            first = next((c for c in failed if not c.get("held_out")), failed[0])
            fault = device_fault(str(first.get("reason")))
            if fault:
                where = f"shape {first.get('shape')} seed {first.get('seed')}"
                return _fault(candidate, fault, f"{where}: {first.get('reason')}", details, max_error)
            stage = "unseen-shape" if first.get("held_out") else "correctness"
            if "CompilationError" in str(first.get("reason")):
                stage = "compile"
            where = f"shape {first.get('shape')} seed {first.get('seed')}"
            if stage == "unseen-shape":
                where += " (held out: never used while searching)"
            return Verdict(
                candidate.id, False, f"{where}: {first.get('reason')}", stage=stage,
                max_error=max_error, details=details,
            )
        if not res.get("passed", False) or not checks:
            return Verdict(candidate.id, False, "the verify job checked nothing", stage="correctness", details=details)
        n_shapes = len({c.get("shape") for c in checks})
        correct = f"correct on {n_shapes} shape(s) x {len(self.config.seeds)} seed(s)"
        if max_error is not None:
            correct += f", max error {max_error:.1g}"
        within = tolerance_summary(res.get("tolerance"))
        if within:
            correct += f" within {within}"
        if not res.get("timing_meaningful", True) or not self.config.timing_meaningful:
            details.update(faster=False, timing_meaningful=False)
            why = f"{self.config.backend} timings say nothing about hardware"
            if applies(self.config.target) and self.config.backend != "npu":
                why = f"{NO_DEVICE} ({why})" if self.config.backend == "interpret" else NO_DEVICE
            reason = f"verified correct ({correct}); not timed: {why}"
            return Verdict(candidate.id, True, reason, stage="", max_error=max_error, details=details)
        timing = dict(res.get("timing") or {})
        verdict_t = judge(list(timing.get("baseline_ms") or []), list(timing.get("candidate_ms") or []),
                          self.config.min_gain, by_graph=timed_by_graph(timing))
        details.update(timing=timing, judgement=verdict_t.to_dict(), timing_meaningful=True,
                       faster=verdict_t.faster, device=(timing.get("device") or {}).get("name"))
        if not verdict_t.faster:
            problems = "; ".join(res.get("errors") or [])
            return Verdict(
                candidate.id, False, f"{verdict_t.reason} ({correct})" + (f": {problems}" if problems else ""),
                stage="timing",
                speedup=verdict_t.speedup, spread=verdict_t.spread, max_error=max_error, details=details,
            )
        return Verdict(
            candidate.id, True, f"{verdict_t.reason}; {correct}", stage="",
            speedup=verdict_t.speedup, spread=verdict_t.spread, max_error=max_error, details=details,
        )
