"""Code and text the user did not write: secrets kept out of what leaves (secrets.py), an LLM's text compiled only
confined (confined_runner.py)."""
