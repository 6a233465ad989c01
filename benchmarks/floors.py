"""Issue 16: every figure as a ratio to a floor measured in the same run (machine speed cancels).

    python benchmarks/floors.py [w2 c64 w1 reuse] [--repeat 3]

- w2: 300 judged evals (50 ms loopback judge, concurrency 32) through the CLI, against the raw
  floor: the same 300 requests from raw asyncio streams over 32 keep-alive connections to the
  same server (nothing else: no JSON, no HTTP library). Judge window (first grading request in
  → last out, at the server) ≤ 1.2 × floor; whole run ≤ 1.5 × (floor + start-up), start-up
  being `niceeval run` of one trivial eval; ≥ 24 requests in flight on average.
- c64: 2 000 judged evals at concurrency 64 against the raw floor with 64 connections: ≤ 2 ×.
- w1: 1 000 trivial evals against its own floor, the sum of start-up (`niceeval run`, one
  trivial eval), discovery of the 1 000 evals and sealing 1 000 attempts, each measured alone:
  W1 ≤ 1.0 s and ≤ 2 × floor.
- reuse: 20 000 trivial evals fresh, then the same run again with every result reused: the
  fresh run's peak RSS ≤ 1.2 × its memory floor; the re-run ≤ 15 % of the fresh run's time,
  its peak RSS ≤ the fresh run's.
  Its memory floor: a one-eval run's peak plus what the 20 000-eval module itself takes once
  imported (measured alone, in a process that imported the run path first).

Figures are medians of --repeat runs; each floor is measured in the same invocation, between
the runs it is compared with.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import JUDGED, TRIVIAL, _in_flight, _judge_toml, _project, _rss_run, _run_fresh

ROOT = Path(__file__).resolve().parent.parent
ENV = {"BENCH_JUDGE_KEY": "bench-key-not-secret", "NO_COLOR": "1",
       "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


# ── the raw client floor ────────────────────────────────────────────────────────────────────

def _grading_payload(i: int) -> bytes:
    """A body of the size and shape of a real grading request (the server only logs it)."""
    return json.dumps({
        "model": "judge-bench",
        "messages": [{"role": "system", "content": "You are grading an answer. " * 20},
                     {"role": "user", "content": f"question {i}\nanswer-{i:04d}\nIs the answer clear?"}],
        "tools": [{"type": "function", "function": {"name": "grade", "parameters": {"type": "object"}}}],
        "tool_choice": {"type": "function", "function": {"name": "grade"}},
    }).encode()


async def _raw_floor(host: str, port: int, n: int, lanes: int) -> float:
    """n POSTs over `lanes` keep-alive connections with raw asyncio streams: wall seconds from
    the first request sent to the last response read (connections opened before the clock)."""
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Authorization: Bearer bench\r\nContent-Type: application/json\r\n")
    requests = [head.encode() + f"Content-Length: {len(b)}\r\n\r\n".encode() + b
                for b in map(_grading_payload, range(n))]
    conns = [await asyncio.open_connection(host, port) for _ in range(lanes)]
    queue = iter(requests)

    async def lane(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for request in queue:
            writer.write(request)
            headers = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in headers.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)

    started = time.perf_counter()
    await asyncio.gather(*(lane(r, w) for r, w in conns))
    wall = time.perf_counter() - started
    for _r, w in conns:
        w.close()
    return wall


def raw_floor(base_url: str, n: int, lanes: int) -> float:
    hostport = base_url.split("//", 1)[1].split("/", 1)[0]
    host, port = hostport.rsplit(":", 1)
    return asyncio.run(_raw_floor(host, int(port), n, lanes))


# ── helpers ─────────────────────────────────────────────────────────────────────────────────

def _med(values: list[float]) -> float:
    return statistics.median(values)


def _startup(repeat: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), TRIVIAL, 1)
        return _med([_run_fresh(root, ENV)[0] for _ in range(repeat)])


def _ok(flag: bool) -> str:
    return "met" if flag else "MISSED"


# ── judged workloads ────────────────────────────────────────────────────────────────────────

def judged(repeat: int, n: int, concurrency: int, latency: float = 0.05) -> dict[str, float]:
    from tests.support.loopback import JudgeServer, Reply

    rows = []
    with tempfile.TemporaryDirectory() as tmp, JudgeServer(latency_s=latency) as server:
        server.default = Reply.tool("Y", "clear")
        root = _project(Path(tmp), JUDGED, n, _judge_toml(server.base_url, concurrency))
        start = _startup(repeat)
        for _ in range(repeat):
            server.clear_log()
            floor = raw_floor(server.base_url, n, concurrency)
            server.clear_log()
            wall, rss, code, _ = _run_fresh(root, ENV)
            grading = server.grading_requests
            window = max(r.ended for r in grading) - min(r.started for r in grading)
            avg, _peak = _in_flight(grading)
            rows.append((floor, wall, window, avg, len(grading), code, rss, server.connections))
    floor, wall, window = (_med([r[i] for r in rows]) for i in range(3))
    avg = _med([r[3] for r in rows])
    win_ratio = _med([r[2] / r[0] for r in rows])
    run_ratio = _med([r[1] / (r[0] + start) for r in rows])
    print(f"judged {n} @ {latency * 1000:.0f} ms, concurrency {concurrency} (medians of {repeat}):")
    print(f"  raw floor ({concurrency} keep-alive connections)  {floor:6.3f} s")
    print(f"  start-up (run, 1 trivial eval)           {start:6.3f} s")
    print(f"  niceeval run                             {wall:6.3f} s = {run_ratio:.2f} × (floor + start-up), "
          f"{wall / floor:.2f} × floor")
    print(f"  judge window                             {window:6.3f} s = {win_ratio:.2f} × floor")
    print(f"  in flight on average                     {avg:6.1f}; grading requests "
          f"{sorted({r[4] for r in rows})}, connections {max(r[7] for r in rows)}, exit "
          f"{sorted({r[5] for r in rows})}, peak RSS {_med([r[6] for r in rows]):.1f} MiB")
    return {"floor": floor, "start": start, "wall": wall, "window": window, "avg": avg,
            "window_ratio": win_ratio, "run_ratio": run_ratio, "floor_ratio": wall / floor}


def w2(repeat: int) -> None:
    f = judged(repeat, 300, 32)
    print(f"  target: window ≤ 1.2 × floor {_ok(f['window_ratio'] <= 1.2)}; run ≤ 1.5 × (floor + start-up) "
          f"{_ok(f['run_ratio'] <= 1.5)}; ≥ 24 in flight {_ok(f['avg'] >= 24)}")


def c64(repeat: int) -> None:
    f = judged(repeat, 2000, 64)
    print(f"  target: run ≤ 2 × floor {_ok(f['floor_ratio'] <= 2)} "
          f"(window {f['window'] / f['floor']:.2f} × floor)")


# ── W1 and its floor ────────────────────────────────────────────────────────────────────────

DISCOVER = """
import sys, time
from pathlib import Path
started = time.perf_counter()
from niceeval_cli.discovery import discover
imported = time.perf_counter()
found = discover([Path('evals')], Path('.').resolve())
done = time.perf_counter()
assert len(found) == int(sys.argv[1]), len(found)
print(done - imported)
"""

SEAL = """
import sys, time
from pathlib import Path
from niceeval_cli._ids import new_id, utc_now_iso
from niceeval_cli._records import AssertionResult, AttemptRecord
from niceeval_cli._states import AssertionState, AttemptState, EvalKind, PlanReason, Relation, Role
from niceeval_cli.store import SlotRecord, Store

