"""Level 5 in the language server: `tritonlens.optimizeKernel` (code lens per kernel and the palette) runs the
optimize engine (server/engine/optimize, the same loop as `tritonlens optimize`) in the background with
`$/progress` and cancellation. Each verified result becomes a code action: `quickfix` on a finding it resolves
(its evidence codes), `refactor.rewrite` for a whole-kernel rewrite, titled with what was measured; the edit is
computed in codeAction/resolve against the exact version that was verified (dropped when the buffer changed) and
annotated so the editor previews it. The kernel's hover shows the verification record; `tritonlens/candidate`
returns a candidate's full text and diff (for a diff view). The server never writes files.

Settings: `tritonlens.optimizeBudget` ("candidates=N,rounds=N,seconds=S"), `tritonlens.llm` {baseUrl|endpoint,
model, apiKeyEnv, tokenBudget, timeoutSeconds} for the LLM proposer (engine/optimize/llm.py, the CLI's); runner and backend as for profiling (profile_lsp).
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from lsprotocol import types

from ..lsp.commands import CommandError, arg
from ..lsp.feature import Feature
from ..lsp.progress import work_done
from .compile import CompileFeature, CompileService
from .optimize_present import Offer, action_title, hover_record, line_edits, offers, summary_row
from .profile import ProfileFeature, ProfileService

if TYPE_CHECKING:
    from ..engine.optimize.loop import Budget, OptimizeResult
    from ..engine.optimize.proposers import Proposer
    from ..lsp.core import TritonLensServer

log = logging.getLogger(__name__)

OPTIMIZE_COMMAND = "tritonlens.optimizeKernel"
CANDIDATE_REQUEST = "tritonlens/candidate"
DIFF_COMMAND = "tritonlens.showCandidateDiff"  # implemented by the VS Code client
PROVIDER = "optimize"
# The optimize engine is imported when a run starts, never at server start (issue 23: the first answer needs none
# of it; about 0.1 s of imports).
DEFAULT_BUDGET = {"candidates": 12, "rounds": 2, "seconds": 900.0}


@dataclass
class Stored:
    uri: str
    version: int
    text: str  # the buffer that was optimized: offers apply to exactly this text
    kernel: str | None
    result: OptimizeResult
    offers: list[Offer] = field(default_factory=list)

    def current_for(self, doc: Any) -> bool:
        return doc is not None and doc.version == self.version and doc.text == self.text


class OptimizeService:
    def __init__(
        self, server: TritonLensServer, compile: CompileService, profiler: ProfileService | None = None
    ) -> None:
        """`profiler` picks the runner and backend as profiling does; without it, the local runner under
        interpret."""
        self.server, self.compile, self.profiler = server, compile, profiler
        self.results: dict[str, Stored] = {}  # uri -> the last run
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tritonlens-optimize")

    def _budget(self, uri: str) -> Budget:
        from ..engine.optimize.loop import Budget

        raw = self.server.config.for_uri(uri).raw
        text = raw.get("optimizeBudget") if isinstance(raw, dict) else None
        if isinstance(text, str) and text.strip():
            try:
                return Budget.parse(text)
            except ValueError as exc:
                self.server.show_once(f"tritonlens.optimizeBudget: {exc}; using the default")
        return Budget(**DEFAULT_BUDGET)

    def _llm(self, uri: str) -> Proposer | None:
        from ..engine.optimize.proposers import llm_proposer

        settings = self.server.config.for_uri(uri).extra.get("llm") or {}
        base_url = settings.get("baseUrl") or settings.get("endpoint")
        try:
            return llm_proposer(
                base_url, settings.get("model"), api_key_env=settings.get("apiKeyEnv"),
                token_budget=settings.get("tokenBudget"), timeout_s=settings.get("timeoutSeconds"),
            )
        except ValueError as exc:  # a missing key variable or a bad number: said once, recipes still run
            self.server.show_once(f"tritonlens.llm: {exc}; optimizing without the LLM")
            return None

    async def optimize(
        self, uri: str, kernel: str | None, progress: Any, evidence: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        from ..engine.optimize.gate import GateConfig
        from ..engine.optimize.loop import OptimizeOptions, optimize_source
        from ..engine.optimize.proposer_set import build_proposers

        doc = await self.server.current(uri)
        if doc is None:
            raise CommandError(f"{uri} is not open")
        names = [k.name for k in doc.analysis.kernels] if doc.analysis else []
        if kernel is not None and kernel not in names:
            raise CommandError(f"no Triton kernel named {kernel!r} in {uri}")
        version, text, path = doc.version, doc.text, doc.path or uri
        profiler = self.profiler
        loop = asyncio.get_running_loop()
        try:
            if profiler is not None:
                choice = profiler.choose_runner(uri)
                backend = await loop.run_in_executor(self._pool, profiler.backend, uri, choice)
                runner, owned = choice.runner, choice.owned
            else:
                runner, owned, backend = self.compile.runner(uri), False, "interpret"
        except RuntimeError as exc:
            raise CommandError(str(exc)) from None
        target = self.compile.target_for(uri)
        # Under interpret config search has nothing to time: the editor leaves it out (the CLI reports it declined).
        proposers = build_proposers(runner, target, backend, config_search=backend != "interpret",
                                    llm=self._llm(uri), cancel=progress.cancel_event)
        llm_settings = self.server.config.for_uri(uri).extra.get("llm") or {}
        gate = GateConfig(backend=backend, target=target,
                          allow_unsandboxed=llm_settings.get("allowUnsandboxed") is True)  # an explicit opt-in only
        options = OptimizeOptions(target=target, backend=backend, budget=self._budget(uri), kernel=kernel, gate=gate)

        def report(message: str, fraction: float | None) -> None:
            pct = None if fraction is None else max(1, min(99, int(fraction * 100)))
            loop.call_soon_threadsafe(progress.report, message, pct)

        try:
            result = await loop.run_in_executor(
                self._pool,
                lambda: optimize_source(text, path, runner, options, proposers, progress=report,
                                        cancel=progress.cancel_event),
            )
        finally:
            if owned:
                runner.close()
        if kernel is not None:
            result.notes.append(f"optimized {kernel} only (the other kernels of the file were not proposed for)")
        found = offers(result)
        if evidence:  # asked from a finding: that finding's kernel and cause first
            result.notes.append(f"asked from {evidence.get('code')} at line {evidence.get('line')}")
            found.sort(key=lambda o: (o.candidate.kernel != kernel, evidence.get("code") not in o.candidate.evidence))
        stored = Stored(uri, version, text, kernel, result, found)
        self.results[uri] = stored
        self.server.lenses_changed()
        return self._summary(stored)

    @staticmethod
    def _summary(stored: Stored) -> dict[str, Any]:
        r = stored.result
        return {
            "uri": stored.uri,
            "version": stored.version,
            "backend": r.backend,
            "target": r.target,
            "timingMeaningful": r.timing_meaningful,
            "error": r.error,
            "cancelled": r.cancelled,
            "offers": [summary_row(o) for o in stored.offers],
            "rejected": [
                {"id": s.candidate.id, "title": s.candidate.title, "stage": s.verdict.stage, "reason": s.verdict.reason}
                for s in r.rejected
            ],
            "declined": [vars(d) for d in r.declined],
            "notes": list(r.notes),
        }

    def stored(self, doc: Any) -> Stored | None:
        hit = self.results.get(doc.uri)
        return hit if hit is not None and hit.current_for(doc) else None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _diff_link(uri: str, cid: str) -> str:
    """A command link to the client's diff view of the candidate (clients without the command ignore it)."""
    args = quote(json.dumps([uri, cid]))
    return f"[Show the diff against the buffer](command:{DIFF_COMMAND}?{args})"


