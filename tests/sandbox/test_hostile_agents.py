"""What an agent does on purpose inside its workspace must not make NiceEval report what did not
happen (a hard link is no modification), nor take the host down (a fork bomb) — sandbox.md."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from niceeval_cli._sandbox_spec import DOCKER_PIDS_LIMIT
from niceeval_cli.authoring import AuthoringError
from niceeval_cli.expect import NumericMaterial, equals, includes
from niceeval_cli.sandbox import OutsideWorkspace, SandboxSpec, docker_sandbox, local_sandbox
from niceeval_cli.sandbox._tar_read import tar_states
from tests.sandbox.conftest import Harness
from tests.support.docker import niceeval_containers

LINKS = 30  # names of one file: a container's tar writes its content under whichever comes first


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.slow)])  # a container takes seconds
def spec(request: pytest.FixtureRequest, template: Path) -> SandboxSpec:
    if request.param == "local":
        return local_sandbox(template=str(template))
    return docker_sandbox(image=request.getfixturevalue("docker_image"), template=str(template))


async def test_hard_links_to_a_file_add_names_and_modify_nothing(make_harness, spec):
    first = await make_harness(spec)
    await first.sandbox.run("mkdir d && echo same > d/orig")
    h = Harness(first.workspace)  # its baseline holds d/orig
    await h.sandbox.run(f"for i in $(seq 1 {LINKS}); do ln d/orig d/l$i; done; ln README.md notes")
    added = sorted([(f"d/l{i}", "added") for i in range(1, LINKS + 1)] + [("notes", "added")])
    assert h.sandbox.changed_paths() == added
    h.sandbox.no_changes(["d/orig", "README.md"])
    result, evidence = await h.result()
    assert result.state == "matched", (result.explanation, evidence)
    h.sandbox.not_in_diff(includes("same"))  # every added name holds the file's line
    result, evidence = await h.result()
    assert result.state == "mismatched" and f"{LINKS} added line(s)" in result.explanation, result.explanation
    assert "Symlink" not in evidence


def test_a_hard_link_member_of_a_workspace_tar_has_its_file_state():
    """tar writes a file's content once, under its first name; a later name is a link member."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        first = tarfile.TarInfo("workspace/a-link")
        first.size = 6
        archive.addfile(first, io.BytesIO(b"hello\n"))
        second = tarfile.TarInfo("workspace/README.md")
        second.type, second.linkname = tarfile.LNKTYPE, "workspace/a-link"
        archive.addfile(second)
    buffer.seek(0)
    states = tar_states(buffer)
    assert states["README.md"] == states["a-link"]
    assert states["README.md"].node is None and states["README.md"].data == b"hello\n"


def test_reading_a_workspace_of_many_files_holds_only_their_states():
    """A stream's tar kept every member it had read until the end: 200 000 files held 90 MB of
    them besides the snapshot itself (an agent's `node_modules`; benchmarks/README.md)."""
    import tracemalloc

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for i in range(10_000):
            archive.addfile(tarfile.TarInfo(f"workspace/d{i % 10}/f{i}"), io.BytesIO(b""))
    buffer.seek(0)
    tracemalloc.start()
    try:
        states = tar_states(buffer)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(states) == 10_000
    assert peak < 1.3 * kept, (kept, peak)  # was 2.3 times what the states hold


@pytest.mark.parametrize("route", ["socket", "cli"])
async def test_a_docker_sandbox_holds_a_bounded_number_of_processes(make_workspace, docker_image, route,
                                                                     monkeypatch):
    """Without a limit a fork bomb in the container takes every process id of the host (a run
    with the limit: the host held about 4 200 processes while the bomb ran to the attempt's timeout)."""
    if route == "cli":
        monkeypatch.setenv("NICEEVAL_DOCKER", "docker")  # every call through the CLI, `docker run` included
    workspace = await make_workspace(docker_sandbox(image=docker_image))
    done = await workspace.run("cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max")
    assert done.stdout.strip() == str(DOCKER_PIDS_LIMIT), done


