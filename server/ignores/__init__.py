"""Ignores in the server and the CLI: the pyproject's ignore tables for a file (project.py) and the code actions
that write ignore comments (actions.py). What an ignore silences is analysis.ignores."""
