"""Issue 9.26 (adapter side): each distinct adapter's endpoint is checked once before dispatch,
against real loopback servers; a cause names the URL and never the key."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from niceeval_cli.adapters import load_adapter, preflight_adapters
from niceeval_cli.authoring import Adapter, define_adapter
from tests.support.components import need_command
from tests.support.loopback import GO_PLAIN_ANSWER, NGINX_PLAIN_ANSWER, Answer, Loopback, TlsPort, free_port

#: The project root the adapters are loaded for (their relative paths start there).
ROOT = Path(__file__).parent

KEY = "sk-preflight-secret-0123456789abcdef"


@dataclass
class Endpoint:
    """A loopback server answering every method of every path with `status` (or per path)."""

    status: int = 200
    by_path: dict[str, int] = field(default_factory=dict)
    loopback: Loopback | None = None

    @property
    def base(self) -> str:
        assert self.loopback is not None
        return self.loopback.url

    @property
    def seen(self) -> list[tuple[str, str, str | None]]:
        """(method, path, Authorization header) of every request."""
        assert self.loopback is not None
        return [(r.method, r.path, r.headers.get("authorization")) for r in self.loopback.requests]

    def answer(self, method: str, path: str, body: bytes) -> Answer:
        return self.by_path.get(path, self.status), b"", "text/plain"


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    with Loopback(server.answer) as server.loopback:
        yield server


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    return free_port()


def _http(url: str) -> Adapter:
    return load_adapter("http", {"url": url}, "staging", root=ROOT)


def _openai(base_url: str) -> Adapter:
    return load_adapter("openai-chat", {"base_url": base_url, "api_key_env": "PREFLIGHT_KEY"}, "models/a", root=ROOT)


async def test_an_http_adapter_whose_service_is_down_fails_naming_the_url(closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}/api/chat"
    causes = await preflight_adapters([("staging", _http(url))])
    assert list(causes) == ["staging"]
    assert causes["staging"].startswith(f"cannot connect to {url}")
    assert "\n" not in causes["staging"]


@pytest.mark.parametrize("status", [200, 204, 400, 405, 501, 500, 429])
async def test_an_http_service_that_exists_passes(endpoint: Endpoint, status: int) -> None:
    endpoint.status = status
    assert await preflight_adapters([("staging", _http(f"{endpoint.base}/api/chat"))]) == {}
    assert [(m, p) for m, p, _ in endpoint.seen] == [("OPTIONS", "/api/chat")]  # never a POST


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_an_http_service_that_refuses_fails_naming_url_and_status(
    endpoint: Endpoint, status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAGING_TOKEN", KEY)
    endpoint.status = status
    url = f"{endpoint.base}/api/chat"
    adapter = load_adapter("http", {"url": url, "headers": {"Authorization": "Bearer {env:STAGING_TOKEN}"}}, "s",
                           root=ROOT)
    causes = await preflight_adapters([("staging", adapter)])
    assert causes["staging"].startswith(f"OPTIONS {url} answered HTTP {status}")
    assert endpoint.seen[0][2] == f"Bearer {KEY}"  # the configured headers are sent
    assert KEY not in causes["staging"]


async def test_openai_chat_checks_the_models_route_with_the_key(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_KEY", KEY)
    assert await preflight_adapters([("models/a", _openai(f"{endpoint.base}/v1"))]) == {}
    assert endpoint.seen == [("GET", "/v1/models", f"Bearer {KEY}")]


async def test_openai_chat_with_a_rejected_key_names_the_variable_never_the_key(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_KEY", KEY)
    endpoint.status = 401
    causes = await preflight_adapters([("models/a", _openai(f"{endpoint.base}/v1"))])
    assert causes == {"models/a": f"GET {endpoint.base}/v1/models answered HTTP 401 (unauthorized) "
                                  "(check the key in PREFLIGHT_KEY)"}


async def test_openai_chat_with_a_wrong_base_url_fails(endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFLIGHT_KEY", "test-key-123")
    endpoint.status = 404
    causes = await preflight_adapters([("models/a", _openai(f"{endpoint.base}/wrong"))])
    assert causes["models/a"] == f"GET {endpoint.base}/wrong/models answered HTTP 404 (not found)"


async def test_openai_chat_down_fails(closed_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFLIGHT_KEY", "test-key-123")
    causes = await preflight_adapters([("models/a", _openai(f"http://127.0.0.1:{closed_port}/v1"))])
    assert causes["models/a"].startswith(f"cannot connect to http://127.0.0.1:{closed_port}/v1/models")


@pytest.fixture(params=[False, True], ids=["reset", "closed"])
def tls_port(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TlsPort]:
    """Hanging up on the plain request both ways: a reset (ReadError), a clean close (Server disconnected)."""
    need_command("openssl")  # to make its certificate
    with TlsPort(tmp_path, drain=request.param) as server:
        yield server


async def test_an_http_url_at_a_tls_port_fails_once_saying_use_https(tls_port: TlsPort) -> None:
    url = f"http://127.0.0.1:{tls_port.port}/api/chat"
    causes = await preflight_adapters([("staging", _http(url))])
    assert causes == {"staging": f"url in [experiments.staging.options] is {url}, but port {tls_port.port} "
                                 "speaks TLS (it hung up on a plain HTTP request); use https://"}


async def test_an_openai_chat_base_url_at_a_tls_port_fails_naming_base_url(
        tls_port: TlsPort, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFLIGHT_KEY", KEY)
    base = f"http://127.0.0.1:{tls_port.port}/v1"
    causes = await preflight_adapters([("models/a", _openai(base))])
    assert causes["models/a"].startswith(f'base_url in [experiments."models/a".options] is {base}, but port ')
    assert causes["models/a"].endswith("speaks TLS (it hung up on a plain HTTP request); use https://")


@pytest.fixture(params=[NGINX_PLAIN_ANSWER, GO_PLAIN_ANSWER], ids=["nginx", "go"])
def tls_port_answering_400(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TlsPort]:
    """A TLS port whose server answers a plain HTTP request 400, as nginx's and Go's do."""
    need_command("openssl")  # to make its certificate
    with TlsPort(tmp_path, plain_answer=request.param) as server:
        yield server


async def test_an_http_url_at_a_tls_port_answering_400_fails_once_saying_use_https(
        tls_port_answering_400: TlsPort) -> None:
    port = tls_port_answering_400.port
    url = f"http://127.0.0.1:{port}/api/chat"
    causes = await preflight_adapters([("staging", _http(url))])
    assert causes == {"staging": f"url in [experiments.staging.options] is {url}, but port {port} "
                                 "speaks TLS (it answered a plain HTTP request with 400); use https://"}


async def test_an_openai_chat_base_url_at_a_tls_port_answering_400_fails_naming_base_url(
        tls_port_answering_400: TlsPort, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFLIGHT_KEY", KEY)
    base = f"http://127.0.0.1:{tls_port_answering_400.port}/v1"
    causes = await preflight_adapters([("models/a", _openai(base))])
    assert causes["models/a"] == (f'base_url in [experiments."models/a".options] is {base}, but port '
                                  f"{tls_port_answering_400.port} speaks TLS (it answered a plain HTTP request "
                                  "with 400); use https://")


@pytest.fixture
def hanging_up() -> Iterator[int]:
    """A loopback port whose server closes every connection at once, speaking nothing at all."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    stopped = threading.Event()

    def serve() -> None:
        while not stopped.is_set():
            try:
                server.accept()[0].close()
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stopped.set()
    thread.join()
    server.close()


