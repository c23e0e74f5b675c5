"""Workspace trust (issue 21, item 4): what the server may run for a workspace the user has not trusted."""
