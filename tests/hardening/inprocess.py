"""The language server object without a client: a pygls workspace, capabilities, and recorded publishes."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace import Workspace

from tritonlens.server.lsp.core import TritonLensServer
from tritonlens.server.lsp.server import create_server
from tritonlens.server.lsp.text_sync import install_lsp_text_documents


def make_server() -> tuple[TritonLensServer, list[types.PublishDiagnosticsParams]]:
    """A server as `initialize` leaves it (push diagnostics with versions), publishing into a list."""
    server = create_server()
    server.protocol._workspace = Workspace(None, types.TextDocumentSyncKind.Incremental)
    install_lsp_text_documents(server.workspace)
    server.protocol.client_capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
        )
    )
    published: list[types.PublishDiagnosticsParams] = []
    server.text_document_publish_diagnostics = published.append  # type: ignore[method-assign]
    server.workspace_code_lens_refresh = lambda *a: None  # type: ignore[method-assign]
    return server, published


def open_text(server: TritonLensServer, uri: str, text: str, version: int = 1) -> None:
    item = types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
    server.workspace.put_text_document(item)
    server.open(uri, version, "python")


def edit_text(server: TritonLensServer, uri: str, version: int, text: str) -> None:
    """A whole-document change, as the didChange handler applies it."""
    change = types.TextDocumentContentChangeWholeDocument(text=text)
    server.workspace.update_text_document(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version), change
    )
    server.change(uri, version)


def chain_source(n: int) -> str:
    """A kernel calling a chain of `n` jit helpers (helper_0 calls helper_1, ...)."""
    parts = ["import triton\nimport triton.language as tl\n\n"]
    for i in range(n):
        call = f"    x = helper_{i + 1}(x)\n" if i + 1 < n else ""
        parts.append(f"@triton.jit\ndef helper_{i}(x):\n{call}    return x + {i}\n\n\n")
    parts.append(
        "@triton.jit\ndef kernel(X, N, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(X + offs, helper_0(tl.load(X + offs, mask=offs < N)), mask=offs < N)\n"
    )
    return "".join(parts)


def kernels_source(k: int) -> str:
    """`k` small kernels, each launched once with a non-power-of-two block (one finding each at least)."""
    parts = ["import triton\nimport triton.language as tl\n\n"]
    for i in range(k):
        parts.append(
            f"@triton.jit\ndef k_{i}(X, N, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    tl.store(X + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)\n\n\n"
            f"def run_{i}(x):\n    k_{i}[(x.numel() // 100,)](x, x.numel(), BLOCK=100)\n\n\n"
        )
    return "".join(parts)
