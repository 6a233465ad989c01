"""Issue 28: the agent path against its raw-client floor, in one run.

    python benchmarks/agent_path.py [--cases 200] [--latency-ms 20] [--concurrency 32] [--timeline] [--profile]

The workload a tool-using agent eval looks like: one eval over N cases, the `openai-chat`
adapter with `tools` / `tool_handlers` (three plain functions), against a loopback
OpenAI-compatible server of this script's own that answers each case's first chat request with
3 tool calls and its second (the one carrying the tool results) with the final text, each after
`--latency-ms`. Every attempt asserts `tool_order(["lookup", "price", "refund"])` and the reply.
`[project] max_concurrency` is `--concurrency`; the run goes through the real CLI in a subprocess.

The server is its own process (127.0.0.1, port 0; this script with `--serve`), lean because it
shares the box's cores with what it measures: an asyncio protocol, the latency a timer, each
request parsed once (`json.loads`, for its case and whether it carries tool results), the two
replies encoded once with the case spliced in. Its own CPU per request is printed for each side.

The floor, measured in the same invocation against the same server: the same two-request loop
per case from `--concurrency` asyncio lanes, each its own `httpx.AsyncClient` of one
keep-alive connection (no pool to search), nothing else (its own subprocess). (Each lane's
client is made before its first request goes out, so their TLS contexts are not in the window.)
Start-up: the same CLI run over a single case (median of three), less its two model latencies.

Printed for both: wall time, the model window (first chat request in → last out, at the
server), mean requests in flight (Σ request durations / window), CPU (user + sys of the
process, from RUSAGE_CHILDREN) and CPU per model request (whole process; and for niceeval also
beyond start-up: the one-case run's CPU taken off, over the requests beyond its two); then the ratios and the targets:
window ≤ 1.3 × floor, wall ≤ 1.5 × (floor + start-up), ≥ 24 in flight, CPU per request ≤ 1 ms.
`--timeline` prints each side's requests in flight per 20 ms of its window (where it went);
`--profile` runs the CLI under pyinstrument and prints its call tree.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "BENCH_AGENT_KEY"
MODEL = "bench-agent"
TOOLS = ("lookup", "price", "refund")


# ── the loopback model server (its own process) ─────────────────────────────────────────────

def _tool_reply(case: str) -> dict[str, object]:
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": name, "arguments": json.dumps({"order": case})}}
             for i, name in enumerate(TOOLS)]
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": None, "tool_calls": calls}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 30, "total_tokens": 80}}


def _final_reply(case: str) -> dict[str, object]:
    return {"id": "chatcmpl-2", "object": "chat.completion", "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"Refunded order {case}."}}],
            "usage": {"prompt_tokens": 90, "completion_tokens": 8, "total_tokens": 98}}


def _response(data: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data)


_MARK = "CASEMARK"
_PLAIN_CASE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class _Replies:
    """Both replies encoded once around a placeholder; a request's case id is spliced in.

    The bytes are exactly `json.dumps` of `_tool_reply(case)` / `_final_reply(case)` (checked at
    start-up); a case id that would need escaping falls back to encoding the reply whole.
    """

    def __init__(self) -> None:
        self.tool = json.dumps(_tool_reply(_MARK)).encode().split(_MARK.encode())
        self.final = json.dumps(_final_reply(_MARK)).encode().split(_MARK.encode())
        self.models = _response(json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode())
        for case in ("A00000", "x"):
            assert self.reply(case, False) == _response(json.dumps(_tool_reply(case)).encode())
            assert self.reply(case, True) == _response(json.dumps(_final_reply(case)).encode())

    def reply(self, case: str, final: bool) -> bytes:
        if not _PLAIN_CASE.fullmatch(case):
            return _response(json.dumps((_final_reply if final else _tool_reply)(case)).encode())
        return _response(case.encode().join(self.final if final else self.tool))


class _Connection(asyncio.Protocol):
    """One keep-alive connection: requests are answered in order, each after the latency."""

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.buffer = b""
        self.began = 0.0  # when the head of the request being read arrived
        self.busy = False  # a reply is pending: later requests wait in the buffer (pipelining)
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server.connections += 1

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self._next()

    def _next(self) -> None:
        while self.buffer and not self.busy:
            buffer = self.buffer
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if not self.began:
                self.began = time.monotonic()
            head = buffer[:end].lower()
            length = 0
            at = head.find(b"\r\ncontent-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + 17:stop if stop >= 0 else None])
            total = end + 4 + length
            if len(buffer) < total:
                return
            body, self.buffer = buffer[end + 4:total], buffer[total:]
            began, self.began = self.began, 0.0
            assert self.transport is not None
            if head.startswith(b"get ") and head.split(b" ", 2)[1].endswith(b"/models"):
                self.transport.write(self.server.replies.models)
                continue
            self.busy = True
            reply = self.server.answer(body)
            asyncio.get_running_loop().call_later(self.server.latency_s, self._send, reply, began)

    def _send(self, reply: bytes, began: float) -> None:
        assert self.transport is not None
        if not self.transport.is_closing():
            self.transport.write(reply)
            self.server.chats.append((began, time.monotonic()))
        self.busy = False
        self._next()


class _Server:
    """OpenAI-compatible enough for `openai-chat`: GET /models, POST /chat/completions.

    Lean on purpose (the floor and the run share the box's cores with it): an asyncio protocol
    rather than streams, the latency a timer rather than a task, the request parsed once with
    `json.loads` for its case and whether it carries tool results, the reply pre-encoded.
    """

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.replies = _Replies()
        self.chats: list[tuple[float, float]] = []  # (head in, reply out), monotonic
        self.connections = 0
        self.cpu0 = 0.0

    def answer(self, body: bytes) -> bytes:
        messages = json.loads(body)["messages"]
        user = next(m["content"] for m in messages if m["role"] == "user")
        return self.replies.reply(user.rsplit(" ", 1)[-1], any(m["role"] == "tool" for m in messages))

    def reset(self) -> None:
        self.chats, self.connections, self.cpu0 = [], 0, _cpu_self()

    def figures(self) -> dict[str, float]:
        chats = self.chats
        first = min(began for began, _ in chats) if chats else 0.0
        last = max(out for _, out in chats) if chats else 0.0
        return {"window": last - first, "first": first, "last": last, "requests": len(chats),
                "busy": sum(out - began for began, out in chats), "connections": self.connections,
                "cpu": _cpu_self() - self.cpu0}


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _serve(latency_s: float) -> None:
    """The server process: prints its port, then answers `reset` / `figures` lines on stdin."""
    loop = asyncio.get_running_loop()
    server = _Server(latency_s)
    listener = await loop.create_server(lambda: _Connection(server), "127.0.0.1", 0, backlog=1024)
    print(listener.sockets[0].getsockname()[1], flush=True)
    control = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(control), sys.stdin)
    while line := (await control.readline()).strip():
        if line == b"reset":
            server.reset()
            print("ok", flush=True)
        elif line == b"figures":
            print(json.dumps(server.figures()), flush=True)
        elif line == b"chats":
            print(json.dumps(server.chats), flush=True)
    listener.close()


class ModelServer:
    """The benchmark's handle on the server process (its own process, so that the benchmark's
    interpreter shares nothing with it)."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> ModelServer:
        self._proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--latency-ms", repr(1000 * self.latency_s)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self._ask(None))
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def _ask(self, command: str | None) -> str:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        if command is not None:
            proc.stdin.write(command + "\n")
            proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            sys.exit(f"the model server exited {proc.wait()}")
        return line

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        self._ask("reset")

    def figures(self) -> dict[str, float]:
        """window, busy (Σ request durations), requests, connections, cpu (the server's own)
        of the chat requests since the last reset."""
        return dict(json.loads(self._ask("figures")))

    def chats(self) -> list[tuple[float, float]]:
        """(in, out) of every chat request since the last reset, in the server's monotonic seconds."""
        return [(a, b) for a, b in json.loads(self._ask("chats"))]


