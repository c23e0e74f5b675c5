"""The argument types and constexpr values to compile each kernel with, and where each one came from.

Sources, highest priority first: launches recorded by a runner, a `# tritonlens:` pragma at the kernel,
`[tool.tritonlens.kernels.<name>]` in pyproject.toml (the caller reads it and passes the table), launch
sites in the file (literals, names bound to literals, tensors' dtypes), `@triton.autotune` configs (one
variant each), `@triton.heuristics` (lambdas evaluated without `eval`), parameter defaults, and types
implied by the kernel body. Specialization follows Triton 3.6's JIT: pointers are assumed 16-byte aligned
(`tt.divisibility=16`), ints divisible by 16 get the same hint, and an int equal to 1 becomes the constant 1.
An int whose value is not visible is compiled as the common case (divisible by 16), and says so in its
provenance (`ASSUMED_DIVISIBLE`), so findings that depend on its value can be told apart.

Pure: no triton/torch imports; never raises on user text (unparsable code gives no specializations).

Modules: `specialization_kernels` (the jit functions as specialization reads them, from the shared kernel model),
`specialization_launch` (what a launch site says about each argument), `specialization_facts` (combining the
sources into a variant), `specialization_findings` (TL002/TL003), `specialization_variant` (the result type).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..kernels import ModuleInfo
from .asserts import asserted_elements, element_type_reads
from .callees import callee_types
from .facts import Fact, build_variant, launch_facts, override_facts
from .guess import ASSUMED_TYPICAL
from .infer import Inferred, infer_types
from .kernels import KernelTable, SpecKernel, kernel_table
from .scope import find_launches
from .variant import ASSUMED_DIVISIBLE, MAX_VARIANTS, Specialization
from .workspace_launches import ForeignLaunch


def specializations(
    module: KernelTable | ModuleInfo | str,
    kernel: str,
    overrides: Mapping[str, Any] | None = None,
    recorded: Sequence[Mapping[str, Any]] | None = None,
    *,
    limit: int = MAX_VARIANTS,
    imported: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None,
    foreign: Sequence[ForeignLaunch] = (),
) -> list[Specialization]:
    """Variants to compile `kernel` with, best first. `module` is the source text, the kernel model
    (kernels.ModuleInfo) or its KernelTable. `overrides` is the kernel's pyproject table; `imported` the
    functions the module imports from other workspace modules (specialization_callees.imported_helpers);
    `foreign` the kernel's launches in other files of the workspace (workspace_launches.foreign_launches), read
    after the file's own launches and before any guess."""
    parsed = as_table(module)
    info = parsed.kernels.get(kernel)
    if info is None:
        return []
    types = infer_types(info.node, info.param_names)
    helpers = {**(imported or {}), **{name: k.node for name, k in parsed.kernels.items()}}
    for name, found in callee_types(info.node, info.param_names, helpers).items():
        if name not in types or types[name].reason.startswith("assumed"):  # the body's evidence first, then
            types[name] = found  # what its jit helpers imply (over a guess from the name)
    for name, line in element_type_reads(info.node).items():
        if name in info.param_names and (name not in types or not types[name].type.startswith("*")):
            types[name] = Inferred(
                "*fp32", f"its .dtype.element_ty read at line {line}; element type assumed fp32"
            )
    for name, (element, line) in asserted_elements(info.node).items():
        found = types.get(name)
        if found is None or found.type.startswith("*"):  # what the body asserts beats what it suggests
            why = f"{found.reason.split(';')[0]}; " if found else ""
            types[name] = Inferred(
                f"*{element}", f"{why}element type {element} as tl.static_assert at line {line} requires"
            )
    inferred = {n: Fact(t.reason, type=t.type) for n, t in types.items()}
    pragma_facts, pragma_opts, project_facts, project_opts = override_facts(info, overrides)
    out: list[Specialization] = []
    for i, entry in enumerate(e for e in (recorded or ()) if e.get("kernel") == kernel):
        out.append(_from_recorded(info, entry, i + 1, inferred))
    if out:
        return _dedupe(out)[:limit]
    bases: list[tuple[str, int | None, dict[str, Fact], dict[str, Any]]] = []
    for launch in find_launches(parsed.calls, kernel):
        facts, opts = launch_facts(info, launch)
        bases.append((f"launch at line {launch.line}", launch.line, facts, opts))
    elsewhere: dict[str, str] = {}  # label -> `path:line` of a launch in another file
    for far in foreign:
        facts, opts = launch_facts(info, far.launch, source=far.label)
        bases.append((far.label, None, facts, opts))  # no line of this file: the launch is in another one
        elsewhere[far.label] = far.where
    if not bases:
        bases.append(("defaults", None, {}, {}))
    configs = info.configs or [(None, {}, {})]
    for base_label, base_line, site_facts, launch_opts in bases:
        for n, (cline, kwargs, copts) in enumerate(configs, start=1):
            label = base_label
            if cline is not None:
                config_label = f"autotune config {n}"
                label = config_label if base_label == "defaults" else f"{base_label}, {config_label}"
            config_facts = {
                k: Fact(f"autotune config {n} (line {cline})", value=v) for k, v in kwargs.items()
            }
            options = {**copts, **launch_opts, **project_opts, **pragma_opts}
            layers = [pragma_facts, project_facts, site_facts, config_facts]
            spec = build_variant(info, label, cline or base_line, layers, options, inferred)
            if base_label in elsewhere:
                spec = replace(spec, values_from=elsewhere[base_label])
            out.append(spec)
            if len(out) >= limit:
                return _dedupe(out)
    return _dedupe(out)


