"""The IR view: the `tritonlens/ir` request answers one compiled stage of a kernel (its text, the IR-line to
source-line map, the compiler's summary) from the compile service's stored analysis, compiling it when none is
stored (IrViewFeature)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ...analysis.compiler.stages import ordered
from ...analysis.core.targets import platform_of
from ..lsp.commands import CommandError
from ..lsp.feature import Feature
from ..trust.workspace_trust import refusal_for_command
from .compile import ANALYZE_COMMAND, CompileFeature

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

IR_REQUEST = "tritonlens/ir"


class IrViewFeature(Feature):
    name = "ir-view"
    server: TritonLensServer  # set by register

    def __init__(self, compile: CompileFeature) -> None:
        super().__init__()
        self.compile = compile

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        self.add_request(IR_REQUEST, self.ir_request)

    async def ir_request(self, ls: Any, params: Any) -> dict[str, Any]:
        service = self.compile.service
        get = params.get if isinstance(params, dict) else lambda k, d=None: getattr(params, k, d)
        uri, kernel, stage = get("uri"), get("kernel"), get("stage")
        if not isinstance(uri, str) or not isinstance(kernel, str):
            return {"error": "tritonlens/ir needs {uri, kernel, stage}", "stages": []}
        try:
            target = service.target_for(uri, get("target"))
        except CommandError as exc:
            return {"error": str(exc), "stages": []}
        analysis = service.stored(uri, kernel, target)
        if analysis is None:
            refusal = refusal_for_command(ls, ANALYZE_COMMAND)  # compiling imports the file: trust decides
            if refusal:
                return {"error": refusal, "stages": [], "target": target}
            try:
                analysis = await service.analyze(uri, kernel, target, threading.Event())
            except CommandError as exc:  # e.g. the document is not open: a sentence, not a traceback
                return {"error": str(exc), "stages": [], "target": target}
        if analysis is None:
            return {"error": "the document changed; ask again", "stages": [], "target": target}
        primary = analysis.primary
        if primary is None:
            return {"error": analysis.error or "the kernel did not compile", "stages": [], "target": target}
        # the platform's declared stages in compile order (analysis/compiler/stages.py), then anything else
        stages = ordered(primary.stages, platform_of(target))
        stage = (
            stage if isinstance(stage, str) and stage in primary.stages else (stages[0] if stages else None)
        )
        return {
            "kernel": kernel,
            "target": target,
            "variant": primary.specialization.label,
            "stage": stage,
            "stages": stages,
            "text": primary.stages.get(stage, "") if stage else "",
            "lineMap": [list(p) for p in primary.line_maps.get(stage, [])] if stage else [],
            "summary": analysis.summary,
        }