def _timeline(chats: list[tuple[float, float]], step: float) -> str:
    """Requests in flight, averaged over each `step` of the window: where the window went."""
    start = min(a for a, _ in chats)
    end = max(b for _, b in chats)
    cells = []
    at = start
    while at < end:
        busy = sum(max(0.0, min(b, at + step) - max(a, at)) for a, b in chats)
        cells.append(f"{busy / step:.0f}")
        at += step
    return " ".join(cells)


# ── the project and the floor ───────────────────────────────────────────────────────────────

AGENT_TOOLS = f'''
SCHEMAS = [{{"type": "function", "function": {{"name": name, "parameters": {{"type": "object"}}}}}}
           for name in {TOOLS!r}]


def lookup(arguments):
    return {{"order": arguments["order"], "paid": 30}}


def price(arguments):
    return "30.00"


def refund(arguments):
    return {{"refunded": True}}


HANDLERS = {{"lookup": lookup, "price": price, "refund": refund}}
'''

EVAL = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

CASES = [{{"order": f"A{{i:05d}}"}} for i in range({cases})]


@define_eval(cases=CASES, case_id="order")
async def refund(t, case):
    turn = await t.send("Refund order " + case["order"])
    t.tool_order(["lookup", "price", "refund"])
    t.check(turn.message, includes("Refunded order " + case["order"]))