@pytest.mark.parametrize("route", ["socket", "cli"])
async def test_the_containers_own_tmpfs_cannot_take_the_hosts_memory(make_workspace, docker_image, route,
                                                                     monkeypatch):
    """NiceEval's pid-file tmpfs is writable by the agent; a tmpfs is host memory (half of it by
    default, with no `memory=`): it holds 1 MiB, and the agent's command still runs and ends."""
    if route == "cli":
        monkeypatch.setenv("NICEEVAL_DOCKER", "docker")
    workspace = await make_workspace(docker_sandbox(image=docker_image))
    done = await workspace.run("dd if=/dev/zero of=/run/niceeval/fill bs=1024 count=4096 2>&1; "
                               "ls -l /run/niceeval/fill | awk '{print $5}'; rm -f /run/niceeval/fill")
    assert int(done.stdout.split()[-1]) <= 1024 * 1024, done
    after = await workspace.run("echo still here")
    assert (after.exit_code, after.stdout) == (0, "still here\n")


async def test_a_path_holding_a_nul_byte_is_an_authoring_error_and_writes_nothing(make_harness, spec):
    """A docker write stopped at the NUL: `write_text("README.md\\0.bak", ...)` replaced README.md."""
    h = await make_harness(spec)
    with pytest.raises(AuthoringError, match="NUL"):
        await h.sandbox.write_text("README.md\0.bak", "overwritten\n")
    with pytest.raises(AuthoringError, match="NUL"):
        await h.sandbox.read_text("README.md\0.bak")
    assert h.sandbox.changed_paths() == []
    assert await h.sandbox.read_text("README.md") == "# demo\nline two\n"


async def test_an_agent_that_removes_its_whole_workspace_deleted_every_file(make_harness, spec):
    """Observed, not an error: a docker snapshot of a workdir that is gone was an OSError, so the
    attempt was `errored` (undecided) where the agent had plainly deleted everything."""
    h = await make_harness(spec)
    await h.sandbox.run(f"cd / && rm -rf '{h.sandbox.workdir}'")
    assert h.sandbox.changed_paths() == [("README.md", "deleted"), ("logo.bin", "deleted"), ("src/app.py", "deleted")]
    h.sandbox.no_changes()
    result, _ = await h.result()
    assert result.state == "mismatched" and "3 change(s)" in result.explanation
    h.sandbox.file_exists("README.md")
    assert (await h.result())[0].state == "mismatched"


@pytest.mark.parametrize("route", ["socket", "cli"])
async def test_a_command_in_a_container_the_agent_stopped_never_ran_and_has_no_exit_code(
        make_harness, docker_image, route, monkeypatch):
    """`kill 1` stops the container; a test command after it was refused by the daemon, yet read
    "expected equals(0), got 1" as if the agent's tests had run and failed."""
    if route == "cli":
        monkeypatch.setenv("NICEEVAL_DOCKER", "docker")
    h = await make_harness(docker_sandbox(image=docker_image))
    await h.sandbox.run("kill 1; sleep 5")  # the container's first process ends it
    while subprocess.run(["docker", "inspect", "--format", "{{.State.Running}}", h.workspace.container],
                         capture_output=True, text=True, check=False, timeout=30).stdout.strip() == "true":
        time.sleep(0.1)  # stopping: an exec now is refused by the runtime instead (exit 126, unavailable too)
    done = await h.sandbox.run(["true"])
    assert isinstance(done.exit_code, NumericMaterial), done
    assert "is not running" in str(done.exit_code.reason) and str(done.exit_code.reason).startswith(
        "command-unavailable: ")
    assert done.returncode is None
    h.ctx.check(done.exit_code, equals(0))
    assert (await h.result())[0].state == "unavailable"


STOPPED_EVAL = """
import asyncio
from niceeval_cli import define_eval

@define_eval()
async def stops(t):
    await t.send("setsid sh -c 'sleep 1; kill 1' >/dev/null 2>&1 &")  # the agent stops its container
    await asyncio.sleep(4)
    await t.send("again")
"""


