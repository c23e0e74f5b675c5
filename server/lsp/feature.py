"""What a server feature is: a small object with the same lifecycle hooks, plugged into the server core.

The core (lsp_server.TritonLensServer: documents, conversion, progress, configuration) knows features only
through this interface: it calls every feature's hooks in registration order. Every LSP method family is a
feature too (diagnostics_lsp, hover_lsp, code_action_lsp, code_lens_lsp): it answers its requests and asks every
feature for its part of them (a hover section, a code lens, the code actions of a range, a kernel's row).
A feature registers its own commands and requests in `register(server)`, keeps its state on itself, and gets the
features it uses through its constructor, typed (esbonio's model): `def __init__(self, compile: CompileFeature)`;
`Features.create` passes each parameter the registered feature of its annotated class, so a feature is created
after the ones it names. Every hook runs on the event loop; long work goes to the feature's own
thread and reports `$/progress`.
"""

from __future__ import annotations

import inspect
import logging
import types as pytypes
import typing
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types

if TYPE_CHECKING:  # the core imports this module; features receive the server object
    from ...analysis.core.findings import Finding
    from .documents import DocState
    from .views import DocVersion

log = logging.getLogger("tritonlens.lsp")

F = TypeVar("F", bound="Feature")


class Feature:
    """Base of every feature: each hook is a no-op unless the feature overrides it."""

    name = "feature"  # stable: code lenses and code actions carry it to their resolve request

    def __init__(self) -> None:
        # The TritonLensServer, set by register before any hook (typed in each feature: lsp/core imports this
        # module, so this one cannot name it without a cycle).
        self.server: Any = None

    # --- lifecycle -------------------------------------------------------------------------------------------
    def register(self, server: Any) -> None:
        """Add commands (`server.commands.add`) and LSP methods or custom requests (`add_request`); called before
        initialize, so that the capabilities the server announces include them."""
        self.server = server

    def add_request(self, method: str, handler: Callable[[Any, Any], Any], options: Any = None) -> None:
        """Answer the LSP method or custom request `method` with `handler(server, params)`, sync or async (a
        bound method is fine); `options` are the method's server capability options."""
        if inspect.iscoroutinefunction(handler):

            async def handle(ls: Any, params: Any) -> Any:
                return await handler(ls, params)

        else:  # answered at once, like a plain pygls handler

            def handle(ls: Any, params: Any) -> Any:  # type: ignore[misc]
                return handler(ls, params)

        self.server.feature(method, options)(handle)

    def on_initialized(self) -> None:
        """The client sent `initialized` (workspace folders are known; before the configuration is read)."""

    def on_folders_changed(self, added: list[str], removed: list[str]) -> None:
        """Workspace folders (URIs) were added or removed."""

    def on_config(self) -> None:
        """The configuration was (re-)read."""

    def on_analysis(self, doc: DocState) -> None:
        """A level-1 analysis of `doc`'s newest version was accepted."""

    def on_findings_changed(self, uri: str) -> None:
        """What the open document `uri` shows changed: a new analysis, later-level findings, or its settings."""

    def on_lenses_changed(self) -> None:
        """A feature's code lenses changed without a new document version (e.g. launches were recorded)."""

    def on_save(self, uri: str) -> None:
        """The editor saved `uri`."""

    def on_document_closed(self, uri: str) -> None:
        """Drop what is kept for `uri`."""

    def shutdown(self) -> None:
        """Stop threads and runners (the server is shutting down)."""

    # --- contributions to the requests of the method-family features ----------------------------------------
    def lens_kernels(self, version: DocVersion) -> set[str] | None:
        """Kernels of an analysed document version that get this feature's code lens: None = every kernel, empty
        = none. Called off the event loop once per version (it may read files); must be thread-safe."""
        return set()

    def lens_command(self, doc: DocState, kernel: Any, findings: list[Finding]) -> types.Command | None:
        """The command of this feature's lens on `kernel` (codeLens/resolve: one lens, O(1) in the document)."""
        return None

    def hover(self, doc: DocState, line: int, col: int) -> str | None:
        """A Markdown section of the hover at (1-based line, 0-based col), or None."""
        return None

    def kernel_fields(self, doc: DocState, kernel: Any) -> dict[str, Any]:
        """Extra fields of an open kernel's `tritonlens/kernels` row."""
        return {}

    def code_actions(self, doc: DocState, rng: types.Range) -> list[types.CodeAction]:
        """Code actions for `rng`; their data carries {"provider": self.name} to come back to resolve_action."""
        return []

    async def resolve_action(self, action: types.CodeAction) -> types.CodeAction:
        return action


class Features:
    """The server's features in registration order; a failing hook is logged and never stops the others."""

    def __init__(self) -> None:
        self._all: list[Feature] = []

    def add(self, feature: Feature, server: Any) -> None:
        feature.register(server)
        self._all.append(feature)

    def create(self, cls: type[F], server: Any) -> F:
        """Make `cls` with the features its constructor names (each parameter annotated with a Feature class, or
        `Cls | None` for one it can do without) and register it. LookupError when a required one is not
        registered yet."""
        hints = typing.get_type_hints(cls.__init__)
        kwargs: dict[str, Any] = {}
        for name in list(inspect.signature(cls.__init__).parameters)[1:]:
            wanted = hints.get(name)
            options = typing.get_args(wanted) if isinstance(wanted, pytypes.UnionType) else (wanted,)
            classes = [c for c in options if isinstance(c, type) and issubclass(c, Feature)]
            if not classes:
                raise TypeError(f"{cls.__name__}({name}): only features are passed to a feature's constructor")
            try:
                kwargs[name] = self.get(classes[0])
            except LookupError:
                if type(None) not in options:
                    raise LookupError(f"{cls.__name__} needs {classes[0].__name__}, registered before it") from None
                kwargs[name] = None
        feature = cls(**kwargs)
        self.add(feature, server)
        return feature

    def __iter__(self) -> Iterator[Feature]:
        return iter(list(self._all))

    def get(self, cls: type[F]) -> F:
        """The registered feature of class `cls` (LookupError when it is not part of this server)."""
        for feature in self._all:
            if isinstance(feature, cls):
                return feature
        raise LookupError(f"no {cls.__name__} registered")

    def named(self, name: str) -> Feature | None:
        return next((f for f in self._all if f.name == name), None)

    def each(self, hook: str, *args: Any) -> None:
        """Call `hook(*args)` on every feature."""
        for feature in self:
            try:
                getattr(feature, hook)(*args)
            except Exception:
                log.exception("%s.%s failed", type(feature).__name__, hook)
