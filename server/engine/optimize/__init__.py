"""Level 5: make a kernel faster, and prove it. Used by `tritonlens optimize` and the language server alike.

Modules: `shapes` (which shapes a candidate is checked at), `timing` (is a speedup real), `gate` (verification),
`proposers` (the Proposer protocol and the recipe proposer), `config_search`, `evidence` (levels 1-4 and 2 for
the current text), `loop` (rounds within a budget), `report` (Markdown and JSON). See docs/optimize.md.
"""

from .loop import Budget, OptimizeOptions, OptimizeResult, optimize_source

__all__ = ["Budget", "OptimizeOptions", "OptimizeResult", "optimize_source"]