def test_the_command_adapter_in_a_container_the_agent_stopped_says_it_could_not_run(project, docker_image):
    """The adapter's command was refused by the daemon: an `adapter-error` saying so (it was a TypeError
    comparing the unavailable exit code with 0)."""
    project.write("repo/a.txt", "a\\n")
    project.write("niceeval.toml", f"""[experiments.agent]
adapter = "command"
[experiments.agent.options]
argv = ["sh", "-c", "read -r task; sh -c \\"$task\\""]
[experiments.agent.sandbox]
kind = "docker"
image = "{docker_image}"
template = "repo"
""")
    project.write("evals/e.py", STOPPED_EVAL)
    run = project.run()
    assert run.exit_code == 5, run.stdout + run.stderr
    [attempt] = project.attempts()
    assert (attempt["state"], attempt["reason"]) == ("errored", "adapter-error")
    assert "could not run" in attempt["error"] and "is not running" in attempt["error"], attempt["error"]
    assert niceeval_containers(store=project.root / ".niceeval" / "results.db") == []


def _in(container: str, script: str, user: str = "0") -> str:
    return subprocess.run(["docker", "exec", "-u", user, container, "sh", "-c", script], capture_output=True,
                          text=True, check=True, timeout=60).stdout


@pytest.mark.parametrize("route", ["socket", "cli"])
async def test_an_eval_write_through_a_directory_swapped_for_a_link_is_not_done_as_root(
        make_harness, docker_image, template, route, monkeypatch):
    """With `user=`, the agent swapped `src` for a link to `/` between the path's check and the write:
    root wrote `/bin/tool` and gave `/bin` to the agent's user (who could then replace what NiceEval
    runs as root). Written as that user, the write is refused there."""
    if route == "cli":
        monkeypatch.setenv("NICEEVAL_DOCKER", "docker")
    h = await make_harness(docker_sandbox(image=docker_image, template=str(template), user="1000:1000"))
    await h.sandbox.write_text("src/bin/tool", "x\n")  # checked now: src is the template's directory
    container = h.workspace.container
    _in(container, "cd /workspace && mv src src.real && ln -s / src", user="1000:1000")  # not through t.sandbox
    with pytest.raises(OSError, match="src/bin/tool"):
        h.sandbox.changed_paths()
    assert _in(container, "stat -c %u:%g /bin; ls /bin | grep -c '^tool$' || true").split() == ["0:0", "0"]
    await h.sandbox.write_text("notes/a.txt", "mine\n")  # an ordinary write is the user's, as before
    assert await h.sandbox.read_text("notes/a.txt") == "mine\n"
    assert _in(container, "stat -c %u:%g /workspace/notes /workspace/notes/a.txt").split() == ["1000:1000"] * 2


async def test_with_user_and_no_template_the_workspace_folder_is_the_users(make_harness, docker_image):
    """The eval's writes are made as the user, so the folder they go into must be the user's: without
    a template it was root's (Docker makes it), and the agent could not add a file next to them."""
    h = await make_harness(docker_sandbox(image=docker_image, user="1000:1000"))
    await h.sandbox.write_text("task.md", "do it\n")
    done = await h.sandbox.run("echo done >> task.md && echo mine > new.txt && id -u")
    assert (done.exit_code, done.stdout) == (0, "1000\n"), done
    assert h.sandbox.changed_paths() == [("new.txt", "added"), ("task.md", "modified")]  # written before the start


async def test_with_user_and_no_template_a_workdir_the_image_fills_is_not_given_away(make_harness, docker_image):
    """Only an empty folder is made the user's: `workdir="/bin"` must not hand the agent `/bin`."""
    h = await make_harness(docker_sandbox(image=docker_image, user="1000:1000", workdir="/bin"))
    done = await h.sandbox.run("stat -c %u /bin")
    assert done.stdout == "0\n", done