async def test_a_server_hanging_up_without_speaking_tls_is_left_to_the_attempts(hanging_up: int) -> None:
    assert await preflight_adapters([("staging", _http(f"http://127.0.0.1:{hanging_up}/api/chat"))]) == {}


async def test_openai_chat_with_its_key_variable_unset_fails_without_a_request(
        endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFLIGHT_KEY", raising=False)
    causes = await preflight_adapters([("models/a", _openai(endpoint.base))])
    assert causes["models/a"].startswith("the API key variable PREFLIGHT_KEY is unset or empty (api_key_env of "
                                         '[experiments."models/a".options])')
    assert endpoint.seen == []


async def test_each_distinct_adapter_is_checked_once_and_reported_for_each_experiment(endpoint: Endpoint) -> None:
    endpoint.by_path = {"/down": 404}
    shared, other = _http(f"{endpoint.base}/down"), _http(f"{endpoint.base}/up")
    causes = await preflight_adapters([("a", shared), ("b", shared), ("c", other)])
    assert sorted(causes) == ["a", "b"]
    assert sorted(p for _, p, _ in endpoint.seen) == ["/down", "/up"]


async def test_a_custom_preflight_is_called_and_its_cause_kept_on_one_line_and_redacted() -> None:
    calls: list[str] = []

    async def check() -> str:
        calls.append("checked")
        return f"the bot at http://bot.local is down\nkey {KEY}"

    adapter = define_adapter("bot", send=lambda ctx, m: m, preflight=check)
    adapter.secrets = [KEY]
    causes = await preflight_adapters([("x", adapter), ("y", adapter)])
    assert calls == ["checked"]
    assert causes == {"x": "the bot at http://bot.local is down key [redacted]",
                      "y": "the bot at http://bot.local is down key [redacted]"}


async def test_a_custom_preflight_that_raises_is_a_cause_and_a_plain_one_passes() -> None:
    def broken() -> None:
        raise OSError("no route to host")

    fine = define_adapter("fine", send=lambda ctx, m: m, preflight=lambda: None)
    causes = await preflight_adapters([("x", define_adapter("bot", preflight=broken)), ("y", fine)])
    assert causes == {"x": "the preflight of adapter 'bot' raised OSError: no route to host"}


async def test_adapters_without_a_preflight_pass() -> None:
    assert await preflight_adapters([("x", define_adapter("plain", send=lambda ctx, m: m))]) == {}
    assert await preflight_adapters([]) == {}


async def test_an_unset_header_variable_is_the_cause_without_a_request(
        endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STAGING_TOKEN", raising=False)
    url = f"{endpoint.base}/api/chat"
    adapter = load_adapter("http", {"url": url, "headers": {"Authorization": "Bearer {env:STAGING_TOKEN}"}}, "s",
                           root=ROOT)
    causes = await preflight_adapters([("s", adapter)])
    assert causes["s"] == ("environment variable(s) unset or empty (header Authorization needs STAGING_TOKEN; "
                           "[experiments.s.options]); set them in the environment or in .env beside niceeval.toml")
    assert endpoint.seen == []


async def test_a_refusal_with_the_headers_set_points_to_the_options_table(endpoint: Endpoint) -> None:
    endpoint.status = 403
    causes = await preflight_adapters([("models/x", load_adapter("http", {"url": endpoint.base}, "models/x",
                                                                 root=ROOT))])
    assert causes["models/x"].endswith('(check the headers in [experiments."models/x".options])')


def test_the_builtin_http_adapters_name_their_endpoint_for_the_setup_error() -> None:
    assert _http("http://127.0.0.1:9/api/chat").endpoint == "http://127.0.0.1:9/api/chat"
    assert _openai("http://127.0.0.1:9/v1/").endpoint == "http://127.0.0.1:9/v1"
    assert define_adapter("plain").endpoint is None
