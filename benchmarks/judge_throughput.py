"""Judge throughput: K judge assertions through `niceeval run` against a loopback judge with a
fixed latency, compared with the ideal K × latency / max_concurrency.

    python benchmarks/judge_throughput.py [--assertions 1000] [--latency-ms 50]
        [--judge-concurrency 32] [--concurrency 32] [--per-eval 1] [--profile]

The generated project has K / per-eval pass-style evals (default: 1000 evals, each with one
gated `closed_qa(...).at_least(1)`), `[project] max_concurrency` and `[judge] max_concurrency`
as given, and runs through the real CLI in a subprocess (`python -m niceeval_cli.cli run`).
The server (tests/support/loopback.py, imported by path) answers every request after the latency.

Printed: wall time of the CLI process and of the run (runs.started_at → ended_at, i.e. after
discovery, planning and the preflight), the grading span (first grading request in → last out),
each as a ratio of the ideal; CPU time of the CLI (in total, and during the grading span from
/proc samples, per judge assertion — the ideal leaves latency / max_concurrency of CPU per
assertion to a single-threaded runner) and of the server; achieved average in-flight
concurrency (Σ request durations / grading span) and the server's maximum, connections opened
and requests (grading + preflight). Target: the run ≤ 1.25 × ideal and connections ≤ judge
max_concurrency. `--profile` runs the CLI under pyinstrument, prints
its call tree and the wall time of the CLI process split into buckets (HTTP client stack,
redaction, sealing, start-up, ...), each sample charged to the innermost matching frame.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
KEY_ENV = "NICEEVAL_BENCH_JUDGE_KEY"
EVALS_PER_MODULE = 100


def _load_server_module() -> ModuleType:
    path = REPO / "tests" / "support" / "loopback.py"
    spec = importlib.util.spec_from_file_location("_bench_judge_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _eval_source(first: int, count: int, per_eval: int) -> str:
    lines = [
        "from niceeval_cli import define_eval",
        "from niceeval_cli.expect import closed_qa",
        "",
        'QA = {"input": "What is the capital of France?", "output": "Paris."}',
    ]
    for i in range(first, first + count):
        lines += ["", "", "@define_eval(judge=True)", f"def e{i:05d}(t):"]
        lines += [f'    t.check(QA, closed_qa("criterion {j} of eval {i}").at_least(1)).gate()'
                  for j in range(per_eval)]
    return "\n".join(lines) + "\n"


def _write_project(root: Path, base_url: str, evals: int, per_eval: int, concurrency: int,
                   judge_concurrency: int) -> None:
    (root / "evals").mkdir(parents=True)
    for first in range(0, evals, EVALS_PER_MODULE):
        count = min(EVALS_PER_MODULE, evals - first)
        (root / "evals" / f"m{first // EVALS_PER_MODULE:03d}.py").write_text(
            _eval_source(first, count, per_eval), encoding="utf-8")
    (root / "niceeval.toml").write_text(
        f"[project]\nmax_concurrency = {concurrency}\n\n"
        f'[judge]\nmodel = "bench-judge"\nbase_url = "{base_url}"\napi_key_env = "{KEY_ENV}"\n'
        f"max_concurrency = {judge_concurrency}\n",
        encoding="utf-8",
    )


def _path_has(*parts: str) -> Callable[[Any], bool]:
    return lambda frame: any(part in (frame.file_path or "") for part in parts)


#: Profile buckets; a sample goes to the innermost frame on its stack that matches a rule.
PROFILE_BUCKETS: list[tuple[str, Callable[[Any], bool]]] = [
    ("idle (epoll wait, no CPU work)", lambda f: f.function == "epoll.poll"),
    ("store: seal_attempt (SQLite)", lambda f: f.function == "seal_attempt"),
    ("judge: safe_json / redact (evidence, audit)", _path_has("niceeval_cli/_redact")),
    ("judge: prompt rendering", _path_has("niceeval_cli/judge/_prompts")),
    ("judge: response parsing", _path_has("niceeval_cli/judge/_parse")),
    ("http client: httpx / httpcore / h11 / anyio", _path_has("/httpx/", "/httpcore/", "/h11/", "/anyio/")),
    ("judge: lanes, call, grade glue", _path_has("niceeval_cli/judge/")),
    ("runner: execute_attempt + result records", _path_has("niceeval_cli/runner/_attempt")),
    ("reports: progress / summary", _path_has("niceeval_cli/reports/")),
    ("start-up: imports, config, discovery, plan",
     lambda f: f.function in ("<module>", "discover", "load_config", "plan")),
    ("runner: dispatch", _path_has("niceeval_cli/runner/")),
    ("asyncio event loop", _path_has("/asyncio/")),
]


def _profile_report(session_file: Path) -> str:
    from pyinstrument.renderers import ConsoleRenderer
    from pyinstrument.session import Session

    session = Session.load(str(session_file))
    root = session.root_frame()
    assert root is not None
    buckets: Counter[str] = Counter()
    stack: list[Any] = []

    def walk(frame: Any) -> None:
        stack.append(frame)
        own = frame.time - sum(child.time for child in frame.children)
        if own > 0:
            label = next((name for f in reversed(stack) for name, rule in PROFILE_BUCKETS if rule(f)), "other")
            buckets[label] += own
        for child in frame.children:
            walk(child)
        stack.pop()

    walk(root)
    lines = [ConsoleRenderer(unicode=True, color=False).render(session),
             f"Where the CLI's {session.duration:.3f} s went (CPU time {session.cpu_time:.3f} s):"]
    lines += [f"  {seconds:7.3f} s  {100 * seconds / root.time:5.1f} %  {name}"
              for name, seconds in buckets.most_common()]
    return "\n".join(lines)


def _run_sampling_cpu(command: list[str], cwd: Path, env: dict[str, str],
                      ) -> tuple[subprocess.CompletedProcess[str], list[tuple[float, float]]]:
    """Run `command`, sampling its CPU seconds every 5 ms from /proc (Linux; else no samples)."""
    samples: list[tuple[float, float]] = []
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        stat = Path(f"/proc/{child.pid}/stat")
        while child.poll() is None:
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                samples.append((time.monotonic(), (int(fields[11]) + int(fields[12])) / tick))
            except (OSError, IndexError, ValueError):
                pass
            time.sleep(0.005)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, child.returncode, out.read(), err.read()), samples


def _cpu_between(samples: list[tuple[float, float]], start: float, end: float) -> float | None:
    """CPU seconds the sampled process used between two monotonic instants."""
    inside = [cpu for t, cpu in samples if start <= t <= end]
    return inside[-1] - inside[0] if len(inside) >= 2 else None


def _cpu_s(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _run_span_s(root: Path, env: dict[str, str]) -> tuple[float, int]:
    """The stored run's own duration (started_at → ended_at) and its exit code."""
    out = subprocess.run(
        [sys.executable, "-m", "niceeval_cli.cli", "query", "--sql",
         "SELECT started_at, ended_at, exit_code FROM runs", "--format", "json"],
        cwd=root, env=env, capture_output=True, text=True, check=True,
    )
    (row,) = json.loads(out.stdout)

    def parse(text: str) -> datetime.datetime:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))

    return (parse(row["ended_at"]) - parse(row["started_at"])).total_seconds(), int(row["exit_code"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assertions", type=int, default=1000, help="K judge assertions in total")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--judge-concurrency", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32, help="[project] max_concurrency")
    parser.add_argument("--per-eval", type=int, default=1, help="judge assertions per eval")
    parser.add_argument("--profile", action="store_true", help="run the CLI under pyinstrument")
    args = parser.parse_args()
    if args.assertions % args.per_eval:
        parser.error("--assertions must be a multiple of --per-eval")
    evals = args.assertions // args.per_eval
    latency = args.latency_ms / 1000

    server_module = _load_server_module()
    with server_module.JudgeServer(latency_s=latency) as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        _write_project(root, server.base_url, evals, args.per_eval, args.concurrency, args.judge_concurrency)
        env = {**os.environ, KEY_ENV: "bench-key", "NO_COLOR": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        command = [sys.executable, "-m", "niceeval_cli.cli", "run"]
        session_file = Path(tmp) / "cli.pyisession"
        if args.profile:
            command = [sys.executable, "-m", "pyinstrument", "-r", "pyisession", "-o", str(session_file),
                       "-m", "niceeval_cli.cli", "run"]
        load_before = os.getloadavg()[0]
        server_cpu_before = _cpu_s(resource.RUSAGE_SELF)
        started = time.perf_counter()
        proc, cpu_samples = _run_sampling_cpu(command, root, env)
        wall = time.perf_counter() - started
        server_cpu = _cpu_s(resource.RUSAGE_SELF) - server_cpu_before  # the server threads, mostly
        cli_cpu = _cpu_s(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0,):
            print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
            print(f"niceeval run exited {proc.returncode}; expected 0")
            return 1
        run_s, _ = _run_span_s(root, env)
        grading = server.grading_requests
        probes = len(server.requests) - len(grading)
        span = max(r.ended for r in grading) - min(r.started for r in grading)
        busy = sum(r.ended - r.started for r in grading)
        ideal = args.assertions * latency / args.judge_concurrency
        if args.profile:
            print(_profile_report(session_file))

        print(f"K={args.assertions} judge assertions ({evals} pass-style evals × {args.per_eval} gated "
              f"closed_qa), latency {args.latency_ms:g} ms, judge max_concurrency {args.judge_concurrency}, "
              f"project max_concurrency {args.concurrency}")
        print(f"ideal K × latency / max_concurrency     {ideal:8.3f} s")
        print(f"CLI process wall time                   {wall:8.3f} s   {wall / ideal:5.2f} × ideal")
        print(f"run (runs.started_at → ended_at)        {run_s:8.3f} s   {run_s / ideal:5.2f} × ideal")
        print(f"grading span (first in → last out)      {span:8.3f} s   {span / ideal:5.2f} × ideal")
        print(f"CPU time: CLI process {cli_cpu:.3f} s ({100 * cli_cpu / wall:.0f} % of its wall time), "
              f"loopback server {server_cpu:.3f} s; {os.cpu_count()} CPUs, load average before "
              f"{load_before:.2f}")
        span_cpu = _cpu_between(cpu_samples, min(r.started for r in grading), max(r.ended for r in grading))
        if span_cpu is not None:
            print(f"CLI CPU during the grading span          {span_cpu:6.3f} s = {100 * span_cpu / span:.0f} % of one "
                  f"core ({1000 * span_cpu / args.assertions:.2f} ms per judge assertion; the ideal leaves "
                  f"{1000 * ideal / args.assertions:.2f} ms)")
        print(f"mean grading request time at the server  {1000 * busy / len(grading):6.1f} ms "
              f"(scripted latency {args.latency_ms:g} ms)")
        print(f"average in-flight (Σ durations / span)  {busy / span:8.2f}")
        print(f"max in-flight (server)                  {server.max_in_flight:8d}")
        print(f"connections opened                      {server.connections:8d}")
        print(f"requests                                {len(grading) + probes:8d}   "
              f"({len(grading)} grading + {probes} preflight)")
        met = run_s <= 1.25 * ideal and server.connections <= args.judge_concurrency
        print(f"target (run ≤ 1.25 × ideal, connections ≤ {args.judge_concurrency}): "
              f"{'met' if met else 'MISSED'}")
        return 0 if met else 2


if __name__ == "__main__":
    sys.exit(main())
