"""Expected outputs sealed with a secret that only the verify worker and its client hold (stdlib only).

A confined candidate sees no job folder but its own, yet every worker has its own scratch folder and a runner may
run several verify jobs at once (another pool's, another TMPDIR's): a file name is no protection. So the reference
process writes its expected outputs sealed and the plain bytes exist only in the worker's memory. Sealing is a
SHAKE-256 keystream (key, random nonce, block counter) XORed over the bytes, and an HMAC-SHA256 tag over the nonce,
the sealed bytes and the sha256 of the inputs file they belong to: bytes rewritten on disk (by a candidate that ran
without a sandbox, say) or kept inputs changed behind the client's back fail the tag and are recomputed.
"""

from __future__ import annotations

import hashlib
import hmac
import os

MAGIC = b"TLSEAL1\n"
_NONCE = 16
_TAG = 32
_BLOCK = 1 << 20


def new_secret() -> str:
    return os.urandom(32).hex()


def _keys(secret: str) -> tuple[bytes, bytes]:
    raw = bytes.fromhex(secret)
    return hashlib.sha256(b"stream\0" + raw).digest(), hashlib.sha256(b"tag\0" + raw).digest()


def _xor(stream_key: bytes, nonce: bytes, data: bytes) -> bytes:
    out = bytearray()
    for start in range(0, len(data), _BLOCK):
        chunk = data[start:start + _BLOCK]
        pad = hashlib.shake_256(stream_key + nonce + (start // _BLOCK).to_bytes(8, "little")).digest(len(chunk))
        out += (int.from_bytes(chunk, "little") ^ int.from_bytes(pad, "little")).to_bytes(len(chunk), "little")
    return bytes(out)


def _tag(tag_key: bytes, nonce: bytes, body: bytes, inputs: bytes) -> bytes:
    return hmac.new(tag_key, nonce + hashlib.sha256(inputs).digest() + body, hashlib.sha256).digest()


def seal(secret: str, data: bytes, inputs: bytes) -> bytes:
    stream_key, tag_key = _keys(secret)
    nonce = os.urandom(_NONCE)
    body = _xor(stream_key, nonce, data)
    return MAGIC + nonce + _tag(tag_key, nonce, body, inputs) + body


def unseal(secret: str, sealed: bytes, inputs: bytes) -> bytes | None:
    """The plain bytes, or None where the secret, the sealed bytes or the inputs they were sealed with differ."""
    head = len(MAGIC) + _NONCE + _TAG
    if len(sealed) < head or not sealed.startswith(MAGIC):
        return None
    nonce, tag, body = sealed[len(MAGIC):len(MAGIC) + _NONCE], sealed[len(MAGIC) + _NONCE:head], sealed[head:]
    try:
        stream_key, tag_key = _keys(secret)
    except ValueError:
        return None
    if not hmac.compare_digest(tag, _tag(tag_key, nonce, body, inputs)):
        return None
    return _xor(stream_key, nonce, body)
