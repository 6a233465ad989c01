"""Issue 28 items 1-2: the agent-path benchmark runs the tool-using workload through the CLI
against its raw-client floor; the `openai-chat` and `http` adapters share the judge's lanes and
lean request path (what reaches the server is what httpx's client would send), and the tool
handlers of one reply run in order, plain functions off the loop in one thread hop."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from niceeval_cli._httpx import httpx
from niceeval_cli._lanes import LaneTransport, lane_client
from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_agent_benchmark_prints_both_sides_and_the_targets() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "agent_path.py"), "--cases", "12",
                          "--concurrency", "4", "--latency-ms", "5"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode in (0, 2), out.stdout + out.stderr  # 2: a target missed on a busy box
    text = out.stdout
    for row in ("wall (s)", "model window (s)", "mean in flight", "CPU user+sys (s)", "CPU per request (ms)"):
        assert re.search(rf"^{re.escape(row)}\s+[\d.]+\s+[\d.]+\s+[\d.]+×$", text, re.M), (row, text)
    # every case ran its two requests (3 tool calls, then the reply) on both sides
    assert re.search(r"^chat requests\s+24\s+24$", text, re.M), text
    connections = re.search(r"^connections opened\s+(\d+)\s+(\d+)$", text, re.M)
    # the run's lanes (≤ concurrency) and the preflight's own GET /models
    assert connections and 2 <= int(connections.group(1)) <= 4 + 1, text
    assert len(re.findall(r"^target: .*: (met|MISSED)$", text, re.M)) == 4, text


async def test_an_adapter_client_runs_on_lanes_unless_a_proxy_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    client = lane_client("https://api.example.com/v1/chat/completions", 5.0)
    assert isinstance(client.transport, LaneTransport) and client._client is None  # the lean path
    await client.aclose()
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    client = lane_client("https://api.example.com/v1/chat/completions", 5.0)
    assert client._client is not None  # httpx's own client and pool, which honour the proxy
    assert isinstance(client._client._transport, httpx.AsyncHTTPTransport)
    await client.aclose()
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    client = lane_client("https://api.example.com/v1/chat/completions", 5.0)
    assert isinstance(client.transport, LaneTransport) and client._client is None
    await client.aclose()


# -- the adapters' lean request path sends what httpx's client sends -----------------------------

class _Recorder:
    """A loopback HTTP/1.1 server recording each request's bytes (head and body) as received;
    its first answer may set a cookie. `served` ends when every connection has closed."""

    def __init__(self, set_cookie_first: bool) -> None:
        self.set_cookie_first = set_cookie_first
        self.seen: list[bytes] = []
        self.open = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                body = await reader.readexactly(int(length.group(1))) if length else b""
                cookie = b"set-cookie: session=s1; Path=/\r\n" if self.set_cookie_first and not self.seen else b""
                self.seen.append(head + body)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" + cookie
                             + b"content-length: 11\r\n\r\n{\"ok\":true}")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            self.open -= 1

    async def served(self) -> None:
        for _ in range(500):
            if not self.open:
                return
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("set_cookie", [False, True])
async def test_the_lean_path_sends_the_bytes_httpx_s_client_sends(
    monkeypatch: pytest.MonkeyPatch, set_cookie: bool,
) -> None:
    """Same request line, header lines (names, values, order) and JSON body as
    `httpx.AsyncClient().post(url, json=..., headers=...)`, request after request: the key and a
    configured header, a header overriding a client default and one overriding the JSON
    content type, non-ASCII text, and a cookie the server set sent back on the next request."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    recorder = _Recorder(set_cookie)
    server = await asyncio.start_server(recorder.serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
    requests: list[tuple[dict[str, object], dict[str, str]]] = [
        ({"model": "m", "messages": [{"role": "user", "content": "Grüße, 日本"}]},
         {"Authorization": "Bearer k-1", "X-Team": "evals"}),
        ({"model": "m", "n": 1.5, "stop": None}, {"Authorization": "Bearer k-1", "X-Team": "evals"}),
        ({"model": "m"}, {"user-agent": "my-agent/1", "Content-Type": "application/json; charset=utf-8"}),
    ]
    sent: dict[str, list[bytes]] = {}
    async with server:
        for side in ("httpx", "lean"):
            recorder.seen = []
            if side == "httpx":
                async with httpx.AsyncClient(timeout=5.0) as plain:
                    for body, headers in requests:
                        assert (await plain.post(url, json=body, headers=headers)).json() == {"ok": True}
            else:
                lean = lane_client(url, 5.0)
                assert lean._client is None
                for body, headers in requests:
                    assert (await lean.post_json(url, body, headers)).json() == {"ok": True}
                await lean.aclose()
            await recorder.served()
            sent[side] = recorder.seen
    assert sent["lean"] == sent["httpx"]
    assert (b"cookie: session=s1" in sent["lean"][1].lower()) is set_cookie


async def _answer_encoded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """/gzip: a gzip-encoded JSON body; /chunked: chunked framing; anything else: plain."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            if length:
                await reader.readexactly(int(length.group(1)))
            body = json.dumps({"ok": True, "text": "Grüße " * 50}).encode()
            if b" /gzip " in head.split(b"\r\n", 1)[0]:
                packed = gzip.compress(body)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
                             b"content-length: %d\r\n\r\n%s" % (len(packed), packed))
            elif b" /chunked " in head.split(b"\r\n", 1)[0]:
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
                             + b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:40], body[40:]))
                             + b"0\r\n\r\n")
            else:
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def test_the_lean_path_reads_a_response_as_httpx_s_client_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The response a lane hands back: the headers as the server sent them, a gzip body decoded,
    chunked framing joined — what `httpx.AsyncClient` gives for the same answers."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server = await asyncio.start_server(_answer_encoded, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    seen: dict[str, list[object]] = {"httpx": [], "lean": []}
    async with server:
        async with httpx.AsyncClient(timeout=5.0) as plain:
            for path in ("/plain", "/gzip", "/chunked"):
                got = await plain.post(base + path, json={"q": 1})
                seen["httpx"].append((got.status_code, got.headers.multi_items(), got.content, got.json()))
        lean = lane_client(base + "/plain", 5.0)
        for path in ("/plain", "/gzip", "/chunked"):
            got = await lean.post_json(base + path, {"q": 1}, {})
            seen["lean"].append((got.status_code, got.headers.multi_items(), got.content, got.json()))
        await lean.aclose()
    assert seen["lean"] == seen["httpx"]
    assert seen["lean"][1][3] == {"ok": True, "text": "Grüße " * 50}  # decoded from gzip


async def test_credentials_in_the_url_go_through_httpx_s_client_as_basic_auth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    recorder = _Recorder(False)
    server = await asyncio.start_server(recorder.serve, "127.0.0.1", 0)
    url = f"http://user:pw@127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
    async with server:
        client = lane_client(url, 5.0)
        assert client._client is not None
        await client.post_json(url, {"a": 1}, {})
        await client.aclose()
        await recorder.served()
    assert b"authorization: basic dxnlcjpwdw==" in recorder.seen[0].lower()  # base64("user:pw")


# -- tool handlers: one worker-thread hop for a run of plain functions, order kept ---------------

ORDERED_TOOLS = """
import asyncio, threading

CALLS = []

def plain(name):
    def run(arguments):
        CALLS.append((name, threading.current_thread().name))
        if name == "broken":
            raise RuntimeError("database is down")
        return {"tool": name}
    return run

async def native(arguments):
    CALLS.append(("native", threading.current_thread().name))
    await asyncio.sleep(0)
    return "native done"

def later(arguments):
    CALLS.append(("later", threading.current_thread().name))
    async def settle():
        CALLS.append(("later settled", threading.current_thread().name))
        return ["settled"]
    return settle()

HANDLERS = {"first": plain("first"), "second": plain("second"), "native": native, "later": later,
            "broken": plain("broken"), "last": plain("last")}
"""


def test_tool_calls_of_one_reply_run_in_order_plain_ones_off_the_loop(project: Project, judge_server: JudgeServer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORDER_KEY", "order-key-not-secret")
    judge_server.listed = ["m"]
    names = ["first", "second", "native", "later", "broken", "missing", "last"]
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
             for i, n in enumerate(names)]
    judge_server.enqueue(Reply.completion({"content": None, "tool_calls": calls}, finish_reason="tool_calls"),
                         Reply.text("All done."))
    sealed = project.run_one(
        """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals
        import tools

        @define_eval()
        async def ordered(t):
            turn = await t.send("go")
            t.check(turn.message, equals("All done.")).label("reply")
            t.check([c[0] for c in tools.CALLS], equals(
                ["first", "second", "native", "later", "later settled", "broken", "last"])).label("order")
            loop_thread = tools.CALLS[2][1]  # the async handler ran on the loop
            t.check(all(c[1] != loop_thread for c in tools.CALLS if c[0] in ("first", "second", "later", "broken",
                                                                           "last")), equals(True)).label("threads")
        """,
        toml=(f'[experiments.chat]\nadapter = "openai-chat"\nmodel = "m"\n[experiments.chat.options]\n'
              f'base_url = "{judge_server.base_url}"\napi_key_env = "ORDER_KEY"\ntool_handlers = "tools:HANDLERS"\n'),
        files={"tools.py": ORDERED_TOOLS},
    )
    assert {r["label"]: r["state"] for r in sealed.results} == {"reply": "matched", "order": "matched",
                                                               "threads": "matched"}, sealed.results
    events = project.sql("SELECT name, status, output, seq FROM events WHERE kind = 'tool_call' ORDER BY seq")
    assert [(e["name"], e["status"]) for e in events] == [
        ("first", "completed"), ("second", "completed"), ("native", "completed"), ("later", "completed"),
        ("broken", "failed"), ("missing", "failed"), ("last", "completed")]
    assert [json.loads(e["output"]) if e["output"] else None for e in events] == [
        {"tool": "first"}, {"tool": "second"}, "native done", ["settled"], None, None, {"tool": "last"}]
    sent_back = [m for m in [r.json for r in judge_server.requests if isinstance(r.json, dict)
                             and "messages" in r.json][1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in sent_back] == [f"c{i}" for i in range(7)]
    assert "database is down" in sent_back[4]["content"] and "no handler for tool 'missing'" in sent_back[5]["content"]


STOPPED_TOOLS = """
import pathlib, time

def slow(arguments):
    time.sleep(1.0)
    return "slow done"

def after(arguments):
    pathlib.Path(arguments["mark"]).write_text("ran")
    return "after done"

HANDLERS = {"slow": slow, "after": after}
"""


def test_a_timed_out_attempt_starts_no_later_handler_of_its_reply(project: Project, judge_server: JudgeServer,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """One thread hop runs a reply's plain handlers one after another; once the attempt has
    timed out, the ones not yet started never start (as when each had its own hop)."""
    monkeypatch.setenv("ORDER_KEY", "order-key-not-secret")
    judge_server.listed = ["m"]
    mark = tmp_path / "after-ran"
    calls = [{"id": "c0", "type": "function", "function": {"name": "slow", "arguments": "{}"}},
             {"id": "c1", "type": "function", "function": {"name": "after",
                                                           "arguments": json.dumps({"mark": str(mark)})}}]
    judge_server.enqueue(Reply.completion({"content": None, "tool_calls": calls}, finish_reason="tool_calls"),
                         Reply.text("All done."))
    sealed = project.run_one(
        """
        from niceeval_cli import define_eval

        @define_eval(timeout_ms=300)
        async def stopped(t):
            await t.send("go")
        """,
        toml=(f'[experiments.chat]\nadapter = "openai-chat"\nmodel = "m"\n[experiments.chat.options]\n'
              f'base_url = "{judge_server.base_url}"\napi_key_env = "ORDER_KEY"\ntool_handlers = "tools:HANDLERS"\n'),
        files={"tools.py": STOPPED_TOOLS},
    )
    assert sealed.attempt["state"] == "errored" and sealed.attempt["reason"] == "timeout", sealed.attempt
    time.sleep(1.5)  # the slow handler has returned by now: the next one would have run
    assert not mark.exists()


FREED_TOOLS = """
def lookup(arguments):
    return {"paid": 30}

HANDLERS = {"lookup": lookup}
"""


def test_an_attempt_s_objects_are_freed_without_the_cyclic_collector(project: Project, judge_server: JudgeServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`t`, its sessions and turns pointed back at each other, so every attempt left its whole
    transcript (replies, events, tool calls) for the cyclic collector to find. Once sealed,
    they are freed as soon as nothing holds them: with the collector off, the second attempt
    sees the first one's `t`, turn and tool call gone. During the attempt nothing changed."""
    monkeypatch.setenv("ORDER_KEY", "order-key-not-secret")
    judge_server.listed = ["m"]
    for _ in range(2):
        judge_server.enqueue(
            Reply.completion({"content": None, "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
                finish_reason="tool_calls"),
            Reply.text("Refunded."))
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n\n[experiments.chat]\nadapter = \"openai-chat\"\n"
                  f"model = \"m\"\n[experiments.chat.options]\nbase_url = \"{judge_server.base_url}\"\n"
                  "api_key_env = \"ORDER_KEY\"\ntool_handlers = \"tools:HANDLERS\"\n")
    project.write("tools.py", FREED_TOOLS)
    project.write("evals/e.py", """
import gc
import weakref

from niceeval_cli import define_eval
from niceeval_cli.expect import equals

gc.disable()  # only reference counting frees anything from here on
EARLIER = []


@define_eval(cases=[{"n": 1}, {"n": 2}], case_id="n")
async def freed(t, case):
    gone = [name for name, ref in EARLIER if ref() is None]
    kept = [name for name, ref in EARLIER if ref() is not None]
    turn = await t.send("refund it")
    t.check(turn.session is t.sessions[0] and turn.session.turns == (turn,), equals(True)).label("session")
    t.tool_order(["lookup"])
    t.check(turn.message, equals("Refunded."))
    t.check({"gone": gone, "kept": kept}, equals({"gone": gone, "kept": []})).label("freed")
    EARLIER.extend([("t", weakref.ref(t)), ("turn", weakref.ref(turn)), ("tool call", weakref.ref(turn.events[0]))])
""")
    run = project.run()
    assert run.returncode == 0, (run.stdout, run.stderr)
    results = project.assertions()
    assert len(results) == 8 and {r["state"] for r in results} == {"matched"}, results
    freed = [r["evidence"] for r in results if r["label"] == "freed"]
    assert sorted(len(e["gone"]) for e in freed) == [0, 3], freed  # the second saw all of the first's gone


def test_a_turn_or_session_kept_past_its_attempt_reads_but_says_the_attempt_ended(project: Project) -> None:
    """What an eval keeps of an earlier attempt still reads (its message, its session while the
    session is kept too); an agent assertion or a send on it says that attempt ended."""
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n\n[experiments.local]\nadapter = \"app:adapter\"\n")
    project.write("app.py", """
from niceeval_cli import Turn, define_adapter

async def send(ctx, message, **options):
    return Turn(input=message, message="ok " + message)

adapter = define_adapter(name="echo", send=send)
""")
    project.write("evals/e.py", """
from niceeval_cli import define_eval
from niceeval_cli.authoring import AuthoringError
from niceeval_cli.expect import equals

KEPT = []


def _error(call):
    try:
        call()
    except AuthoringError as exc:
        return "attempt ended" in str(exc)
    return False


@define_eval(cases=[{"n": 1}, {"n": 2}], case_id="n")
async def kept(t, case):
    if KEPT:
        earlier, session = KEPT
        t.check([earlier.message, earlier.session is session, _error(lambda: earlier.tool_order(["x"])),
                 _error(lambda: session.send("again")), _error(lambda: session.called_tool("x"))],
                equals(["ok first", True, True, True, True])).label("kept")
    turn = await t.send("first")
    KEPT[:] = [turn, turn.session]
""")
    run = project.run()
    assert run.returncode == 0, (run.stdout, run.stderr)
    kept = [r for r in project.assertions() if r["label"] == "kept"]
    assert [r["state"] for r in kept] == ["matched"], kept
