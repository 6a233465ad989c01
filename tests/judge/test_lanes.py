"""The judge's lanes: one connection each, reopened when the server hung up, TLS included.

A tiny asyncio HTTP/1.1 server on 127.0.0.1 answers every request with a fixed JSON body; it can
hang up after each answer (without saying `Connection: close`, as an idle timeout does) and can
speak TLS with a certificate made for the test.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from niceeval_cli._httpx import httpx
from niceeval_cli._lanes import LaneTransport
from tests.support.components import need_command

BODY = json.dumps({"ok": True}).encode()


@dataclass
class _Server:
    hang_up: bool = False
    connections: int = 0
    requests: int = 0
    bodies: list[bytes] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                self.bodies.append(await reader.readexactly(length))
                self.requests += 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY))
                await writer.drain()
                if self.hang_up:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def plain() -> AsyncIterator[tuple[_Server, str]]:
    state = _Server()
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield state, f"http://127.0.0.1:{port}/v1/chat/completions"
    server.close()


async def _post(transport: LaneTransport, url: str, payload: bytes = b'{"q": 1}') -> httpx.Response:
    request = httpx.Request("POST", url, content=payload, headers={"Content-Type": "application/json"})
    response = await transport.handle_async_request(request)
    await response.aread()
    await response.aclose()
    return response


async def test_one_lane_keeps_one_connection_for_sequential_requests(plain: tuple[_Server, str]) -> None:
    state, url = plain
    transport = LaneTransport(1, ssl.create_default_context())
    try:
        for _ in range(5):
            response = await _post(transport, url)
            assert response.status_code == 200 and response.json() == {"ok": True}
    finally:
        await transport.aclose()
    assert (state.requests, state.connections) == (5, 1)


async def test_a_lane_whose_server_hung_up_opens_a_new_connection(plain: tuple[_Server, str]) -> None:
    state, url = plain
    state.hang_up = True  # every answer ends its connection, without `Connection: close`
    transport = LaneTransport(1, ssl.create_default_context())
    try:
        for _ in range(3):
            await asyncio.sleep(0.05)  # the hang-up reaches the client while the lane is idle
            assert (await _post(transport, url)).status_code == 200
    finally:
        await transport.aclose()
    assert (state.requests, state.connections) == (3, 3)


async def test_headers_and_body_arrive_whole_and_large_bodies_too(plain: tuple[_Server, str]) -> None:
    state, url = plain
    big = json.dumps({"text": "x" * 300_000}).encode()  # past the gathering threshold
    transport = LaneTransport(2, ssl.create_default_context())
    try:
        results = await asyncio.gather(_post(transport, url, big), _post(transport, url, b'{"q": 2}'))
    finally:
        await transport.aclose()
    assert [r.status_code for r in results] == [200, 200]
    assert sorted(state.bodies, key=len) == [b'{"q": 2}', big]


async def test_a_refused_connection_is_an_httpx_connect_error() -> None:
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    transport = LaneTransport(1, ssl.create_default_context())
    try:
        with pytest.raises(httpx.ConnectError):
            await _post(transport, f"http://127.0.0.1:{port}/v1/chat/completions")
        with pytest.raises(httpx.ConnectError):  # the lane was handed back: a second try fails alike
            await _post(transport, f"http://127.0.0.1:{port}/v1/chat/completions")
    finally:
        await transport.aclose()


async def test_a_silent_server_is_an_httpx_read_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)
        await asyncio.sleep(5)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = LaneTransport(1, ssl.create_default_context())
    request = httpx.Request("POST", f"http://127.0.0.1:{port}/", content=b"{}",
                            extensions={"timeout": httpx.Timeout(0.2).as_dict()})
    try:
        with pytest.raises(httpx.ReadTimeout):
            await transport.handle_async_request(request)
    finally:
        await transport.aclose()
        server.close()


async def test_lanes_speak_tls_and_verify_the_certificate(tmp_path: Path) -> None:
    need_command("openssl")  # to make the certificate
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    state = _Server()
    server = await asyncio.start_server(state.handle, "127.0.0.1", 0, ssl=server_ctx)
    url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
    trusting = LaneTransport(1, ssl.create_default_context(cafile=str(cert)))
    untrusting = LaneTransport(1, ssl.create_default_context())
    try:
        for _ in range(2):
            assert (await _post(trusting, url)).json() == {"ok": True}
        with pytest.raises(httpx.ConnectError):
            await _post(untrusting, url)
    finally:
        await trusting.aclose()
        await untrusting.aclose()
        server.close()
    assert state.requests == 2
