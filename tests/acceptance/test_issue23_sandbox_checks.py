"""Issue 23, item 6: sandbox change checks run off the event loop, in linear time, within the
attempt's timeout and signals, and treat special files as such.

Reproduced from the outside: a 4 500-line rewrite that `difflib` took minutes over; an agent's
`truncate -s 40G` sparse file with a 4 s timeout; Ctrl-C and SIGTERM while a check reads a
huge file; a FIFO or device node in the template and one made by the agent.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import time

import pytest

from tests.support.project import Project, wait_for
from tests.support.sandbox import (
    KINDS,
    assertions,
    attempts,
    containers_of,
    env_for,
    kind_of,
    need_kind,
    sandbox_project,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process where a check reads the run's exit code, rows and leftovers (its TMPDIR is
    the test's own, as in a new process); the signal checks start the real `niceeval` (`popen`)."""
    return project

@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return kind_of(request)

REWRITE_EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import pattern

@define_eval()
async def rewrite(t):
    await t.send("rewrite it")
    t.sandbox.file_changed("values.py", status="modified").label("modified")
    t.sandbox.not_in_diff(pattern(r"MARKER_7731")).label("no secret")
"""


def test_a_4500_line_rewrite_is_checked_in_seconds(proj: Project, kind: str, tmp_path):
    # Every line repeated many times: the worst case of difflib (1 800 lines took 15 s, 4 500 > 275 s).
    template = {"values.py": "".join(f"x = {i % 10}\n" for i in range(4500))}
    agent = ("i=0; while [ $i -lt 4499 ]; do echo \"x = $((i % 7))\"; i=$((i+1)); done > values.py; "
             "echo 'MARKER_7731' >> values.py; echo done")
    sandbox_project(proj, kind, agent, REWRITE_EVAL, timeout_ms=60_000, template=template)
    started = time.monotonic()
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=200)
    assert time.monotonic() - started < 120, "the diff took too long"  # difflib: minutes, past the timeout
    assert run.returncode == 1, run.stdout + run.stderr
    [attempt] = attempts(proj)
    assert attempt["state"] == "failed", attempt  # not errored over its timeout
    rows = assertions(proj)
    assert rows["modified"]["state"] == "matched"
    assert rows["no secret"]["state"] == "mismatched" and "values.py:4500" in rows["no secret"]["explanation"]


SPARSE_EVAL = """
from niceeval_cli import define_eval

@define_eval()
async def sparse(t):
    await t.send("make a sparse file")
    t.sandbox.file_changed("huge.bin", status="added").label("added")
    assert ("huge.bin", "added") in t.sandbox.changed_paths()  # read on the spot, within the deadline too
"""


def test_a_sparse_40g_file_never_hangs_past_the_timeout(proj: Project, kind: str, tmp_path):
    sandbox_project(proj, kind, "truncate -s 40G huge.bin && echo done", SPARSE_EVAL, timeout_ms=4_000)
    started = time.monotonic()
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=120)
    took = time.monotonic() - started
    assert took < 40, f"the run took {took:.0f} s with a 4 s timeout"  # hashing 40 GB takes longer
    [attempt] = attempts(proj)
    if kind == "local":  # never read: a file over the diff limit is compared by size and timestamps
        assert run.returncode == 0, run.stdout + run.stderr
        assert attempt["state"] == "passed"
        evidence = json.loads(assertions(proj)["added"]["evidence"])
        assert "huge.bin added: not diffed (42949672960 bytes, over the 16 MiB" in evidence
    else:  # `docker cp` must stream it: the attempt's timeout ends the read
        assert attempt["state"] in ("passed", "errored"), attempt
        if attempt["state"] == "errored":
            assert attempt["reason"] == "timeout" or "before the attempt's timeout" in attempt["error"], attempt
    assert list((tmp_path / "tmp").glob("niceeval-sandbox-*")) == []
    assert containers_of(proj) == []


# The sparse eval, saying on the host when its checks begin (their read then streams 200 GB).
SIGNALLED_EVAL = SPARSE_EVAL.replace('    await t.send("make a sparse file")\n', (
    '    await t.send("make a sparse file")\n'
    '    import os, pathlib\n'
    '    pathlib.Path(os.environ["CHECKS_BEGIN"]).touch()\n'))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_during_a_long_check_ends_the_run_promptly(proj: Project, tmp_path, sig):
    need_kind("docker")  # locally nothing is slow to read any more; docker must stream the file
    sandbox_project(proj, "docker", "truncate -s 200G huge.bin && echo done", SIGNALLED_EVAL, timeout_ms=600_000)
    begun = tmp_path / "checks-begin"
    proc = proj.popen("run", env={**env_for(tmp_path / "tmp"), "CHECKS_BEGIN": str(begun)})
    try:
        wait_for(lambda: containers_of(proj) != [], timeout=60, every=0.25)  # each look is a `docker ps`
        # The agent is done and the check streams 200 GB out of the container: through a `docker cp`
        # child on the CLI, over the daemon's socket otherwise (sandbox.md, "How NiceEval talks to
        # Docker"). (Asking the daemon with `docker exec` could block behind that stream.)
        wait_for(begun.exists, timeout=120)
        time.sleep(2)
        sent = time.monotonic()
        os.kill(proc.pid, sig)
        proc.communicate(timeout=60)
        assert time.monotonic() - sent < 25, "the run did not stop promptly"  # streaming 200 GB: minutes
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode in (130, 143), proc.returncode
    wait_for(lambda: containers_of(proj) == [], timeout=30, every=0.25)


def _special_template(proj: Project) -> list[str]:
    os.mkfifo(proj.root / "repo" / "pipe")
    made = ["pipe"]
    if os.geteuid() == 0:  # a /dev/zero node: copied as a file, it never ends
        os.mknod(proj.root / "repo" / "zero", stat.S_IFCHR | 0o644, os.makedev(1, 5))
        made.append("zero")
    return made


def test_a_special_file_in_the_template_is_a_setup_error_naming_it(proj: Project, kind: str, tmp_path):
    sandbox_project(proj, kind, "echo done", SPARSE_EVAL)
    made = _special_template(proj)
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=60)
    assert run.returncode == 3, run.stdout + run.stderr
    out = run.stdout + run.stderr
    assert any(f"contains {name}, a" in out for name in made), out
    assert "Traceback" not in out


FIFO_EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import pattern

@define_eval()
async def fifo(t):
    await t.send("make a pipe")
    t.sandbox.file_changed("pipe", status="added").label("added")
    t.sandbox.not_in_diff(pattern("api_key")).label("no secret")
"""


def test_a_fifo_made_by_the_agent_is_a_change_never_read(proj: Project, kind: str, tmp_path):
    sandbox_project(proj, kind, "mkfifo pipe && echo done", FIFO_EVAL, timeout_ms=20_000)
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = assertions(proj)
    assert rows["added"]["state"] == "matched"
    assert "Special file pipe added: a fifo, never read" in json.loads(rows["added"]["evidence"])
    assert rows["no secret"]["state"] == "matched"
