"""Drives the real language server subprocess with pytest-lsp's client, recording every notification."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Union  # noqa: UP035

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER_COMMAND = [sys.executable, "-m", "tritonlens.server.cli", "serve"]


class Recorder:
    """Every publishDiagnostics and custom notification, in arrival order."""

    def __init__(self) -> None:
        self.published: list[types.PublishDiagnosticsParams] = []
        self.kernels_changed = 0
        self.messages: list[types.ShowMessageParams] = []
        self.status: list[Any] = []  # tritonlens/status notifications

    def for_uri(self, uri: str) -> list[types.PublishDiagnosticsParams]:
        return [p for p in self.published if p.uri == uri]


def converter() -> Any:
    """pygls' converter, but a CodeAction that carries a command is read as a CodeAction: lsprotocol's own hook
    reads any object with a `command` key as a Command (its `command` a dict turned into a string)."""
    conv = default_converter()

    def command_or_action(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return conv.structure(obj, types.Command)
        return conv.structure(obj, types.CodeAction)

    conv.register_structure_hook(types.Command | types.CodeAction, command_or_action)
    conv.register_structure_hook(Union[types.Command, types.CodeAction], command_or_action)  # noqa: UP007
    return conv


def _make_client(rec: Recorder) -> Callable[[], LanguageClient]:
    def factory() -> LanguageClient:
        client = LanguageClient(converter_factory=converter)

        def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            client.diagnostics[params.uri] = params.diagnostics
            rec.published.append(params)

        def kernels_changed(client: LanguageClient, params: Any) -> None:
            rec.kernels_changed += 1

        def status(client: LanguageClient, params: Any) -> None:
            rec.status.append(params)

        def show_message(client: LanguageClient, params: Any) -> None:
            client.messages.append(params)
            rec.messages.append(params)

        features = {
            **DEFAULT_CLIENT_FEATURES,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
            types.WINDOW_SHOW_MESSAGE: show_message,
            "tritonlens/kernelsChanged": kernels_changed,
            "tritonlens/status": status,
        }
        register_lsp_features(client, features)
        return client

    return factory


def capabilities(
    pull: bool = False, resolve: bool = True, progress: bool = False
) -> types.ClientCapabilities:
    td = types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=[types.CodeActionKind.QuickFix])
            ),
            resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]) if resolve else None,
            data_support=True,
        ),
        diagnostic=types.DiagnosticClientCapabilities() if pull else None,
    )
    ws = types.WorkspaceClientCapabilities(
        configuration=True,
        workspace_folders=True,
        did_change_configuration=types.DidChangeConfigurationClientCapabilities(),
        diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True) if pull else None,
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
    )
    window = types.WindowClientCapabilities(work_done_progress=progress)
    return types.ClientCapabilities(text_document=td, workspace=ws, window=window)


@asynccontextmanager
async def session(
    folders: list[Path],
    config: dict[str, Any] | None = None,
    pull: bool = False,
    resolve: bool = True,
    progress: bool = False,
    env: dict[str, str] | None = None,
    init_options: dict[str, Any] | None = None,
    trust: str | None = "trusted",
    folder_config: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[LanguageClient, Recorder]]:
    """`env`: the server process's whole environment (default: this process's); `init_options`: the client's
    initializationOptions (e.g. the VS Code client's `clientCommands`). `trust`: the workspace trust the client
    declares ("trusted", "untrusted", None for a client that says nothing). `folder_config`: the first folder's
    own `tritonlens` settings (as a workspace's settings file gives them)."""
    rec = Recorder()
    config_obj = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=_make_client(rec), server_env=env
    )
    client = await config_obj.start()
    assert isinstance(client, LanguageClient)
    if config is not None:
        client.set_configuration(config, section="tritonlens")
    folder_objs = [types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders]
    if folder_config is not None:
        client.set_configuration(folder_config, section="tritonlens", scope_uri=folder_objs[0].uri)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(pull=pull, resolve=resolve, progress=progress),
            workspace_folders=folder_objs,
            root_uri=folder_objs[0].uri if folder_objs else None,
            initialization_options={**(init_options or {}), **({} if trust is None else {"workspaceTrust": trust})}
            or None,
        )
    )
    try:
        yield client, rec
    finally:
        await client.shutdown_session()
        await client.stop()


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    return uri


def save_doc(client: LanguageClient, uri: str) -> None:
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


def replace_text(client: LanguageClient, uri: str, version: int, text: str) -> None:
    """A whole-document change (the client may always send these)."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


async def wait_published(
    rec: Recorder, uri: str, version: int | None, timeout: float = 15.0
) -> list[types.Diagnostic]:
    def found() -> list[types.Diagnostic] | None:
        for p in reversed(rec.for_uri(uri)):
            if version is None or p.version == version:
                return list(p.diagnostics) if p.diagnostics is not None else None
        return None

    def done() -> bool:
        return any(version is None or p.version == version for p in rec.for_uri(uri))

    await wait_for(done, timeout, f"diagnostics for {uri} v{version}")
    return found() or []


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions; test texts are ASCII) bottom-up, as an editor would."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def offset(pos: types.Position) -> int:
        return offsets[pos.line] + pos.character

    out = text
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        out = out[: offset(edit.range.start)] + edit.new_text + out[offset(edit.range.end) :]
    return out


async def resolved_lenses(client: LanguageClient, params: types.CodeLensParams) -> list[types.CodeLens]:
    """codeLens, then codeLens/resolve for each lens, as an editor does for the lenses it shows."""
    lenses = await client.text_document_code_lens_async(params) or []
    return [await client.code_lens_resolve_async(lens) for lens in lenses]