n = int(sys.argv[1])
store = Store.open(Path(sys.argv[2]))
run_id = new_id()
store.begin_run(run_id, started_at=utc_now_iso(), argv=["run"], version="bench", config_file=None,
                experiments=["default"])
started = time.perf_counter()
for i in range(n):
    now = utc_now_iso()
    attempt = AttemptRecord(
        id=new_id(), run_id=run_id, experiment_id="default", eval_id=f"evals/cases.py::case_{i:05d}",
        ordinal=0, kind=EvalKind.PASS, state=AttemptState.PASSED, reason=None, score=None,
        max_score=None, unavailable_weight=None, partial_score=None, gate=None, stop_cause=None,
        error=None, fingerprint="f" * 64, fingerprint_parts='{"model":null}', started_at=now,
        ended_at=now, duration_ms=0.2, input_tokens=None, output_tokens=None, judge_tokens=0)
    result = AssertionResult(
        id=new_id(), attempt_id=attempt.id, ordinal=0, key="includes", label=None, group_name=None,
        role=Role.GATE, weight=None, contribution=None, state=AssertionState.MATCHED, measurement=None,
        threshold=None, reason=None, explanation=None, match_name="includes",
        match_config='{"expected":"marker"}', evidence='{"actual":"marker hello"}',
        source_file="evals/cases.py", source_line=10, or_stop=False, match_kind="boolean")
    store.seal_attempt(attempt, [result], SlotRecord(run_id, "default", attempt.eval_id, 0, attempt.id,
                                                     Relation.ORIGIN, PlanReason.NEW))
