"""The runner service's clients: named bearer tokens, read from the operator's token file.

A token file holds either one token (the whole file, as before: the client is named `default`) or one client a
line, `NAME TOKEN` (blank lines and `#` comments ignored). Every job belongs to the client whose token submitted
it; the job board lets a client see only its own jobs (remote_jobs)."""

from __future__ import annotations

import hmac
import os
import re

DEFAULT_CLIENT = "default"
CLIENT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MIN_TOKEN_CHARS = 16


class TokenFileError(ValueError):
    """The token file's text is not one token nor `NAME TOKEN` lines."""


def parse_tokens(text: str) -> dict[str, str]:
    """Client name -> token. One bare token (no whitespace in it) is the single-token file of old."""
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if len(lines) == 1 and len(lines[0].split()) == 1:
        tokens = {DEFAULT_CLIENT: lines[0]}
    else:
        tokens = {}
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if len(fields) != 2:
                raise TokenFileError(f"entry {number}: expected `NAME TOKEN`")
            name, token = fields
            if not CLIENT_NAME.match(name):
                raise TokenFileError(f"entry {number}: client name {name!r} is not [A-Za-z0-9_.-]{{1,64}}")
            if name in tokens:
                raise TokenFileError(f"entry {number}: client {name} is named twice")
            tokens[name] = token
    check_tokens(tokens)
    return tokens


def check_tokens(tokens: dict[str, str]) -> None:
    if not tokens:
        raise TokenFileError("no token")
    for name, token in tokens.items():
        if len(token) < MIN_TOKEN_CHARS:
            raise TokenFileError(f"the token of client {name} is shorter than {MIN_TOKEN_CHARS} characters")
    if len(set(tokens.values())) != len(tokens):
        raise TokenFileError("two clients share a token: each client needs its own")


def client_for(given: bytes, tokens: dict[str, bytes]) -> str | None:
    """The client whose token is `given`, comparing with every token in constant time (None: no client)."""
    found = None
    for name, expected in tokens.items():
        if hmac.compare_digest(given, expected) and given:
            found = name
    return found


def scrub_environment(environ: dict[str, str] | os._Environ[str], tokens: list[str]) -> list[str]:
    """Remove every variable whose value holds a client's token, so no worker (which inherits the service's
    environment) and so no job can read it there; the names removed, sorted."""
    names = sorted(k for k, v in environ.items() if any(t and t in v for t in tokens))
    for name in names:
        del environ[name]
    return names
