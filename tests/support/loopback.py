"""Real loopback HTTP servers on 127.0.0.1, each on a port of its own (bound to port 0).

`Loopback(answer)`: any method, answered by a function of (method, path, body) — the system under
test, a gateway, an endpoint a preflight asks. `JudgeServer`: OpenAI chat completions standing in
for a judge (below). `free_port()`: a port nobody listens on. `TlsPort(folder)`: a port that
speaks TLS only, for an http:// URL that should have said https://.

JudgeServer:

Runs a ThreadingHTTPServer on 127.0.0.1 (ephemeral port) in a background thread: each
connection gets its own thread, so many slow requests overlap instead of queueing. Replies are
scripted with `Reply` values, chosen in this order: the FIFO queue (`enqueue`), then the first
rule whose text occurs in the raw request body (`when`), then `default`.

It records every request (`requests`), the most requests it ever had in flight at once
(`max_in_flight`) and how many TCP connections clients opened (`connections`).

    server.default = Reply.tool("Y", "clear answer")
    server.enqueue(Reply.error(429, retry_after=0.1), Reply.content("N", "misses it"))
    server.when("refund", Reply.tool("A", "subset"))
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the class methods."""

    status: int = 200
    body: Any = None  # the JSON (or, when a str, the raw text) sent back
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    reset: bool = False  # abort the connection (RST) instead of answering

    @staticmethod
    def completion(message: dict[str, Any], *, usage: dict[str, int] | None = DEFAULT_USAGE,
                   delay_s: float = 0.0, finish_reason: str = "stop") -> Reply:
        body: dict[str, Any] = {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "judge-test",
            "choices": [{"index": 0, "message": {"role": "assistant", **message},
                         "finish_reason": finish_reason}],
        }
        if usage is not None:
            body["usage"] = dict(usage)
        return Reply(200, body, delay_s=delay_s)

    @staticmethod
    def tool(choice: str, reasoning: str = "tool reasoning", *, arguments: str | None = None,
             usage: dict[str, int] | None = DEFAULT_USAGE, delay_s: float = 0.0) -> Reply:
        """A forced `grade` tool call (`arguments` overrides the JSON text, e.g. to break it)."""
        args = arguments if arguments is not None else json.dumps({"reasoning": reasoning, "choice": choice})
        call = {"id": "call_1", "type": "function", "function": {"name": "grade", "arguments": args}}
        return Reply.completion({"content": None, "tool_calls": [call]}, usage=usage, delay_s=delay_s,
                                finish_reason="tool_calls")

    @staticmethod
    def content(choice: str, reasoning: str = "content reasoning", *, fenced: bool = False,
                usage: dict[str, int] | None = DEFAULT_USAGE, delay_s: float = 0.0) -> Reply:
        """The grade as a JSON object in the message content (optionally in a ``` fence)."""
        text = json.dumps({"reasoning": reasoning, "choice": choice})
        if fenced:
            text = f"Here is my grade:\n```json\n{text}\n```"
        return Reply.completion({"content": text}, usage=usage, delay_s=delay_s)

    @staticmethod
    def text(content: str, *, usage: dict[str, int] | None = DEFAULT_USAGE) -> Reply:
        """A plain assistant message (no tool call)."""
        return Reply.completion({"content": content}, usage=usage)

    @staticmethod
    def raw(body: Any, status: int = 200, *, delay_s: float = 0.0) -> Reply:
        """Any body at all (a str is sent as text/plain)."""
        return Reply(status, body, delay_s=delay_s)

    @staticmethod
    def error(status: int, message: str = "scripted error", *, retry_after: float | str | None = None,
              delay_s: float = 0.0) -> Reply:
        headers = (("Retry-After", str(retry_after)),) if retry_after is not None else ()
        return Reply(status, {"error": {"message": message, "type": "test", "code": None}},
                     headers, delay_s)

    @staticmethod
    def reset_connection(delay_s: float = 0.0) -> Reply:
        return Reply(reset=True, delay_s=delay_s)


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-case names
    json: Any  # the parsed body (None when it was not JSON)
    started: float  # time.monotonic()
    ended: float
    connection: int  # which TCP connection (1-based, in order of opening)
    status: int | None  # None when the connection was reset


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    queue: deque[Reply] = field(default_factory=deque)
    rules: list[tuple[str, Reply]] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    connections: int = 0


