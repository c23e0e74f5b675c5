"""TLS for a runner service beyond loopback (issue 21, deliverable 5): `--tls-cert/--tls-key` serve HTTPS (tested
on 127.0.0.1 with a self-signed certificate made here), and plain HTTP beyond loopback needs --insecure."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import threading
import time
from pathlib import Path

import pytest
import requests
from remote_service import TOKEN, ScriptedRunner

from tritonlens.ascend_runner import cli as runner_cli
from tritonlens.ascend_runner.remote_gate import uvicorn_server
from tritonlens.ascend_runner.remote_server import ServerConfig, create_app

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


def test_the_service_speaks_https_with_the_given_certificate(tmp_path):
    cert, key = self_signed(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(ServerConfig(token=TOKEN, sandbox_root=tmp_path / "sb"), ScriptedRunner())
    server = uvicorn_server(app, token=TOKEN, host="127.0.0.1", port=port, log_level="warning",
                            ssl_certfile=str(cert), ssl_keyfile=str(key))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert server.started
        auth = {"Authorization": f"Bearer {TOKEN}"}
        reply = requests.get(f"https://127.0.0.1:{port}/v1/health", headers=auth, verify=str(cert), timeout=5)
        assert reply.status_code == 200
        with pytest.raises(requests.exceptions.SSLError):  # an unknown certificate is not trusted
            requests.get(f"https://127.0.0.1:{port}/v1/health", headers=auth, timeout=5)
        with pytest.raises(requests.exceptions.ConnectionError):  # no plain HTTP on the TLS port
            requests.get(f"http://127.0.0.1:{port}/v1/health", headers=auth, timeout=5)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_tls_options_reach_uvicorn_and_go_together(tmp_path, monkeypatch, capsys):
    pytest.importorskip("uvicorn")
    cert, key = self_signed(tmp_path)
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    seen: list[dict] = []

    class NoServe:
        def run(self) -> None:
            pass

    monkeypatch.setattr("tritonlens.ascend_runner.remote_gate.uvicorn_server",
                        lambda *a, **k: seen.append(k) or NoServe())
    argv = ["serve", "--host", "0.0.0.0", "--allow-non-loopback", "--token-file", str(token),
            "--sandbox-root", str(tmp_path / "sb")]
    assert runner_cli.main([*argv, "--tls-cert", str(cert)]) == 2
    assert "go together" in capsys.readouterr().err
    assert runner_cli.main([*argv, "--tls-cert", str(cert), "--tls-key", str(key)]) == 0
    assert seen[-1]["ssl_certfile"] == str(cert) and seen[-1]["ssl_keyfile"] == str(key)
