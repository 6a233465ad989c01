"""`niceeval regrade` of 1 000 attempts against a 50 ms loopback judge at concurrency 32 (issue 26,
item 9; judge-trust.md, "Cost").

    python benchmarks/regrade.py [--attempts 1000] [--concurrency 32] [--latency 0.05] [--repeat 3]

A project of N judged evals (one gated `closed_qa` each) is run once; then `niceeval regrade
--judge-model judge-regrade` grades its N judge assertions again. In the same invocation, around
each regrade, the raw-client floor is measured as benchmarks/floors.py does for the judge: the
same N requests from raw asyncio streams over `concurrency` keep-alive connections to the same
server. Reported: the regrade's judge window (first grading request in → last out, at the
server) against the floor — target ≤ 1.2 × — and the whole command against floor + start-up
(start-up: `niceeval run` of one trivial eval). Medians of --repeat.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from floors import ENV, _startup, raw_floor
from workloads import JUDGED, _in_flight, _judge_toml, _project, _rss_run, _run_fresh

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from tests.support.loopback import JudgeServer, Reply

    n, lanes = args.attempts, args.concurrency
    rows = []
    with tempfile.TemporaryDirectory() as tmp, JudgeServer(latency_s=args.latency) as server:
        server.default = Reply.tool("Y", "clear")
        root = _project(Path(tmp), JUDGED, n, _judge_toml(server.base_url, lanes))
        wall, _rss, code, out = _run_fresh(root, ENV)
        if code != 0:
            raise SystemExit(f"the run to regrade exited {code}: {out[-2000:]}")
        start = _startup(args.repeat)
        for _ in range(args.repeat):
            server.clear_log()
            floor = raw_floor(server.base_url, n, lanes)
            server.clear_log()
            wall, rss, code, out = _rss_run(["regrade", "--judge-model", "judge-regrade"], root, ENV)
            if code != 0:
                raise SystemExit(f"niceeval regrade exited {code}: {out[-2000:]}")
            grading = server.grading_requests
            window = max(r.ended for r in grading) - min(r.started for r in grading)
            avg, _peak = _in_flight(grading)
            rows.append((floor, wall, window, avg, len(grading), rss))
    med = statistics.median
    floor, wall, window = (med([r[i] for r in rows]) for i in range(3))
    window_ratio = med([r[2] / r[0] for r in rows])
    run_ratio = med([r[1] / (r[0] + start) for r in rows])
    print(f"regrade of {n} attempts @ {args.latency * 1000:.0f} ms, concurrency {lanes} (medians of {args.repeat}):")
    print(f"  raw floor ({lanes} keep-alive connections)  {floor:6.3f} s")
    print(f"  start-up (run, 1 trivial eval)           {start:6.3f} s")
    print(f"  niceeval regrade                         {wall:6.3f} s = {run_ratio:.2f} × (floor + start-up), "
          f"{wall / floor:.2f} × floor")
    print(f"  judge window                             {window:6.3f} s = {window_ratio:.2f} × floor "
          f"(target ≤ 1.2: {'met' if window_ratio <= 1.2 else 'MISSED'})")
    print(f"  in flight on average                     {med([r[3] for r in rows]):6.1f}; grading requests "
          f"{sorted({r[4] for r in rows})}, peak RSS {med([r[5] for r in rows]):.1f} MiB")


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    main()