'''


def _project(root: Path, base_url: str, cases: int, concurrency: int) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "agent_tools.py").write_text(AGENT_TOOLS, encoding="utf-8")
    (root / "evals" / "agent.py").write_text(EVAL.format(cases=cases), encoding="utf-8")
    (root / "niceeval.toml").write_text(
        f"[project]\nmax_concurrency = {concurrency}\n\n"
        f'[experiments.agent]\nadapter = "openai-chat"\nmodel = "{MODEL}"\n'
        f'[experiments.agent.options]\nbase_url = "{base_url}"\napi_key_env = "{KEY_ENV}"\n'
        'tools = "agent_tools:SCHEMAS"\ntool_handlers = "agent_tools:HANDLERS"\n',
        encoding="utf-8")
    return root


FLOOR = r'''
import asyncio, json, sys, httpx
base, cases, lanes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("lookup", "price", "refund")]

async def case(client, order):
    messages = [{"role": "user", "content": "Refund order " + order}]
    body = {"model": "bench-agent", "messages": messages, "tools": tools}
    reply = (await client.post(base + "/chat/completions", json=body)).json()
    assistant = reply["choices"][0]["message"]
    messages.append(assistant)
    for call in assistant["tool_calls"]:
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
    reply = (await client.post(base + "/chat/completions", json=body)).json()
    assert reply["choices"][0]["message"]["content"].startswith("Refunded")

async def main():
    queue = asyncio.Queue()
    for i in range(cases):
        queue.put_nowait(f"A{i:05d}")
    async def lane():
        # one client of one connection per lane: no pool to search (what the judge's lanes do)
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx.AsyncClient(limits=limits, headers={"Authorization": "Bearer k"}) as client:
            while not queue.empty():
                await case(client, queue.get_nowait())
    await asyncio.gather(*(lane() for _ in range(lanes)))