async def test_a_file_name_holding_line_breaks_cannot_forge_report_lines(make_harness, spec):
    """The agent names a file `a\\n  ✓ matched  all fine`: the explanation printed it raw, so the
    terminal showed a forged line of its own under the failed assertion."""
    h = await make_harness(spec)
    await h.sandbox.run("printf 'KEY=1\\n' > \"$(printf 'a\\n  \\342\\234\\223 matched  all fine\\r')\"")
    [(name, status)] = h.sandbox.changed_paths()
    assert (name, status) == ("a\n  ✓ matched  all fine\r", "added")  # the path itself, for custom checks
    h.sandbox.no_changes()
    result, evidence = await h.result()
    assert result.explanation == "1 change(s): a\\n  ✓ matched  all fine\\r added"
    assert "+++ b/a\\n  ✓ matched  all fine\\r\n" in evidence
    h.sandbox.not_in_diff(includes("KEY"))
    result, _ = await h.result()
    assert "\n" not in result.explanation and "a\\n  ✓ matched  all fine\\r:1: KEY=1" in result.explanation



_DEEP = ("import os\nfor _ in range(40):\n    os.mkdir('d' * 120)\n    os.chdir('d' * 120)\n"
         "open('f.txt', 'w').write('api_key=1\\n')\n")


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.slow)])
async def test_a_file_deeper_than_a_path_can_name_is_never_reported_unchanged(make_harness, template, kind, request):
    """The agent writes a file 4 800 characters deep (past PATH_MAX, one `chdir` at a time): the
    container's tar could not name it and Docker's own copy left it out without a word, so
    `no_changes` and `not_in_diff` matched over a workspace that held a new secret (a local
    walk raised an error whose message was the whole 4 800-character path)."""
    spec = local_sandbox(template=str(template)) if kind == "local" else \
        docker_sandbox(image=request.getfixturevalue("python_image"), template=str(template))
    h = await make_harness(spec)
    done = await h.sandbox.run(["python3", "-c", _DEEP])
    assert done.exit_code == 0, done
    h.sandbox.no_changes()
    h.sandbox.not_in_diff(includes("api_key"))
    # a local walk names the folder it could not list (a change whose content is unknown); a
    # container's read cannot tell what is under it, and says so
    expected = ["mismatched", "unavailable"] if kind == "local" else ["errored", "errored"]
    for index, state in enumerate(expected):
        result, _evidence = await h.result(index)
        assert result.state == state and (kind == "local" or "too long" in result.explanation), result.explanation


async def test_a_write_onto_a_fifo_the_agent_left_replaces_it_and_never_waits(make_harness, spec):
    """The agent leaves a FIFO where the eval then writes: a local write opened it and waited for a
    reader forever (an attempt without a deadline never ended; its thread outlived its timeout).
    It is replaced by the file, as a container's write replaces it."""
    h = await make_harness(spec)
    assert (await h.sandbox.run("mkfifo notes.txt")).exit_code == 0
    try:
        await asyncio.wait_for(h.sandbox.write_text("notes.txt", "hello\n"), 10)
    except TimeoutError:
        if h.workspace.kind == "local":  # a reader lets the stuck thread go, or the test process never ends
            os.close(os.open(Path(h.sandbox.workdir, "notes.txt"), os.O_RDONLY | os.O_NONBLOCK))
        pytest.fail("the write waited for a reader of the FIFO")
    assert await asyncio.wait_for(h.sandbox.read_text("notes.txt"), 10) == "hello\n"
    done = await h.sandbox.run("test -f notes.txt && test ! -p notes.txt && cat notes.txt")
    assert (done.exit_code, done.stdout) == (0, "hello\n"), done


