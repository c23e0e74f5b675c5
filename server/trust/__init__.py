"""Trust and containment (issue 21): what the server may run for a workspace the user has not trusted
(workspace_trust.py), and what it does so that secrets never leave it (secrets.py, confined_runner.py)."""
