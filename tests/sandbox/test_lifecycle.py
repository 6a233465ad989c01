"""One attempt's sandbox (sandbox.md, "Lifecycle and keeping"): prepare, baseline, teardown, keep,
and nothing left behind — including processes that daemonise and a cancelled creation."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from niceeval_cli.sandbox import (
    AttemptSandbox,
    PrepareFailed,
    SandboxSpec,
    changes,
    docker_sandbox,
    kind_for,
    list_sandboxes,
    local_sandbox,
    prune_sandboxes,
    should_keep,
)
from niceeval_cli.sandbox._local import PREFIX
from tests.support.docker import docker_seeing_only, niceeval_containers


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.slow)])  # a container takes seconds
def kind_name(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_image")
    return str(request.param)


def _spec(kind_name: str, template: Path, **fields) -> SandboxSpec:
    if kind_name == "local":
        return local_sandbox(template=str(template), **fields).resolved()
    return docker_sandbox(image="niceeval-test/busybox", template=str(template), **fields).resolved()


def _label() -> str:
    return f"t{os.getpid()}-{time.time_ns()}"


def _ours_left(tmp: Path) -> list[str]:
    return [p.name for p in tmp.glob(PREFIX + "*")]


async def test_prepare_runs_in_order_and_its_changes_are_part_of_the_baseline(kind_name, template):
    spec = _spec(kind_name, template, prepare=["echo one > built.txt", ["sh", "-c", "echo two >> built.txt"]])
    sandbox = await AttemptSandbox.open(spec, kind_for(spec), label=_label())
    try:
        await sandbox.prepare()
        assert await sandbox.workspace.read_bytes("built.txt") == b"one\ntwo\n"
        assert changes(sandbox.baseline, sandbox.workspace.snapshot()) == []
    finally:
        await sandbox.close(keep=False)


async def test_a_failing_prepare_names_the_command_and_carries_the_output_tail(kind_name, template):
    spec = _spec(kind_name, template, prepare=["true", "echo installing; echo 'E: no such package' >&2; exit 7"])
    sandbox = await AttemptSandbox.open(spec, kind_for(spec), label=_label())
    try:
        with pytest.raises(PrepareFailed) as caught:
            await sandbox.prepare()
    finally:
        await sandbox.close(keep=False)
    message = str(caught.value)
    assert caught.value.reason == "sandbox-prepare-failed"
    assert "prepare[1]" in message and "exited with code 7" in message
    assert "installing" in message and "E: no such package" in message


async def test_teardown_removes_the_workspace(kind_name, template):
    spec = _spec(kind_name, template)
    sandbox = await AttemptSandbox.open(spec, kind_for(spec), label=_label())
    workdir = sandbox.workspace.workdir
    assert await sandbox.close(keep=False) is None
    if kind_name == "local":
        assert not Path(workdir).parent.exists()
    else:
        assert sandbox.workspace.container not in subprocess.run(  # type: ignore[attr-defined]
            ["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True).stdout.split()


async def test_a_kept_sandbox_is_listed_and_pruned(kind_name, template, tmp_path, monkeypatch):
    spec = _spec(kind_name, template)
    run = f"r-{_label()}"
    # list and prune see only this test's containers: a parallel test's kept ones stay
    monkeypatch.setenv("NICEEVAL_DOCKER", docker_seeing_only(run, tmp_path))
    sandbox = await AttemptSandbox.open(spec, kind_for(spec), label=_label(),
                                        about={"run": run, "attempt": "3", "eval": "demo/e"})
    await sandbox.workspace.write_bytes("left.txt", b"for later\n")
    where = await sandbox.close(keep=True)
    assert where is not None
    record = json.loads(sandbox.record())
    assert record["kind"] == kind_name and record["kept"] == where
    listed = [s for s in list_sandboxes() if s.location == where]
    assert len(listed) == 1 and listed[0].status == "kept"
    assert listed[0].about["run"] == run and listed[0].about["eval"] == "demo/e"
    if kind_name == "local":
        assert (Path(where) / "left.txt").read_text() == "for later\n"
    removed = [s.location for s in prune_sandboxes().removed]
    assert where in removed
    assert not [s for s in list_sandboxes() if s.location == where]


async def test_a_sandbox_in_use_is_listed_but_never_pruned(template):
    spec = _spec("local", template)
    sandbox = await AttemptSandbox.open(spec, kind_for(spec), label=_label())
    try:
        listed = [s for s in list_sandboxes(docker_too=False) if s.location == sandbox.workspace.workdir]
        assert [s.status for s in listed] == ["in-use"]
        prune_sandboxes(docker_too=False)
        assert Path(sandbox.workspace.workdir).is_dir()
    finally:
        await sandbox.close(keep=False)


async def test_local_teardown_kills_a_process_that_left_the_process_group(template):
    spec = _spec("local", template)
    sandbox = await AttemptSandbox.open(spec, kind_for(spec), label=_label())
    # setsid: a new session, out of the group `run` killed; it keeps running inside the workspace
    await sandbox.workspace.run(f"{sys.executable} -c 'import os, time; os.setsid(); "
                                "open(\"pid\", \"w\").write(str(os.getpid())); time.sleep(60)' >/dev/null 2>&1 &"
                                " sleep 0.5")
    pid = int(await sandbox.workspace.read_bytes("pid"))
    os.kill(pid, 0)  # alive
    await sandbox.close(keep=False)
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        for _ in range(20):
            os.kill(pid, 0)
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                raise ProcessLookupError  # a zombie waiting for its reaper is dead
            time.sleep(0.1)


def test_keep_failed_keeps_failed_and_errored_attempts_only():
    assert [should_keep("failed", s) for s in ("passed", "failed", "errored", "scored", None)] == [
        False, True, True, False, True]
    assert all(should_keep("all", s) for s in ("passed", "failed", None))
    assert not any(should_keep(None, s) for s in ("failed", "errored"))


def test_a_process_that_exits_without_teardown_leaves_nothing(tmp_path, template, docker_image):
    """The last line: whatever is still registered is removed at interpreter exit."""
    script = textwrap.dedent(f"""
        import asyncio, sys
        from niceeval_cli.sandbox import AttemptSandbox, docker_sandbox, local_sandbox, kind_for
        async def main():
            for spec in (local_sandbox(template={str(template)!r}).resolved(),
                         docker_sandbox(image={docker_image!r}, template={str(template)!r}).resolved()):
                box = await AttemptSandbox.open(spec, kind_for(spec), label="exit-{os.getpid()}-" + spec.kind)
                print(box.workspace.workdir, flush=True)
        asyncio.run(main())
    """)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _ours_left(tmp_path) == []
    assert niceeval_containers(name=f"niceeval-exit-{os.getpid()}-") == []


#: How long creating a docker sandbox took here, twice (measured once for the three fractions).
_CREATION_TIMES: list[float] = []


@pytest.mark.slow
@pytest.mark.parametrize("fraction", [0.02, 0.2, 0.5])
async def test_a_cancelled_docker_creation_leaves_no_container(template, docker_image, fraction):
    # Cancelled at a fraction of how long a creation takes on this machine (the quicker of two,
    # measured by the first of these tests in this process): a fixed delay falls after the
    # creation on a fast machine.
    spec = _spec("docker", template)
    loop = asyncio.get_running_loop()
    times = _CREATION_TIMES
    while len(times) < 2:
        started = loop.time()
        whole = await AttemptSandbox.open(spec, kind_for(spec), label=_label())
        times.append(loop.time() - started)
        await whole.close(keep=False)
    label = _label()
    task = asyncio.ensure_future(AttemptSandbox.open(spec, kind_for(spec), label=label))
    await asyncio.sleep(min(times) * fraction)
    task.cancel()
    try:
        opened = await task
    except asyncio.CancelledError:
        pass
    else:  # finished before the cancel reached it (a rare quick one): closing must leave nothing too
        await opened.close(keep=False)
    await asyncio.sleep(1.5)  # a container the daemon was still creating would show up by now
    names = subprocess.run(["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True).stdout
    assert f"niceeval-{label}" not in names.split()
