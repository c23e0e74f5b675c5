"""Engines shared by the command line and the language server (no LSP types here)."""