class JudgeServer:
    """The loopback judge endpoint; `base_url` ends in `/v1` like OpenAI's."""

    def __init__(self, *, latency_s: float = 0.0) -> None:
        self.default: Reply = Reply.tool("Y", "default reasoning")
        self.latency_s = latency_s  # added to every request, before the reply's own delay
        self.api_key: str | None = None  # when set, other bearer tokens get 401
        self.models: set[str] | None = None  # when set, other models get 404 model_not_found
        self.listed: list[str] | None = None  # when set, GET /models lists these (else 404)
        self.gets: list[tuple[str, dict[str, str]]] = []  # (path, lower-cased headers) of every GET
        self._state = _State()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.judge = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="judge-server", daemon=True)

    # -- lifecycle
    def start(self) -> JudgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting
    def enqueue(self, *replies: Reply) -> None:
        with self._state.lock:
            self._state.queue.extend(replies)

    def when(self, text: str, reply: Reply) -> None:
        """Answer `reply` to every request whose raw body contains `text` (JSON-escaped form)."""
        with self._state.lock:
            self._state.rules.append((text, reply))

    # -- observations
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def grading_requests(self) -> list[RecordedRequest]:
        """Requests that carried the `grade` tool (preflight probes excluded)."""
        return [r for r in self.requests if isinstance(r.json, dict) and "tools" in r.json]

    @property
    def max_in_flight(self) -> int:
        return self._state.max_in_flight

    @property
    def in_flight(self) -> int:
        """Requests received and not answered yet (a request is logged only once answered)."""
        return self._state.in_flight

    @property
    def connections(self) -> int:
        return self._state.connections

    def clear_log(self) -> None:
        with self._state.lock:
            self._state.requests.clear()
            self._state.max_in_flight = 0
            self._state.connections = self._state.in_flight = 0

    # -- used by the handler thread
    def _pick(self, raw: str) -> Reply:
        with self._state.lock:
            if self._state.queue:
                return self._state.queue.popleft()
            for text, reply in self._state.rules:
                if text in raw:
                    return reply
            return self.default

    def _new_connection(self) -> int:
        with self._state.lock:
            self._state.connections += 1
            return self._state.connections

    def _enter(self) -> None:
        with self._state.lock:
            self._state.in_flight += 1
            self._state.max_in_flight = max(self._state.max_in_flight, self._state.in_flight)

    def _leave(self, record: RecordedRequest) -> None:
        with self._state.lock:
            self._state.in_flight -= 1
            self._state.requests.append(record)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256
    judge: JudgeServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection counts mean something
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    timeout = 10  # an idle keep-alive connection is dropped after this
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection_no = self.server.judge._new_connection()

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        judge = self.server.judge
        started = time.monotonic()
        judge._enter()
        entered = True
        try:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
            try:
                body: Any = json.loads(raw)
            except json.JSONDecodeError:
                body = None
            reply = self._choose(judge, raw, body)
            time.sleep(judge.latency_s + reply.delay_s)
            # Logged before answering, so a client that has its answer always finds its request.
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = None if reply.reset else reply.status
            entered = False
            judge._leave(RecordedRequest(self.path, headers, body, started, time.monotonic(),
                                         self.connection_no, status))
            if reply.reset:
                self._reset()
            else:
                self._send(reply)
        finally:
            if entered:  # the request broke before it was logged
                judge._leave(RecordedRequest(self.path, {}, None, started, time.monotonic(),
                                             self.connection_no, None))

    def do_GET(self) -> None:
        judge = self.server.judge
        judge.gets.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        if self.path.rstrip("/").endswith("/models") and judge.listed is not None:
            self._send(Reply(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in judge.listed]}))
        else:
            self._send(Reply.error(404, f"no route {self.path}"))

    def _choose(self, judge: JudgeServer, raw: str, body: Any) -> Reply:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return Reply.error(404, f"no route {self.path}")
        if judge.api_key is not None and self.headers.get("Authorization") != f"Bearer {judge.api_key}":
            return Reply.error(401, "Incorrect API key provided")
        model = body.get("model") if isinstance(body, dict) else None
        if judge.models is not None and model not in judge.models:
            return Reply(404, {"error": {"message": f"The model `{model}` does not exist",
                                         "type": "invalid_request_error", "code": "model_not_found"}})
        return judge._pick(raw)

    def _send(self, reply: Reply) -> None:
        if isinstance(reply.body, str):
            payload, kind = reply.body.encode("utf-8"), "text/plain; charset=utf-8"
        else:
            payload, kind = json.dumps(reply.body).encode("utf-8"), "application/json"
        self.send_response(reply.status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _reset(self) -> None:
        """Close with SO_LINGER 0: the client sees a connection reset, not a response."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass


# --- a loopback HTTP server with a scripted answer per request (the system under test) -----------
#: What a Loopback's `answer` returns: (status, body, content type), optionally with extra headers.
Answer = tuple[int, bytes, str] | tuple[int, bytes, str, dict[str, str]]


@dataclass(frozen=True)
class Request:
    """One request a Loopback received."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes


class Loopback:
    """A ThreadingHTTPServer on 127.0.0.1 answering every method with `answer(method, path, body)`
    → (status, body bytes, content type[, headers]). `requests` lists every `Request` in arrival
    order (recorded before it is answered); `calls` its (method, path) and `seen` its (method, path,
    headers). Stop it with `stop()` (or use it as a context manager)."""

    def __init__(self, answer: Callable[[str, str, bytes], Answer]) -> None:
        requests: list[Request] = []
        self.requests = requests

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                requests.append(Request(self.command, self.path, headers, body))
                status, payload, kind, *extra = answer(self.command, self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (extra[0] if extra else {}).items():
                    self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_OPTIONS = do_HEAD = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def calls(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.requests]

    @property
    def seen(self) -> list[tuple[str, str, dict[str, str]]]:
        return [(r.method, r.path, r.headers) for r in self.requests]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Loopback:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: What nginx's and Go's TLS servers answer a plain HTTP request (`TlsPort(plain_answer=...)`).
NGINX_PLAIN_ANSWER = (
    b"HTTP/1.1 400 Bad Request\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: 156\r\n"
    b"Connection: close\r\n\r\n"
    b"<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n"
    b"<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n</body>\r\n</html>\r\n"
)
GO_PLAIN_ANSWER = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"


class TlsPort:
    """A loopback port that speaks TLS only, with a self-signed certificate `openssl` makes in
    `folder` (call `need_command("openssl")` first). Each connection is handshaken and closed; a
    plain HTTP request fails the handshake and is hung up on without a byte: with the rest of the
    request unread (a reset, as OpenSSL's own server does), or with `drain` once it is read (a
    clean close: "Server disconnected", as asyncio's TLS server does) — or, with `plain_answer`,
    answered that once read (nginx's and Go's 400, above) and closed."""

    def __init__(self, folder: Path, *, drain: bool = False, plain_answer: bytes | None = None) -> None:
        self._drain = drain or plain_answer is not None
        self._plain_answer = plain_answer
        cert, key = folder / "tls-cert.pem", folder / "tls-key.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
             "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            check=True, capture_output=True,
        )
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(cert, key)
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.1)
        self.port = int(self._socket.getsockname()[1])
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._socket.accept()
            except TimeoutError:
                continue
            conn.settimeout(5)
            try:
                if self._drain and conn.recv(1, socket.MSG_PEEK) != b"\x16":  # not a TLS handshake record
                    conn.settimeout(0.2)
                    conn.recv(65536)  # the plain request, read; the client waits for an answer
                    if self._plain_answer is not None:
                        conn.sendall(self._plain_answer)
                    conn.close()
                else:
                    self._context.wrap_socket(conn, server_side=True).close()
            except (ssl.SSLError, OSError):
                conn.close()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        self._socket.close()

    def __enter__(self) -> TlsPort:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- an OpenAI-compatible gateway (LiteLLM and the like) built on Loopback ----------------------
