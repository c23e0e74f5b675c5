"""Level 5, rewrites: candidate kernels proposed from evidence (recipes, config search, an LLM).

Pure functions over text, like the rest of `analysis`: a recipe reads the source and the findings and returns
new source text; compiling, running and verifying candidates is the engine's job (outside `analysis`).
"""
