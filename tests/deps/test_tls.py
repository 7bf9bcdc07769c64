"""The host's TLS context trusts SSL_CERT_FILE / SSL_CERT_DIR (a private CA, as a company's), the
system store otherwise, and is what the adapters and MCP servers connect with."""

from __future__ import annotations

import http.server
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import certifi
import httpx
import pytest
import trustme

from codecompanion.transport.tls import build_trust
from codecompanion.workspace import HostOptions, Workspace


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def https_url(ca: trustme.CA) -> Iterator[str]:
    """A loopback HTTPS server whose certificate is signed by the private CA only."""

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


async def fetch(url: str, context: ssl.SSLContext) -> str:
    async with httpx.AsyncClient(verify=context, trust_env=False) as client:
        return (await client.get(url)).text


async def test_ssl_cert_file_is_trusted(ca: trustme.CA, https_url: str, tmp_path: Path) -> None:
    bundle = tmp_path / "corp.pem"
    ca.cert_pem.write_to_path(str(bundle))
    trust = build_trust({"SSL_CERT_FILE": str(bundle)})
    assert trust.source == "SSL_CERT_FILE"
    assert await fetch(https_url, trust.context) == "hello"


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl for the hash name")
async def test_ssl_cert_dir_is_trusted(ca: trustme.CA, https_url: str, tmp_path: Path) -> None:
    pem = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    subject_hash = subprocess.run(
        ["openssl", "x509", "-hash", "-noout", "-in", str(pem)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    certs = tmp_path / "certs"
    certs.mkdir()
    shutil.copy(pem, certs / f"{subject_hash}.0")
    trust = build_trust({"SSL_CERT_DIR": str(certs)})
    assert trust.source == "SSL_CERT_DIR"
    assert await fetch(https_url, trust.context) == "hello"


async def test_without_the_variables_a_private_ca_is_not_trusted(https_url: str) -> None:
    trust = build_trust({})
    assert trust.source in ("system store", "certifi")
    with pytest.raises(httpx.ConnectError):
        await fetch(https_url, trust.context)


async def test_the_workspace_builds_it_once_from_its_environment(
    ca: trustme.CA, https_url: str, tmp_path: Path
) -> None:
    bundle = tmp_path / "corp.pem"
    ca.cert_pem.write_to_path(str(bundle))
    workspace = Workspace(HostOptions(data_dir=str(tmp_path)), env={"SSL_CERT_FILE": str(bundle)})
    await workspace.warm_up()
    assert workspace.ssl_context() is workspace.ssl_context()
    assert await fetch(https_url, workspace.ssl_context()) == "hello"


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the platform's store is asked")
async def test_openssls_default_store_is_what_linux_trusts(
    ca: trustme.CA, https_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no variables given to the host, OpenSSL's default store is loaded (once): here made
    to hold the private CA, as `update-ca-certificates` adds a corporate CA to the bundle."""
    import certifi

    bundle = tmp_path / "system.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes() + ca.cert_pem.bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # OpenSSL's own default lookup reads it
    trust = build_trust({})
    assert trust.source == "system store"
    assert await fetch(https_url, trust.context) == "hello"


async def test_the_adapters_client_connects_with_the_trust_context(
    ca: trustme.CA, https_url: str, tmp_path: Path
) -> None:
    from codecompanion.transport.fast_http import FastClient
    from codecompanion.transport.http_types import ConnectFailed, Timeouts

    limits = Timeouts(connect=5.0, read=5.0, write=5.0)

    async def get(client: FastClient) -> bytes:
        response = await client.send("GET", https_url, {}, None, limits)
        try:
            return b"".join([piece async for piece in response.aiter_raw()])
        finally:
            await response.aclose()

    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    trusted = FastClient(build_trust({"SSL_CERT_FILE": str(bundle)}).context)
    assert await get(trusted) == b"hello"
    assert await get(trusted) == b"hello"  # again, on the kept connection
    await trusted.aclose()
    untrusted = FastClient(ssl.create_default_context(cafile=certifi.where()))
    with pytest.raises(ConnectFailed):
        await get(untrusted)