def _from_recorded(
    info: SpecKernel, entry: Mapping[str, Any], n: int, inferred: dict[str, Fact]
) -> Specialization:
    label = f"recorded launch {n}"
    layer: dict[str, Fact] = {}
    signature = dict(entry.get("signature") or {})
    constants = dict(entry.get("constants") or {})
    for name in info.param_names:
        if name in constants:
            layer[name] = Fact(label, value=constants[name])
        elif name in signature and signature[name] != "constexpr":
            layer[name] = Fact(label, type=signature[name])
    spec = build_variant(info, label, None, [layer], dict(entry.get("options") or {}), inferred)
    recorded_div = entry.get("divisibility")
    if isinstance(recorded_div, (list, tuple)):
        # the runner saw the real pointers and ints: its divisibility replaces our assumption
        div = tuple(d for d in recorded_div if d in spec.signature and spec.signature[d] != "constexpr")
        suffix = f"; {ASSUMED_DIVISIBLE}"
        provenance = {k: v.replace(suffix, "") for k, v in spec.provenance.items()}
        spec = Specialization(**{**spec.__dict__, "divisibility": div, "provenance": provenance})
    return spec


def _dedupe(specs: list[Specialization]) -> list[Specialization]:
    seen: set[tuple[Any, ...]] = set()
    out: list[Specialization] = []
    for spec in specs:
        key = spec.key()
        if key not in seen:
            seen.add(key)
            out.append(spec)
    return out


def as_table(module: KernelTable | ModuleInfo | str) -> KernelTable:
    """The kernel table of the source text, the kernel model or the table itself (never a second parse)."""
    if isinstance(module, KernelTable):
        return module
    if isinstance(module, (ModuleInfo, str)):
        return kernel_table(module)
    raise TypeError("specializations() needs the source text (str), a kernels.ModuleInfo or a KernelTable")


def assumed_constexprs(spec: Specialization) -> dict[str, Any]:
    """Constexprs of `spec` whose value is a labeled guess (specialization_guess), in parameter order."""
    return {k: spec.constants.get(k) for k, why in spec.provenance.items() if why.startswith(ASSUMED_TYPICAL)}
