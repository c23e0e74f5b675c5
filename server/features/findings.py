"""Each kernel's findings: a code lens ("tritonlens: 2 findings (1 warning, 1 hint)"), the
`tritonlens.kernelFindings` command it runs, and the `tritonlens/kernels` list of every kernel in the workspace
(with every feature's fields, `Feature.kernel_fields`)."""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path

from ...analysis.core.findings import Finding
from ..lsp.commands import arg
from ..lsp.convert import plain_text
from ..lsp.feature import Feature
from ..lsp.views import kernel_findings_of
from .workspace import WorkspaceFeature
from .workspace_index import findings_by_kernel

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

log = logging.getLogger("tritonlens.lsp")

KERNEL_FINDINGS_COMMAND = "tritonlens.kernelFindings"
KERNELS_REQUEST = "tritonlens/kernels"


def summary(findings: list[Finding]) -> str:
    if not findings:
        return "tritonlens: no findings"
    counts: dict[str, int] = {}
    for f in findings:
        name = f.severity.name.lower()
        counts[name] = counts.get(name, 0) + 1
    detail = ", ".join(f"{n} {s}" for s, n in counts.items())
    plural = "s" if len(findings) != 1 else ""
    return f"tritonlens: {len(findings)} finding{plural} ({detail})"


def _finding_row(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "message": plain_text(f.message),
        "severity": f.severity.name.lower(),
        "level": int(f.level),
        "line": f.span.line,
        "col": f.span.col,
    }


def kernel_finding_rows(
    server: TritonLensServer, uri: str, name: str, workspace: WorkspaceFeature | None = None
) -> list[dict[str, Any]]:
    """The findings of one kernel, as the kernels list shows them: an open document's kernel from its analysis
    (O(that kernel), never the whole workspace), a closed file's from the workspace rows."""
    doc = server.docs.get(uri)
    if doc is not None and doc.analysis is not None:
        for k in doc.analysis.kernels:
            if k.name == name:
                return [_finding_row(f) for f in kernel_findings_of(server, doc, k)]
        return []
    rows = [r for r in kernels(server, workspace) if r["uri"] == uri and r["name"] == name]
    return rows[0]["findings"] if rows else []


def kernels(server: TritonLensServer, workspace: WorkspaceFeature | None = None) -> list[dict[str, Any]]:
    """Every kernel in the workspace: open documents from the editor's text, the rest from disk."""
    rows: list[dict[str, Any]] = []
    open_paths = set()
    for doc in server.docs.values():
        open_paths.add(os.path.abspath(doc.path))
        if doc.analysis is None:
            continue
        for k in doc.analysis.kernels:
            row = {
                "uri": doc.uri,
                "path": doc.path,
                "name": k.name,
                "line": k.name_span.line,
                "findings": [_finding_row(f) for f in kernel_findings_of(server, doc, k)],
                "open": True,
            }
            for feature in server.features:
                try:
                    row.update(feature.kernel_fields(doc, k))
                except Exception:
                    log.exception("%s.kernel_fields failed", type(feature).__name__)
            rows.append(row)
    indexed = workspace.indexed_files() if workspace is not None else []
    for entry in indexed:
        if entry.path in open_paths:
            continue
        uri = from_fs_path(entry.path) or entry.path
        settings = server.config.for_uri(uri).settings
        if settings.target == "auto":
            settings = replace(settings, file_platforms=entry.platforms)
        groups = findings_by_kernel(entry.findings, [(k.name, k.start_line, k.end_line) for k in entry.kernels])
        for k, grouped in zip(entry.kernels, groups, strict=True):
            found = settings.apply(grouped)
            rows.append(
                {
                    "uri": uri,
                    "path": entry.path,
                    "name": k.name,
                    "line": k.line,
                    "findings": [_finding_row(f) for f in found],
                    "open": False,
                }
            )
    rows.sort(key=lambda r: (r["path"], r["line"]))
    return rows


class FindingsFeature(Feature):
    name = "findings"
    server: TritonLensServer  # set by register

    def __init__(self, workspace: WorkspaceFeature | None = None) -> None:
        super().__init__()
        self.workspace = workspace  # the closed files it indexed get rows too

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        server.commands.add(KERNEL_FINDINGS_COMMAND, "Show this kernel's findings", self.show_findings)
        self.add_request(KERNELS_REQUEST, self.list_kernels)

    def list_kernels(self, ls: Any, params: Any) -> list[dict[str, Any]]:
        return kernels(ls, self.workspace)

    async def show_findings(self, ls: Any, args: list[Any]) -> list[dict[str, Any]]:
        uri = arg(args, 0, str, "document URI")
        name = arg(args, 1, str, "kernel name")
        findings = kernel_finding_rows(ls, uri, name, self.workspace)  # one kernel's work, not the whole workspace's rows
        text = "\n".join(f"{f['code']} line {f['line']}: {f['message']}" for f in findings) or "no findings"
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=f"{name}: {text}"))
        return findings  # type: ignore[no-any-return]

    def lens_kernels(self, doc: Any) -> set[str] | None:
        return None  # every kernel

    def lens_command(self, doc: Any, kernel: Any, findings: list[Finding]) -> types.Command:
        return types.Command(
            title=summary(findings), command=KERNEL_FINDINGS_COMMAND, arguments=[doc.uri, kernel.name]
        )