def _shape(stored: Stored) -> str:
    shapes = stored.result.shapes
    return shapes.timing.label if shapes is not None else "the benchmark shape"


def code_actions(service: OptimizeService, ls: Any, doc: Any, rng: types.Range) -> list[types.CodeAction]:
    from ..lsp.convert import plain_text, to_diagnostic
    from ..lsp.views import lines_for

    stored = service.stored(doc)
    if stored is None or doc.analysis is None:
        return []  # nothing verified for this exact text: a changed buffer drops every offer
    lines = lines_for(ls, doc)
    start, end = lines.from_lsp(rng.start), lines.from_lsp(rng.end)
    kernels = {k.name: k for k in doc.analysis.kernels}
    out: list[types.CodeAction] = []
    for offer in stored.offers:
        c = offer.candidate
        resolved = [
            f for f in ls.visible_findings(doc)
            if f.code in c.evidence and (f.span.line, f.span.col) <= end and start <= (f.span.end_line, f.span.end_col)
        ]
        k = kernels.get(c.kernel)
        in_kernel = k is not None and k.span.line <= start[0] <= k.span.end_line
        if not resolved and not in_kernel:
            continue
        quick = bool(resolved) and not offer.whole
        action = types.CodeAction(
            title=plain_text(action_title(offer, _shape(stored))),
            kind=types.CodeActionKind.QuickFix if quick else types.CodeActionKind.RefactorRewrite,
            diagnostics=[to_diagnostic(f, lines, doc.uri, doc.analysis.version) for f in resolved] or None,
            is_preferred=quick and offer.timed,
            data={"provider": PROVIDER, "uri": doc.uri, "version": stored.version, "id": offer.id},
        )
        out.append(action)
    return out