asyncio.run(main())
'''


@dataclass
class Figures:
    wall: float
    window: float
    in_flight: float
    requests: int
    cpu: float
    connections: int
    server_cpu: float  # the model server's own CPU while it answered
    window_cpu: float | None  # the process's CPU between the first request in and the last out
    chats: list[tuple[float, float]]  # (in, out) of each chat request, with --timeline

    @property
    def cpu_per_request_ms(self) -> float:
        return 1000 * self.cpu / self.requests

    @property
    def window_cpu_per_request_ms(self) -> float:
        return 1000 * self.window_cpu / self.requests if self.window_cpu is not None else math.nan

    @property
    def server_cpu_per_request_ms(self) -> float:
        return 1000 * self.server_cpu / self.requests


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _CpuSampler:
    """A child's user + sys CPU read from /proc/PID/stat every few ms, with when it was read (the
    server's clock: CLOCK_MONOTONIC is the machine's), to tell its CPU inside the model window —
    on one thread a window cannot be shorter than that. None where there is no /proc."""

    def __init__(self, pid: int) -> None:
        self.path = Path(f"/proc/{pid}/stat")
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.stop.wait(0.004):
            try:
                fields = self.path.read_text().rpartition(")")[2].split()
            except OSError:
                return
            self.samples.append((time.monotonic(), (int(fields[11]) + int(fields[12])) / self.tick))

    def between(self, first: float, last: float) -> float | None:
        self.stop.set()
        self.thread.join()
        before = [cpu for at, cpu in self.samples if at <= first]
        after = [cpu for at, cpu in self.samples if at >= last]
        return after[0] - before[-1] if before and after else None


def _measure(server: ModelServer, command: list[str], cwd: Path, env: dict[str, str],
             timeline: bool = False) -> Figures:
    server.reset()
    cpu0 = _cpu_children()
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = _CpuSampler(child.pid)
    stdout, stderr = child.communicate()
    wall = time.perf_counter() - started
    cpu = _cpu_children() - cpu0
    if child.returncode != 0:
        sys.exit(f"{' '.join(command[:4])} exited {child.returncode}:\n{stdout[-3000:]}\n{stderr[-3000:]}")
    seen = server.figures()
    window, requests = seen["window"], int(seen["requests"])
    return Figures(wall, window, seen["busy"] / window, requests, cpu, int(seen["connections"]), seen["cpu"],
                   sampler.between(seen["first"], seen["last"]), server.chats() if timeline else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--profile", action="store_true", help="run the CLI under pyinstrument")
    parser.add_argument("--timeline", action="store_true",
                        help="print requests in flight per 20 ms of each side's window")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the server process
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    if args.serve:
        asyncio.run(_serve(latency))
        return 0
    env = {**os.environ, KEY_ENV: "bench-key-not-secret", "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = [sys.executable, "-m", "niceeval_cli.cli", "run", "--rerun-all"]
    with ModelServer(latency) as server, tempfile.TemporaryDirectory() as tmp:
        one = _project(Path(tmp) / "one", server.base_url, 1, args.concurrency)
        many = _project(Path(tmp) / "many", server.base_url, args.cases, args.concurrency)
        _measure(server, run, one, env)  # warm the bytecode and the OS caches
        # The one-case run three times, its median taken: on a shared box one run's CPU varies by
        # a few tenths of a second, which would move the per-request figure beyond start-up by
        # as many milliseconds.
        singles = sorted((_measure(server, run, one, env) for _ in range(3)), key=lambda f: f.cpu)
        single = singles[1]
        startup = max(statistics.median(f.wall for f in singles) - 2 * latency, 0.0)
        floor = _measure(server, [sys.executable, "-c", FLOOR, server.base_url, str(args.cases),
                                  str(args.concurrency)], Path(tmp), env, args.timeline)
        command = run
        session = Path(tmp) / "cli.pyisession"
        if args.profile:
            # The CLI's typer app rather than its console-script `main`, which leaves with
            # os._exit while the tool handlers' idle worker threads live (no profile written).
            command = [sys.executable, "-m", "pyinstrument", "-r", "pyisession", "-o", str(session), "-c",
                       "from niceeval_cli.cli import app; app(args=['run', '--rerun-all'], prog_name='niceeval')"]
        agent = _measure(server, command, many, env, args.timeline)
        if args.profile:
            from pyinstrument.renderers import ConsoleRenderer
            from pyinstrument.session import Session
            print(ConsoleRenderer(unicode=True, color=False, show_all=False).render(Session.load(str(session))))

    print(f"{args.cases} cases × 2 chat requests (3 tool calls, then the reply), latency {args.latency_ms:g} ms, "
          f"concurrency {args.concurrency}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"ideal (2 × latency × cases / concurrency) {2 * latency * args.cases / args.concurrency:.3f} s; "
          f"start-up (one case, less 2 latencies) {startup:.3f} s")
    print(f"{'':28}{'niceeval':>12}{'floor':>12}{'ratio':>10}")
    for label, a, b in [("wall (s)", agent.wall, floor.wall), ("model window (s)", agent.window, floor.window),
                        ("mean in flight", agent.in_flight, floor.in_flight),
                        ("CPU user+sys (s)", agent.cpu, floor.cpu),
                        ("CPU per request (ms)", agent.cpu_per_request_ms, floor.cpu_per_request_ms),
                        ("  of it in the window (ms)", agent.window_cpu_per_request_ms,
                         floor.window_cpu_per_request_ms),
                        ("server CPU per request (ms)", agent.server_cpu_per_request_ms,
                         floor.server_cpu_per_request_ms)]:
        print(f"{label:28}{a:12.3f}{b:12.3f}{a / b:9.2f}×")
    print(f"{'chat requests':28}{agent.requests:12d}{floor.requests:12d}")
    print(f"{'connections opened':28}{agent.connections:12d}{floor.connections:12d}")
    if args.timeline:
        for label, figures in (("niceeval", agent), ("floor", floor)):
            print(f"in flight per 20 ms, {label}: {_timeline(figures.chats, 0.02)}")
    marginal = 1000 * (agent.cpu - single.cpu) / (agent.requests - single.requests)
    print(f"CPU per request beyond start-up (the one-case runs' median CPU taken off)  {marginal:.3f} ms")
    targets = [
        (f"model window ≤ 1.3 × floor ({agent.window / floor.window:.2f} ×)", agent.window <= 1.3 * floor.window),
        (f"wall ≤ 1.5 × (floor + start-up) ({agent.wall / (floor.window + startup):.2f} ×)",
         agent.wall <= 1.5 * (floor.window + startup)),
        (f"≥ 24 requests in flight ({agent.in_flight:.1f})", agent.in_flight >= 24),
        (f"CPU per model request beyond start-up ≤ 1 ms ({marginal:.2f} ms)", marginal <= 1.0),
    ]
    for text, met in targets:
        print(f"target: {text}: {'met' if met else 'MISSED'}")
    return 0 if all(met for _, met in targets) else 2


if __name__ == "__main__":
    sys.exit(main())
