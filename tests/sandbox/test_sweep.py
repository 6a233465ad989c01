"""`sweep_run`: after a run, the sandboxes its dead workers left (not kept) are removed with the
processes NiceEval started in them; kept ones and other runs' stay (docs/scale.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from niceeval_cli.sandbox import sweep_run
from tests.support.docker import processes_running, unique_seconds

MAKER = """
import asyncio, sys
from niceeval_cli.sandbox import kind_for, local_sandbox

async def main():
    spec = local_sandbox().resolved()
    box = await kind_for(spec).create(spec, label="sweep", about={"run": sys.argv[1], "attempt": "a"})
    # a daemon that leaves its group and the workspace; the command returns once it has left
    await box.run("setsid sh -c 'echo $$ > daemon.pid; cd / && exec sleep " + sys.argv[2] + "' "
                  ">/dev/null 2>&1 < /dev/null & while [ ! -s daemon.pid ]; do sleep 0.05; done")
    print(box.root, flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


def _made_by_a_process_that_dies(run_id: str, tmp: Path, seconds: str) -> Path:
    env = {**os.environ, "TMPDIR": str(tmp)}
    maker = subprocess.Popen([sys.executable, "-c", MAKER, run_id, seconds], stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        root = Path(maker.stdout.readline().strip())  # type: ignore[union-attr]
    finally:
        os.kill(maker.pid, signal.SIGKILL)  # no teardown, no last-line cleanup: a lost Ray worker
        maker.communicate()
    return root


def test_a_dead_makers_sandbox_of_the_run_is_removed_with_its_escaped_process(own_tempdir: Path):
    seconds = unique_seconds()
    root = _made_by_a_process_that_dies("run-1", own_tempdir, seconds)
    other = _made_by_a_process_that_dies("run-2", own_tempdir, seconds)
    try:
        assert root.is_dir() and len(processes_running("sleep", seconds)) == 2
        removed = sweep_run("run-1", own_tempdir, docker_too=False)
        assert [item.location for item in removed] == [str(root / "workspace")]
        assert not root.exists() and other.is_dir()  # another run's sandbox is not this run's to sweep
        _gone_soon(seconds, 1)
    finally:
        sweep_run("run-2", own_tempdir, docker_too=False)
    assert not other.exists()
    _gone_soon(seconds, 0)


def _gone_soon(seconds: str, left: int) -> None:
    """SIGKILLed processes are reaped by init a moment later."""
    deadline = time.monotonic() + 10
    while len(processes_running("sleep", seconds)) > left and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(processes_running("sleep", seconds)) == left
