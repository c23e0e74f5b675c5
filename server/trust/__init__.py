"""What the server does so that secrets never leave it (secrets.py)."""
