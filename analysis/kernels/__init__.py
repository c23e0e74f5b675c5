"""The kernel model: find the Triton kernels of one Python file: jit functions, their helpers, autotune data and launch sites.

`parse_module(source)` never raises. It reads the text with `ast` only (no import, no execution), so it works on
unsaved buffers, half-typed code and files whose imports are missing. Positions follow `findings.Span`: lines
1-based, columns 0-based *characters* (ast gives UTF-8 byte columns; they are converted here).

What counts as a jit function: a `def` (at any nesting depth) decorated with `triton.jit` under any import alias
(`import triton as tr` -> `@tr.jit`, `from triton import jit` -> `@jit`), with or without call arguments, possibly
under `@triton.autotune(...)` / `@triton.heuristics(...)`. The call forms `fn = triton.jit(fn)`,
`kernel = triton.autotune(...)(triton.jit(fn))` and a bare `triton.jit(fn)` statement (module level, or under a
module-level `if`/`try`) make the module-level `def fn` a jit function too, with the wrapping calls read as its
decorators (outermost first).

Per keystroke cost: the text is parsed incrementally (`analysis.source_chunks`: unchanged chunks of top-level
statements reuse their trees) and facts local to one chunk are kept in its memo, so re-parsing an edited file
costs little more than the edited chunk. Results are those of a cold whole-file parse
(tests/triage/test_incremental_parse.py). Trees may be shared between parses: never mutate them.

Kernels vs helpers: a jit function called (by name) from another jit function of the file and never launched with
`name[grid](...)` in the file is a *helper*; every other jit function is a *kernel*. Each kernel lists the helpers it
reaches, transitively. Helpers imported from other files are not followed.

Modules: `model` (the dataclasses), `parse` (the memoised entry point `parse_module` and the parse itself),
`collection` (which defs are jit functions, kernels vs helpers), `decorators` (jit/autotune/heuristics and call
forms), `launch_sites`, `expressions` (canonical names through import aliases, literal values), `nodes` (cheap
tree walks), `dependencies`; line table, character columns and syntax errors come from `analysis/source/lines.py`.
"""

from ..source.lines import SyntaxErrorInfo
from .decorators import call_form_wrappers
from .expressions import AUTOTUNE, CONFIG, CONSTEXPR, HEURISTICS, JIT, literal
from .model import AutotuneInfo, KernelInfo, LaunchArg, LaunchSite, ModuleInfo, Param
from .nodes import FunctionTree, walk_nodes, walk_statements
from .parse import build_module, clear_memo, parse_module

__all__ = [
    "AUTOTUNE",
    "CONFIG",
    "CONSTEXPR",
    "HEURISTICS",
    "JIT",
    "AutotuneInfo",
    "FunctionTree",
    "KernelInfo",
    "LaunchArg",
    "LaunchSite",
    "ModuleInfo",
    "Param",
    "SyntaxErrorInfo",
    "build_module",
    "call_form_wrappers",
    "clear_memo",
    "literal",
    "parse_module",
    "walk_nodes",
    "walk_statements",
]
