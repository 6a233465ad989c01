"""Issue 28 item 3: N docker-sandboxed attempts at concurrency C against the daemon's own floor,
`docker run --rm` of the same image N times at concurrency C, in the same invocation.

    python benchmarks/sandbox_floor.py [--attempts 40] [--concurrency 8] [--image IMAGE]

The attempts are `sandbox.py`'s (one eval: a command in the sandbox, a file written, two change
assertions; a template of 20 files) through the real CLI (`niceeval run --attempts N
--max-concurrency C`). The floor runs the same command in `docker run --rm` containers of the
same image (labelled with this process's id; nothing else), C at a time. Printed: both walls,
the time per attempt per slot, the ratio (target ≤ 1.3 ×), and containers left by either.
Measurement only: needs a daemon and the image (`bash .ci/docker.sh`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sandbox import EVAL, ROOT, _docker_ok, _left, _template

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


def _run(attempts: int, concurrency: int, image: str, work: Path) -> tuple[float, int, str]:
    project = work / "project"
    (project / "evals").mkdir(parents=True)
    _template(project / "repo")
    (project / "evals" / "bench.py").write_text(EVAL)
    (project / "niceeval.toml").write_text(
        f'[project]\nevals = ["evals"]\n\n[experiments.docker.sandbox]\nkind = "docker"\n'
        f'image = "{image}"\ntemplate = "repo"\n')
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "niceeval_cli.cli", "run", "--attempts", str(attempts),
                           "--max-concurrency", str(concurrency)],
                          cwd=project, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
    return time.perf_counter() - started, done.returncode, done.stderr[-2000:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attempts", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--image", default="niceeval-test/busybox")
    args = parser.parse_args()
    problem = _docker_ok(args.image)
    if problem:
        print(f"skipped: {problem}")
        return 0
    label = f"niceeval.bench.floor={os.getpid()}"
    before = _left()
    with tempfile.TemporaryDirectory(prefix="niceeval-bench-") as folder:
        floor = asyncio.run(_floor(args.attempts, args.concurrency, args.image, label))
        wall, code, err = _run(args.attempts, args.concurrency, args.image, Path(folder))
    ours = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={label}"],
                          capture_output=True, text=True, check=False).stdout.split()
    n, c = args.attempts, args.concurrency
    print(f"{n} attempts at concurrency {c}, image {args.image}; load average {os.getloadavg()[0]:.2f}")
    print(f"floor: docker run --rm × {n}       {floor:7.2f} s  ({1000 * floor / n * c:.0f} ms per run per slot)")
    print(f"niceeval run, docker sandbox   {wall:7.2f} s  ({1000 * wall / n * c:.0f} ms per attempt per slot); "
          f"exit {code}")
    print(f"ratio {wall / floor:.2f} × (target ≤ 1.3 ×): {'met' if wall <= 1.3 * floor else 'MISSED'}; "
          f"containers left: sandboxes {_left() - before}, floor {len(ours)}")
    if code != 0:
        print(err, file=sys.stderr)
    return 0 if wall <= 1.3 * floor else 2


if __name__ == "__main__":
    sys.exit(main())
