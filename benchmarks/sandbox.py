"""Sandbox cost: create + teardown per attempt for the local and docker kinds, and a run of
40 docker-sandboxed attempts at concurrency 8 through the real CLI.

    python benchmarks/sandbox.py [--samples 20] [--attempts 40] [--concurrency 8] [--image IMAGE]

Part 1 drives the sandbox lifecycle directly (`AttemptSandbox.open` → `prepare` (none) →
baseline snapshot → `close`), one at a time, with a 20-file template: the median and p90 of
create (with the template copy and the baseline) and of teardown, per kind.

Part 2 writes a project whose one eval runs a command in its sandbox, writes a file and checks
two change assertions, with `[experiments.docker.sandbox]` on the given image, and runs it with
`niceeval run --attempts N --max-concurrency C`: wall time, attempts per second, and that no
container is left afterwards (`docker ps -a --filter label=niceeval.sandbox`).

The docker parts need a daemon and the image (`bash .ci/docker.sh` builds niceeval-test/busybox).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from niceeval_cli.sandbox import AttemptSandbox, SandboxSpec, docker_sandbox, kind_for, local_sandbox  # noqa: E402

EVAL = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import equals, pattern


@define_eval()
async def edit(t):
    done = await t.sandbox.run("echo changed >> README.md && ls | wc -l")
    t.check(done.exit_code, equals(0)).gate().label("command ran")
    await t.sandbox.write_text("notes.txt", "hello\\n")
    t.sandbox.file_changed("README.md", status="modified").gate()
    t.sandbox.not_in_diff(pattern("api_key=")).gate()
'''


def _template(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# bench\n")
    for i in range(19):
        (folder / f"file_{i:02}.py").write_text(f"VALUE = {i}\n" * 20)
    return folder


def _docker_ok(image: str) -> str | None:
    try:
        done = subprocess.run(["docker", "image", "inspect", image], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"docker unavailable ({error})"
    return None if done.returncode == 0 else f"image {image} missing or no daemon (run `bash .ci/docker.sh`)"


def _left() -> int:
    done = subprocess.run(["docker", "ps", "-aq", "--filter", "label=niceeval.sandbox"],
                          capture_output=True, text=True, timeout=30, check=False)
    return len(done.stdout.split())


async def _lifecycle(spec: SandboxSpec, samples: int) -> tuple[list[float], list[float]]:
    kind = kind_for(spec)
    creates, teardowns = [], []
    for i in range(samples):
        started = time.perf_counter()
        sandbox = await AttemptSandbox.open(spec, kind, label=f"bench-{os.getpid()}-{i}")
        await sandbox.prepare()
        created = time.perf_counter()
        await sandbox.close(keep=False)
        creates.append((created - started) * 1000)
        teardowns.append((time.perf_counter() - created) * 1000)
    return creates, teardowns


def _p90(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.9 * len(values)) - 1)]


def _line(name: str, creates: list[float], teardowns: list[float]) -> str:
    total = [c + t for c, t in zip(creates, teardowns, strict=True)]
    return (f"{name:<7} create {statistics.median(creates):7.1f} ms (p90 {_p90(creates):7.1f})   "
            f"teardown {statistics.median(teardowns):7.1f} ms (p90 {_p90(teardowns):7.1f})   "
            f"per attempt {statistics.median(total):7.1f} ms")


def part_lifecycle(samples: int, image: str, work: Path) -> None:
    template = _template(work / "template")
    print(f"sandbox create + teardown, {samples} samples each, template of 20 files:")
    creates, teardowns = asyncio.run(_lifecycle(local_sandbox(template=str(template)).resolved(), samples))
    print("  " + _line("local", creates, teardowns))
    problem = _docker_ok(image)
    if problem:
        print(f"  docker  skipped: {problem}")
        return
    spec = docker_sandbox(image=image, template=str(template)).resolved()
    creates, teardowns = asyncio.run(_lifecycle(spec, samples))
    print("  " + _line("docker", creates, teardowns))


def part_run(attempts: int, concurrency: int, image: str, work: Path) -> None:
    problem = _docker_ok(image)
    if problem:
        print(f"run of {attempts} docker attempts skipped: {problem}")
        return
    project = work / "project"
    (project / "evals").mkdir(parents=True)
    _template(project / "repo")
    (project / "evals" / "bench.py").write_text(EVAL)
    (project / "niceeval.toml").write_text(
        f'[project]\nevals = ["evals"]\n\n[experiments.docker.sandbox]\nkind = "docker"\n'
        f'image = "{image}"\ntemplate = "repo"\n')
    before = _left()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "niceeval_cli.cli", "run", "--attempts", str(attempts),
                           "--max-concurrency", str(concurrency), "--json"],
                          cwd=project, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - started
    states: dict[str, int] = {}
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "attempt.sealed":
            state = str(event.get("attempt", {}).get("state", "?"))
            states[state] = states.get(state, 0) + 1
    print(f"run: {attempts} docker-sandboxed attempts at concurrency {concurrency}: {wall:.2f} s wall, "
          f"{attempts / wall:.1f} attempts/s, {wall / attempts * concurrency * 1000:.0f} ms per attempt per slot; "
          f"exit {done.returncode}; states {states or '(see stderr)'}; containers left: {_left() - before}")
    if done.returncode not in (0,):
        print(done.stderr[-2000:], file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--attempts", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--image", default="niceeval-test/busybox")
    parser.add_argument("--skip-run", action="store_true", help="only the lifecycle figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="niceeval-bench-") as folder:
        work = Path(folder)
        part_lifecycle(args.samples, args.image, work)
        if not args.skip_run:
            part_run(args.attempts, args.concurrency, args.image, work)


if __name__ == "__main__":
    main()
