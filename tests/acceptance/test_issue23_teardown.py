"""Issue 23 item 1: Ctrl-C during a sandbox's teardown must not throw away the attempt.

The test had finished (and passed) when the interrupt arrived; the attempt is sealed with its
real verdict, never reported "not run". A real `niceeval run` subprocess gets SIGINT while the
sandbox is being removed: a local workspace of 20 000 files (its removal takes about a second)
and a docker container (`docker rm -f`). The eval makes those files itself (empty, in one folder,
one `xargs touch`): a template of 20 000 files cost the test writing them, the sandbox copying
them and its baseline reading them — most of the test's time — before the teardown it is about.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.project import Project, base_env, wait_for

pytestmark = pytest.mark.slow

EVAL = """
from pathlib import Path
from niceeval_cli import define_eval, {factory}
from niceeval_cli.expect import equals

_here = Path(__file__).resolve().parent.parent


@define_eval(sandbox={factory}({args}))
async def finished(t):
{fill}    result = await t.sandbox.run("echo ok")
    t.check(result.stdout.strip(), equals("ok"))
    (_here / "test.done").write_text("1")  # the test is over: teardown follows at once
"""


#: The local eval's first line: a workspace whose removal takes about a second.
MANY_FILES = '    await t.sandbox.run("mkdir many && cd many && seq 20000 | xargs touch")\n'


def _interrupt_during_teardown(proj: Project, env: dict[str, str]) -> tuple[int, list[dict], str]:
    done = proj.root / "test.done"
    proc = proj.popen("run", "--json", env=env)
    try:
        wait_for(lambda: done.exists() or proc.poll() is not None, timeout=120, every=0.005)
        assert proc.poll() is None, "the run ended before the test finished"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return proc.returncode, events, err


def _check_sealed_with_its_real_verdict(proj: Project, code: int, events: list[dict], err: str) -> None:
    assert code == 130, err
    kinds = [e["event"] for e in events]
    assert "attempt.started" in kinds
    attempts = proj.sql("SELECT state, reason FROM attempts")
    assert attempts == [{"state": "passed", "reason": None}], (attempts, err)
    checks = proj.sql("SELECT state FROM assertion_results")
    assert checks == [{"state": "matched"}]
    run = proj.sql("SELECT status FROM runs")[0]
    assert run["status"] == "interrupted"
    assert kinds.count("attempt.sealed") == 1, kinds
    shown = Project(proj.root, in_process=True).cli("view", env={"NO_COLOR": "1"})  # a reader, in process
    assert "not run" not in shown.stdout and "PASSED" in shown.stdout.upper(), shown.stdout


def test_ctrl_c_during_a_local_sandbox_teardown_seals_the_finished_attempt(proj: Project, tmp_path: Path):
    proj.write("repo/README.md", "# r\n")
    proj.write("evals/e.py", EVAL.format(factory="local_sandbox", args='template="../repo"', fill=MANY_FILES))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code, events, err = _interrupt_during_teardown(proj, {"TMPDIR": str(tmp), "NO_COLOR": "1"})
    _check_sealed_with_its_real_verdict(proj, code, events, err)
    assert list(tmp.glob("niceeval-sandbox-*")) == []  # removed all the same


def test_ctrl_c_during_a_docker_sandbox_teardown_seals_the_finished_attempt(proj: Project):
    from tests.support.docker import SHELL_IMAGE, need_docker

    need_docker(SHELL_IMAGE)
    proj.write("repo/README.md", "# r\n")
    label = f"niceeval-test-teardown-{time.time_ns()}"
    proj.write("evals/e.py", EVAL.format(factory="docker_sandbox",
                                         args=f'image="{SHELL_IMAGE}", template="../repo"', fill=""))
    code, events, err = _interrupt_during_teardown(proj, {"NO_COLOR": "1"})
    _check_sealed_with_its_real_verdict(proj, code, events, err)
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    left = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=niceeval.sandbox.run={run_id}"],
                          capture_output=True, text=True, env=base_env(), timeout=30).stdout.split()
    assert left == [], label
