"""The language server's features, one module per LSP method family or command."""
