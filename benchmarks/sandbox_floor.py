"""Issue 28 item 3: N docker-sandboxed attempts at concurrency C against the daemon's own floor,
`docker run --rm` of the same image N times at concurrency C, in the same invocation.

    python benchmarks/sandbox_floor.py [--attempts 40] [--concurrency 8] [--image IMAGE] [--rounds 1] [--calls]

The attempts are `sandbox.py`'s (one eval: a command in the sandbox, a file written, two change
assertions; a template of 20 files) through the real CLI (`niceeval run --attempts N
--max-concurrency C`). The floor runs the same command in `docker run --rm` containers of the
same image (labelled with this process's id; nothing else), C at a time. The floor is measured
before and after each sandboxed run (the shared machine's load drifts) and the run is compared
with their mean. Printed per round: the walls, the time per attempt per slot, the ratio (target
≤ 1.3 ×), containers and baked images left; with `--rounds K`, the median ratio. `--calls`
puts a logging `docker` first on PATH (the CLI clients the run spawns, per subcommand) and points
DOCKER_HOST at a logging proxy of the daemon's socket (the requests the run and its clients make,
per method and path, with how long each connection lasted): both cost a little themselves.
Measurement only: needs a daemon and the image (`bash .ci/docker.sh`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sandbox import EVAL, ROOT, _docker_ok, _template

COMMAND = "echo changed >> /tmp/README.md && ls | wc -l"


async def _floor(attempts: int, concurrency: int, image: str, label: str) -> float:
    """Wall seconds of `attempts` × `docker run --rm`, `concurrency` at a time."""
    slots = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with slots:
            proc = await asyncio.create_subprocess_exec(
                "docker", "run", "--rm", "--label", label, image, "sh", "-c", COMMAND,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
            _, err = await proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"docker run exited {proc.returncode}: {err.decode()[-500:]}")

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(attempts)))
    return time.perf_counter() - started


def _run(attempts: int, concurrency: int, image: str, work: Path,
         calls: dict[str, str] | None) -> tuple[float, int, str]:
    project = work / "project"
    (project / "evals").mkdir(parents=True)
    _template(project / "repo")
    (project / "evals" / "bench.py").write_text(EVAL)
    (project / "niceeval.toml").write_text(
        f'[project]\nevals = ["evals"]\n\n[experiments.docker.sandbox]\nkind = "docker"\n'
        f'image = "{image}"\ntemplate = "repo"\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    if calls is not None:
        env.update(calls)
        env.pop("NICEEVAL_DOCKER", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "niceeval_cli.cli", "run", "--attempts", str(attempts),
                           "--max-concurrency", str(concurrency)],
                          cwd=project, capture_output=True, text=True, timeout=1800, env=env)
    return time.perf_counter() - started, done.returncode, done.stderr[-2000:]


def _logging_docker(folder: Path) -> tuple[Path, Path]:
    """A folder with a `docker` that appends `start end subcommand` per call to a log, then the real one's exit."""
    log = folder / "clients.log"
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    script = bin_dir / "docker"
    real = shutil.which("docker") or "docker"
    script.write_text(f'#!/bin/bash\ns=$(date +%s.%N)\n{real} "$@"\nrc=$?\n'
                      f'echo "$s $(date +%s.%N) $1" >> {log}\nexit $rc\n')
    script.chmod(0o755)
    return bin_dir, log


def _logged(log: Path) -> list[tuple[float, float, str]]:
    """The logging `docker`'s lines: (start, end, subcommand) each."""
    rows = []
    if log.exists():
        for line in log.read_text().splitlines():
            start, end, command = line.split(" ", 2)
            rows.append((float(start), float(end), command))
    return rows