async def test_a_workspace_the_agent_replaced_with_a_link_is_gone_not_followed(make_harness, local_spec, tmp_path):
    """The agent removes its local workspace and links that path to a folder outside: the snapshot
    walked the link's target (host files in the diff and its evidence; `ln -s /` walked the whole
    host), and `read_text` read outside the workspace. As in a container, every file of the
    workspace was deleted, and nothing is read through the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("api_key=1\n")
    h = await make_harness(local_spec)
    done = await h.sandbox.run(f"w=$(pwd) && cd / && rm -rf \"$w\" && ln -s '{outside}' \"$w\"")
    assert done.exit_code == 0, done
    assert h.sandbox.changed_paths() == [("README.md", "deleted"), ("logo.bin", "deleted"), ("src/app.py", "deleted")]
    h.sandbox.not_in_diff(includes("api_key"))
    result, evidence = await h.result()
    assert result.state == "matched" and "secret" not in evidence, (result.explanation, evidence)
    with pytest.raises(OutsideWorkspace):
        await h.sandbox.read_text("secret.txt")
    with pytest.raises(OutsideWorkspace):
        await h.sandbox.write_text("planted.txt", "x\n")
    with pytest.raises(OutsideWorkspace):  # the eval's own `rm -rf *` would have run in the link's target
        await h.sandbox.run("echo x > planted.txt")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_a_signal_the_run_ignores_does_not_cut_a_read_short(make_harness, local_spec):
    """`niceeval run &` from a script starts with SIGINT ignored, and the run leaves it so; yet a
    SIGINT during `changed_paths()` cancelled that attempt's read (`interrupted`) while the run went
    on with the next attempts. An ignored signal is ignored by the read too."""
    import signal
    import threading

    h = await make_harness(local_spec)
    done = await h.sandbox.run(["python3", "-c", "for i in range(30000): open(f'f{i}', 'w').close()"])
    assert done.exit_code == 0, done
    reading = threading.Event()

    def interrupt() -> None:
        while not reading.wait(0.02):
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    sender = threading.Thread(target=interrupt)
    sender.start()
    try:
        paths = h.sandbox.changed_paths()
    finally:
        reading.set()
        sender.join()
        signal.signal(signal.SIGINT, previous)
    assert len(paths) == 30000


async def test_pid_names_forged_in_the_pid_folder_neither_save_a_command_nor_kill_another(make_harness,
                                                                                           docker_image):
    """Anyone in the container may write `/run/niceeval`. Next to a running command's own pid name
    the agent planted `SLOT.0` and `SLOT.1`: its timeout's kill then ran `kill -- -0` (its own
    group: the kill died and the command ran on) and `kill -- -1` (every process in the container)."""
    h = await make_harness(docker_sandbox(image=docker_image))
    await h.sandbox.run("sleep 8888 > /dev/null 2>&1 &")  # the agent's own, not the command's
    plant = "sleep 1; for f in /run/niceeval/*.[0-9]*; do : > \"${f%.*}.0\"; : > \"${f%.*}.1\"; done"
    slow, _ = await asyncio.gather(h.sandbox.run("sleep 7777", timeout_ms=3000), h.sandbox.run(plant))
    assert slow.timed_out
    left = await h.sandbox.run("for p in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $p; echo; done "
                               "| grep -E '^sleep (7777|8888) ' || true")
    assert left.stdout == "sleep 8888 \n", left


async def test_a_later_command_cannot_be_stopped_ahead_by_a_name_planted_for_its_slot(make_harness, docker_image):
    """A command starts only if its slot's `SLOT.stop` is absent. Slots were numbered in turn, so an
    agent could plant the next fifty `N.stop` and every later command of the test (its pytest, its
    checks) exited 137 without running; slot names are unguessable now."""
    h = await make_harness(docker_sandbox(image=docker_image))
    plant = ('m=0; for f in /run/niceeval/*.*; do n=${f##*/}; n=${n%%.*}; '
             'case $n in ""|*[!0-9]*) ;; *) [ "$n" -gt "$m" ] && m=$n;; esac; done; '
             'i=1; while [ $i -le 50 ]; do : > /run/niceeval/$((m+i)).stop; i=$((i+1)); done')
    assert (await h.sandbox.run(plant)).exit_code == 0
    later = await h.sandbox.run("echo ran")
    assert (later.exit_code, later.stdout) == (0, "ran\n"), later
