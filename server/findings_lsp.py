"""The level-1 findings summary of each kernel: a code lens ("tritonlens: 2 findings (1 warning, 1 hint)") and
the `tritonlens.kernelFindings` command it runs."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from ..analysis.findings import Finding
from .lsp_commands import arg
from .lsp_feature import Feature

KERNEL_FINDINGS_COMMAND = "tritonlens.kernelFindings"


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


class FindingsFeature(Feature):
    name = "findings"

    def register(self, server: Any) -> None:
        super().register(server)
        server.commands.add(KERNEL_FINDINGS_COMMAND, "Show this kernel's findings", self.show_findings)

    async def show_findings(self, ls: Any, args: list[Any]) -> list[dict[str, Any]]:
        from .lsp_features import kernel_finding_rows

        uri = arg(args, 0, str, "document URI")
        name = arg(args, 1, str, "kernel name")
        findings = kernel_finding_rows(ls, uri, name)  # one kernel's work, not the whole workspace's rows
        text = "\n".join(f"{f['code']} line {f['line']}: {f['message']}" for f in findings) or "no findings"
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=f"{name}: {text}"))
        return findings  # type: ignore[no-any-return]

    def lens_kernels(self, doc: Any) -> set[str] | None:
        return None  # every kernel

    def lens_command(self, doc: Any, kernel: Any, findings: list[Finding]) -> types.Command:
        return types.Command(
            title=summary(findings), command=KERNEL_FINDINGS_COMMAND, arguments=[doc.uri, kernel.name]
        )