def _calls(rows: list[tuple[float, float, str]], title: str) -> None:
    by: dict[str, list[float]] = {}
    for start, end, command in rows:
        by.setdefault(command, []).append(end - start)
    print(f"  {title} (count, summed s, median ms):")
    for command, times in sorted(by.items(), key=lambda item: -sum(item[1])):
        print(f"    {command:32} {len(times):4}  {sum(times):7.2f} s  {1000 * statistics.median(times):6.0f} ms")
    if not by:
        print("    none")


def _daemon_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "")
    return host[len("unix://"):] if host.startswith("unix://") else "/var/run/docker.sock"


def _left_by(project: Path) -> tuple[int, int]:
    """Containers and baked images the run in `project` left (never another process's on the same daemon)."""
    import sqlite3

    with sqlite3.connect(project / ".niceeval" / "results.db") as db:
        runs = [row[0] for row in db.execute("SELECT id FROM runs")]
    containers = images = 0
    for run in runs:
        containers += len(subprocess.run(["docker", "ps", "-aq", "--filter", f"label=niceeval.sandbox.run={run}"],
                                         capture_output=True, text=True, check=False).stdout.split())
        images += len(subprocess.run(["docker", "images", "-q", "--filter", f"label=niceeval.template.run={run}"],
                                     capture_output=True, text=True, check=False).stdout.split())
    return containers, images


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attempts", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--image", default="niceeval-test/busybox")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--calls", action="store_true", help="time every docker call of the sandboxed run")
    args = parser.parse_args()
    problem = _docker_ok(args.image)
    if problem:
        print(f"skipped: {problem}")
        return 0
    label = f"niceeval.bench.floor={os.getpid()}"
    n, c = args.attempts, args.concurrency
    ratios = []
    with tempfile.TemporaryDirectory(prefix="niceeval-bench-") as folder:
        floor_before = asyncio.run(_floor(n, c, args.image, label))
        for round_ in range(args.rounds):
            work = Path(folder) / f"round{round_}"
            work.mkdir()
            proxy = None
            if args.calls:
                from tests.support.docker_proxy import DaemonProxy  # a logging proxy of the daemon's socket

                proxy = DaemonProxy(work, _daemon_socket())
            calls = None
            if proxy is not None:
                bin_dir, clients = _logging_docker(work)
                calls = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '')}", "DOCKER_HOST": f"unix://{proxy.path}"}
            wall, code, err = _run(n, c, args.image, work, calls)
            if proxy is not None:
                proxy.close()
            floor_after = asyncio.run(_floor(n, c, args.image, label))
            floor = (floor_before + floor_after) / 2
            ours = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={label}"],
                                  capture_output=True, text=True, check=False).stdout.split()
            print(f"{n} attempts at concurrency {c}, image {args.image}; load average {os.getloadavg()[0]:.2f}")
            print(f"floor: docker run --rm × {n}       {floor:7.2f} s  ({1000 * floor / n * c:.0f} ms per run per "
                  f"slot; {floor_before:.2f} s before, {floor_after:.2f} s after)")
            print(f"niceeval run, docker sandbox   {wall:7.2f} s  ({1000 * wall / n * c:.0f} ms per attempt per slot); "
                  f"exit {code}")
            containers, images = _left_by(work / "project")
            print(f"ratio {wall / floor:.2f} × (target ≤ 1.3 ×): {'met' if wall <= 1.3 * floor else 'MISSED'}; "
                  f"left by the run: containers {containers}, baked images {images}; by the floor {len(ours)}")
            if proxy is not None:
                _calls(_logged(clients), "docker CLI clients the run spawned")
                _calls([(start, end, line) for start, end, seen in proxy.connections for line in seen or ["(none)"]],
                       "requests to the daemon, per connection")
            if code != 0:
                print(err, file=sys.stderr)
                return 1
            ratios.append(wall / floor)
            floor_before = floor_after
    if args.rounds > 1:
        print(f"median ratio over {args.rounds} rounds: {statistics.median(ratios):.2f} ×")
    return 0 if statistics.median(ratios) <= 1.3 else 2


if __name__ == "__main__":
    sys.exit(main())