async def resolve(service: OptimizeService, ls: Any, action: types.CodeAction) -> types.CodeAction:
    """The edit, for the version that was verified; none when the buffer changed since (the action is dropped)."""
    from ..lsp.views import lines_for

    data = action.data if isinstance(action.data, dict) else {}
    doc = await ls.current(str(data.get("uri")))
    stored = service.stored(doc) if doc is not None else None
    offer = next((o for o in stored.offers if o.id == data.get("id")), None) if stored else None
    if stored is None or offer is None or data.get("version") != stored.version:
        action.data = {**data, "stale": True}
        return action
    lines = lines_for(ls, doc)
    annotation_id = f"tritonlens-{offer.id}"
    edits: list[Any] = [
        types.AnnotatedTextEdit(
            range=types.Range(lines.to_lsp(a + 1, 0), lines.to_lsp(b + 1, 0)), new_text=text, annotation_id=annotation_id
        )
        for a, b, text in line_edits(stored.text, offer.candidate.source)
    ]
    label = "LLM-written rewrite, verified" if offer.candidate.origin == "llm" else "verified rewrite"
    ident = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=stored.version)
    action.edit = types.WorkspaceEdit(
        document_changes=[types.TextDocumentEdit(text_document=ident, edits=edits)],
        change_annotations={
            annotation_id: types.ChangeAnnotation(
                # verified: applied in one step (issue 23); an editor's preview shows the edits ticked
                label=label, needs_confirmation=False, description=offer.verdict.reason[:300]
            )
        },
    )
    return action


class OptimizeFeature(Feature):
    """`tritonlens.optimizeKernel`, `tritonlens/candidate`, verified rewrites as code actions, lens and hover."""

    name = PROVIDER
    server: TritonLensServer  # set by register

    def __init__(self, compile: CompileFeature, profile: ProfileFeature | None = None) -> None:
        super().__init__()
        self.compile, self.profile = compile, profile

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        profiler = self.profile.service if self.profile is not None else None
        self.service = OptimizeService(server, self.compile.service, profiler)
        server.commands.add(OPTIMIZE_COMMAND, "Optimize this kernel (verified rewrites)", self.optimize_command)
        self.add_request(CANDIDATE_REQUEST, self.candidate_request)

    async def optimize_command(self, ls: Any, args: list[Any]) -> dict[str, Any]:
        uri = arg(args, 0, str, "document URI")
        kernel = args[1] if len(args) > 1 and args[1] else None
        if kernel is not None and not isinstance(kernel, str):
            raise CommandError("argument 2 (kernel name) must be a string")
        evidence = args[2] if len(args) > 2 and isinstance(args[2], dict) else None  # {code, line} of a finding
        async with work_done(ls, f"tritonlens: optimizing {kernel or uri.rsplit('/', 1)[-1]}") as progress:
            return await self.service.optimize(uri, kernel, progress, evidence)

    def code_actions(self, doc: Any, rng: types.Range) -> list[types.CodeAction]:
        return code_actions(self.service, self.server, doc, rng)

    async def resolve_action(self, action: types.CodeAction) -> types.CodeAction:
        return await resolve(self.service, self.server, action)

    async def candidate_request(self, ls: Any, params: Any) -> dict[str, Any]:
        from ..engine.optimize.report import unified_diff

        service = self.service
        get = params.get if isinstance(params, dict) else lambda k, d=None: getattr(params, k, d)
        uri, cid = get("uri"), get("id")
        if not isinstance(uri, str) or not isinstance(cid, str):
            return {"error": f"{CANDIDATE_REQUEST} needs {{uri, id}}"}
        stored = service.results.get(uri)
        offer = next((o for o in stored.offers if o.id == cid), None) if stored else None
        if stored is None or offer is None:
            return {"error": f"no verified candidate {cid} for {uri} (run {OPTIMIZE_COMMAND} first)"}
        doc = ls.docs.get(uri)
        return {
            **summary_row(offer),
            "uri": uri,
            "version": stored.version,
            "current": stored.current_for(doc),
            "source": offer.candidate.source,
            "diff": unified_diff(stored.text, offer.candidate.source, uri.rsplit("/", 1)[-1]),
            "reason": offer.verdict.reason,
            "rationale": offer.candidate.rationale,
        }

    def lens_kernels(self, version: Any) -> set[str] | None:
        return None

    def lens_command(self, doc: Any, kernel: Any, findings: list[Any]) -> types.Command:
        stored = self.service.stored(doc)
        mine = [o for o in stored.offers if o.candidate.kernel == kernel.name] if stored else []
        if mine:
            best = max((o.verdict.speedup or 0.0 for o in mine), default=0.0)
            title = f"tritonlens: {len(mine)} verified rewrite(s)" + (f", best {best:.2g}x" if best else ", not timed")
        elif stored is not None:
            title = f"tritonlens: no verified rewrite ({len(stored.result.rejected)} rejected); optimize again"
        else:
            title = "tritonlens: optimize"
        return types.Command(title=title, command=OPTIMIZE_COMMAND, arguments=[doc.uri, kernel.name])

    def hover(self, doc: Any, line: int, col: int) -> str | None:
        stored = self.service.stored(doc)
        if stored is None or doc.analysis is None:
            return None
        for k in doc.analysis.kernels:
            if k.span.line <= line <= k.name_span.line:
                records = [
                    hover_record(o, stored.result) + "\n\n" + _diff_link(doc.uri, o.id)
                    for o in stored.offers if o.candidate.kernel == k.name
                ]
                return "\n\n---\n\n".join(records) if records else None
        return None

    def on_document_closed(self, uri: str) -> None:
        self.service.results.pop(uri, None)

    def shutdown(self) -> None:
        self.service.close()