print(time.perf_counter() - started)
store.close()
"""


def _timed_script(script: str, cwd: Path, *args: str) -> float:
    out = subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, env={**os.environ, **ENV},
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def w1(repeat: int, n: int = 1000) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp) / "w1", TRIVIAL, n)
        one = _project(Path(tmp) / "one", TRIVIAL, 1)
        for i in range(repeat):
            start = _run_fresh(one, ENV)[0]
            disc = _timed_script(DISCOVER, root, str(n))
            seal = _timed_script(SEAL, root, str(n), str(Path(tmp) / f"seal{i}.db"))
            wall, rss, code, _ = _run_fresh(root, ENV)
            rows.append((start, disc, seal, wall, rss, code))
    start, disc, seal, wall, rss = (_med([r[i] for r in rows]) for i in range(5))
    floor = start + disc + seal
    ratio = _med([r[3] / (r[0] + r[1] + r[2]) for r in rows])
    print(f"w1 {n} trivial evals (medians of {repeat}):")
    print(f"  floor = start-up {start:.3f} s + discovery {disc:.3f} s + sealing {n} attempts {seal:.3f} s "
          f"= {floor:.3f} s")
    print(f"  niceeval run  {wall:.3f} s = {ratio:.2f} × floor, peak RSS {rss:.1f} MiB, "
          f"exit {sorted({r[5] for r in rows})}")
    print(f"  target: ≤ 1.0 s {_ok(wall <= 1.0)}; ≤ 2 × floor {_ok(ratio <= 2)}")


# ── reuse at 20 000 ─────────────────────────────────────────────────────────────────────────

_MODULE_COST = """\
import sys
sys.path.insert(0, "evals")
import niceeval_cli.cli, niceeval_cli.app.run, niceeval_cli.runner, niceeval_cli.discovery  # the run path
def hwm():  # this process's own peak (ru_maxrss would carry the benchmark's size over the fork)
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1])
before = hwm()
import cases  # the user's module: its closures, names and definitions
print((hwm() - before) / 1024)
"""


def _module_cost(root: Path) -> float:
    """MiB the eval module itself takes once imported (what any runner of it must hold)."""
    done = subprocess.run([sys.executable, "-c", _MODULE_COST], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **ENV}, check=True)
    return float(done.stdout.strip())


def reuse(repeat: int, n: int = 20_000) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp) / "big", TRIVIAL, n)
        one = _project(Path(tmp) / "one", TRIVIAL, 1)
        for _ in range(repeat):
            fresh, fresh_rss, code1, _ = _run_fresh(root, ENV)
            again, again_rss, code2, _out = _rss_run(["run"], root, ENV)
            rows.append((fresh, fresh_rss, again, again_rss, code1, code2, _run_fresh(one, ENV)[1],
                         _module_cost(root)))
    fresh, fresh_rss, again, again_rss = (_med([r[i] for r in rows]) for i in range(4))
    one_rss, module = _med([r[6] for r in rows]), _med([r[7] for r in rows])
    ratio = _med([r[2] / r[0] for r in rows])
    print(f"reuse {n} trivial evals (medians of {repeat}):")
    print(f"  fresh run     {fresh:6.3f} s, peak RSS {fresh_rss:5.1f} MiB (exit {sorted({r[4] for r in rows})})")
    print(f"  all reused    {again:6.3f} s = {100 * ratio:.1f} % of fresh, peak RSS {again_rss:5.1f} MiB "
          f"(exit {sorted({r[5] for r in rows})})")
    print(f"  memory floor  {one_rss + module:5.1f} MiB = a one-eval run's peak {one_rss:.1f} + the eval module "
          f"itself {module:.1f}; the fresh run holds {fresh_rss - one_rss - module:+.1f} MiB more")
    memory = _med([r[1] / (r[6] + r[7]) for r in rows])
    print(f"  fresh / memory floor  {memory:.2f} ×; all reused / fresh  {100 * ratio:.1f} % of the time, "
          f"{again_rss / fresh_rss:.2f} × the memory")
    print(f"  target: fresh ≤ 1.2 × memory floor {_ok(memory <= 1.2)}; reuse ≤ 15 % {_ok(ratio <= 0.15)}; "
          f"reuse RSS ≤ fresh {_ok(again_rss <= fresh_rss)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", default=["w2", "c64", "w1", "reuse"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    # Bytecode as an installed package has it: with PYTHONDONTWRITEBYTECODE set (as on the
    # machine these figures come from) every run would otherwise compile the whole package.
    compileall.compile_dir(str(ROOT / "niceeval_cli"), quiet=1)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
    for name in args.workloads:
        {"w2": w2, "c64": c64, "w1": w1, "reuse": reuse}[name](args.repeat)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
