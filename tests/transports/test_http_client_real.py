"""The HTTP client's own connections against real mcpkit servers on 127.0.0.1 (uvicorn in a process
of its own): HTTPS with a certificate the test made, connections counted by a relay in front of the
server, the HTTP+SSE transport, and mcpkit's OAuth client, in both eras."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import sys
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import cast

import pytest

from mcpkit import Client, TextContent
from mcpkit.client.auth import ClientCredentials, OAuth

from ..auth._serve import protected
from ..auth.issuer import TestIssuer
from ..conftest import free_port, http_server
from ._client import echo, run
from ._raw import ERAS

pytestmark = pytest.mark.e2e

SERVER = Path(__file__).with_name("echo_server.py")


@contextlib.contextmanager
def serving(*tls: str) -> Iterator[str]:
    port = free_port()
    serve = cast(
        Generator[str, None, None], http_server([sys.executable, str(SERVER), str(port), *tls], port, 120)
    )
    url = next(serve)
    try:
        yield url.replace("http://", "https://") if tls else url
    finally:
        serve.close()


class Relay:
    """A TCP relay on 127.0.0.1 in front of *port*, counting the connections the client opens."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connections = 0
        self.open_now = 0
        self._writers: set[asyncio.StreamWriter] = set()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[int]:
        server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            server.close()
            for writer in self._writers:
                writer.close()
            await server.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_now += 1
        self._writers.add(writer)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.port)
            self._writers.add(upstream_writer)

            async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
                with contextlib.suppress(ConnectionError):
                    while data := await source.read(65536):
                        sink.write(data)
                        await sink.drain()
                sink.close()

            await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))
            await upstream_writer.wait_closed()
        finally:
            self.open_now -= 1
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


# -- HTTPS ------------------------------------------------------------------------------------------


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files in *folder*."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


@pytest.fixture(scope="module")
def https_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    cert, key = certificate(tmp_path_factory.mktemp("tls"))
    with serving(str(cert), str(key)) as url:
        yield url, cert


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@pytest.mark.parametrize("version", ERAS)
def test_https_with_the_servers_certificate_trusted_through_ssl_cert_file(
    https_url: tuple[str, Path], version: str, loop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = https_url
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # as OpenSSL, and httpx before, read it
    # Larger than the connection's read buffer (READ_SIZE), so that it is read, decrypted, in pieces.
    large = "".join(f"{n:06d} " for n in range(40_000))

    async def main() -> None:
        async with Client(url, protocol_version=version) as client:
            assert client.protocol_version == version
            for n in range(3):
                assert await echo(client, f"over TLS {n}") == f"over TLS {n}"
            assert await echo(client, large) == large

    if loop == "uvloop":  # its TLS transport hands the connection's buffer the plaintext too
        import uvloop

        uvloop.run(asyncio.wait_for(main(), 120))
    else:
        run(main())


def test_https_to_a_certificate_nobody_trusts_fails_with_the_reason(
    https_url: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    other, _ = certificate(tmp_path)  # a certificate, but not the server's
    monkeypatch.setenv("SSL_CERT_FILE", str(other))

    async def main() -> None:
        with pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):
            async with Client(https_url[0], protocol_version="2026-07-28", probe_timeout=30) as client:
                await echo(client)

    run(main())


# -- connections, counted at a real server ---------------------------------------------------------


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with serving() as url:
        yield url


@pytest.mark.parametrize("version", ERAS)
def test_a_real_server_sees_one_connection_per_caller_kept_alive(http_url: str, version: str) -> None:
    relay = Relay(int(http_url.rsplit(":", 1)[1].split("/")[0]))
    stream = 1 if version == "2025-11-25" else 0  # the session's own GET stream, on a connection of its own

    async def main() -> None:
        async with (
            relay.running() as port,
            Client(f"http://127.0.0.1:{port}/mcp", protocol_version=version) as client,
        ):
            for n in range(20):
                assert await echo(client, str(n)) == str(n)
            assert relay.connections <= 2 + stream  # connecting may overlap a POST with another
            sequential = relay.connections
            texts = await asyncio.gather(*(echo(client, f"c{n}") for n in range(16)))
            assert texts == [f"c{n}" for n in range(16)]
            assert relay.connections <= sequential + 16
            after = relay.connections
            for _ in range(3):
                await asyncio.gather(*(echo(client) for _ in range(16)))
            assert relay.connections == after  # the same 16, kept alive
        await asyncio.sleep(0.5)
        assert relay.open_now == 0  # closing the client closed them all

    run(main())


def test_the_http_sse_transport_against_a_real_server(http_url: str) -> None:
    async def main() -> None:
        async with Client(http_url.replace("/mcp", "/sse")) as client:
            assert client.protocol_version == "2024-11-05"
            results = await asyncio.gather(*(echo(client, str(n)) for n in range(8)))
            assert results == [str(n) for n in range(8)]

    run(main())


# -- mcpkit's OAuth client on these connections ----------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_the_oauth_client_authorizes_every_call_on_kept_alive_connections(version: str) -> None:
    with (
        TestIssuer() as issuer,
        protected(issuer.url, "--auth-scope", "mcp", "--auth-dpop", "accepted") as url,
    ):

        async def main() -> list[str]:
            auth = OAuth(client_id="machine", client_secret=issuer.clients["machine"],
                         grant=ClientCredentials(), scope="mcp")  # fmt: skip
            async with Client(url, protocol_version=version, auth=auth) as client:
                requests = client._transport._requests  # type: ignore[union-attr]
                assert requests._httpx is None  # the flow runs on the client's own connections
                texts = []
                for _ in range(5):
                    block = (await client.call_tool("whoami", {})).content[0]
                    assert isinstance(block, TextContent)
                    texts.append(block.text)
                # One connection for the calls, kept alive (and the session's GET stream's own).
                assert len(requests.pool._open) <= (2 if version == "2025-11-25" else 1)
                return texts

        assert run(main()) == ["machine via machine with mcp"] * 5