#: The eval a gateway test runs: one chat turn that should answer "hi …".
GATEWAY_EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval
async def chat(t):
    turn = await t.send("hello")
    t.check(turn.message, includes("hi")).label("greets")
'''


class Gateway:
    """Speaks /v1/models (404 when `listed` is None) and /v1/chat/completions; chat answers come
    from `script` (FIFO of (status, headers, JSON body)), else an OK reply with LiteLLM's cost header."""

    def __init__(self, listed: list[str] | None = None) -> None:
        self.listed = listed
        self.script: deque[tuple[int, dict[str, str], Any]] = deque()
        self._loopback = Loopback(self._answer)

    def _answer(self, method: str, path: str, body: bytes) -> Answer:
        if method == "GET":
            if self.listed is None:
                return _json(404, {}, {"detail": "Not Found"})
            return _json(200, {}, {"object": "list", "data": [{"id": m} for m in self.listed]})
        if self.script:
            return _json(*self.script.popleft())
        return _json(200, {"x-litellm-response-cost": "0.0125"}, {
            "id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi there"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})

    @property
    def url(self) -> str:
        return f"{self._loopback.url}/v1"

    @property
    def seen(self) -> list[tuple[str, str, dict[str, str]]]:
        return self._loopback.seen

    def posts(self) -> int:
        return sum(1 for method, path, _ in self.seen if method == "POST" and path.endswith("/chat/completions"))

    def stop(self) -> None:
        self._loopback.stop()


def _json(status: int, headers: dict[str, str], body: Any) -> Answer:
    return status, json.dumps(body).encode(), "application/json", headers
