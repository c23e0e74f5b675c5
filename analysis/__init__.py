"""Pure analysis: triage, IR parsing, attribution, findings, rewrites. Imports neither triton nor torch."""
