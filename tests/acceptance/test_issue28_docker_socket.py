"""Issue 28 item 3: a docker-sandboxed attempt asks the daemon over its socket, not through a
`docker` client process per call.

Each `docker` CLI client costs ~15–20 ms of CPU on a 2-core box whose cores the daemon needs,
and an attempt made four (start, the eval's command, its write and read, remove) against the
floor's one. Where the CLI would talk to a local Unix socket, the attempt's own calls now go to
that socket; what a run does once (preflight, baking the template) still uses the CLI, and
`NICEEVAL_DOCKER`, another `DOCKER_HOST` or a context keep everything on the CLI as before.

The CLI in process against the real daemon, with a `docker` on PATH that logs every client
started: the clients a run spawns do not grow with its attempts, and isolation, labels, the
timeout kill and the cleanup are what they were. Each test looks only at its own run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.docker import SHELL_IMAGE, docker_logging_to, docker_seeing_only, need_docker
from tests.support.docker_proxy import DaemonProxy
from tests.support.project import Project, base_env

pytestmark = pytest.mark.slow


@pytest.fixture
def proj(project: Project) -> Project:
    return project


EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals, pattern


@define_eval()
async def edit(t):
    done = await t.sandbox.run("echo changed >> README.md && cat README.md")
    # isolation: this attempt sees the template and its own line, never another attempt's
    t.check(done.stdout, equals("# bench\\nchanged\\n")).gate().label("own workspace")
    slow = await t.sandbox.run("echo $$ > slow.pid; sleep 30", timeout_ms=300)
    t.check(slow.timed_out, equals(True)).gate().label("timed out")
    left = await t.sandbox.run("kill -0 $(cat slow.pid) 2>/dev/null && echo alive || echo gone")
    t.check(left.stdout.strip(), equals("gone")).gate().label("killed inside the container")
    piped = await t.sandbox.run(["cat"], input="from stdin", env={"GREETING": "hi"})
    t.check(piped.stdout, equals("from stdin")).gate().label("stdin")
    await t.sandbox.write_text("notes.txt", "hello\\n")
    t.check(await t.sandbox.read_text("notes.txt"), equals("hello\\n")).gate().label("read back")
    t.sandbox.file_changed("README.md", status="modified").gate()
    t.sandbox.not_in_diff(pattern("api_key=")).gate()
"""


# sandbox_floor.py's attempt: a command, a write, two change assertions
PLAIN_EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals, pattern


@define_eval()
async def edit(t):
    done = await t.sandbox.run("echo changed >> README.md && cat README.md")
    t.check(done.stdout, equals("# bench\\nchanged\\n")).gate().label("own workspace")
    await t.sandbox.write_text("notes.txt", "hello\\n")
    t.sandbox.file_changed("README.md", status="modified").gate()
    t.sandbox.not_in_diff(pattern("api_key=")).gate()
"""


def _docker(*args: str) -> list[str]:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, env=base_env(), timeout=60)
    return done.stdout.split()


def _project(proj: Project, log: Path) -> dict[str, str | None]:
    proj.write("repo/README.md", "# bench\n")
    for i in range(4):
        proj.write(f"repo/src/file_{i}.py", f"VALUE = {i}\n")
    proj.write("evals/bench.py", EVAL)
    proj.write("niceeval.toml", f'[project]\nevals = ["evals"]\n\n[experiments.docker.sandbox]\nkind = "docker"\n'
                                f'image = "{SHELL_IMAGE}"\ntemplate = "repo"\n')
    bin_dir = proj.root / "bin"
    bin_dir.mkdir()
    docker_logging_to(log, bin_dir, name="docker")
    # the `docker` a user has on PATH (NICEEVAL_DOCKER unset: that one keeps every call on the CLI)
    return {"PATH": f"{bin_dir}:{base_env()['PATH']}", "NICEEVAL_DOCKER": None, "DOCKER_HOST": None,
            "DOCKER_CONTEXT": None, "NO_COLOR": "1"}


def _left_by(run_id: str) -> dict[str, list[str]]:
    return {"containers": _docker("ps", "-aq", "--filter", f"label=niceeval.sandbox.run={run_id}"),
            "images": _docker("images", "-q", "--filter", f"label=niceeval.template.run={run_id}")}


def test_attempts_spawn_no_docker_client_each_and_keep_their_isolation(proj: Project, tmp_path: Path):
    need_docker(SHELL_IMAGE)
    log = tmp_path / "docker-clients.log"
    env = _project(proj, log)
    attempts = 8
    done = proj.run("--attempts", str(attempts), "--max-concurrency", "4", env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = proj.sql("SELECT state FROM attempts")
    assert [row["state"] for row in rows] == ["passed"] * attempts, "\n".join(  # whole: pytest cuts a repr
        f"{r['state']} {r['reason']}: {r['error']}" for r in proj.sql("SELECT state, reason, error FROM attempts")
    ) + "\n" + "\n".join(f"{r['label']}: {r['state']} {r['reason']} {r['evidence']}" for r in proj.sql(
        "SELECT label, state, reason, evidence FROM assertion_results WHERE state != 'matched'"))
    checks = proj.sql("SELECT state, COUNT(*) AS n FROM assertion_results GROUP BY state")
    assert checks == [{"state": "matched", "n": attempts * 7}], checks

    clients = [line.split()[0] for line in log.read_text().splitlines()]
    # what the run does once (the template's bake and its removal), never per attempt; the
    # preflight asks the socket too (no `docker version`, no `docker image inspect`)
    assert "exec" not in clients and "run" not in clients, clients
    assert "version" not in clients and "image" not in clients, clients
    assert len(clients) <= 6, clients  # create, cp, commit, rm (the bake's helper), rmi
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    assert _left_by(run_id) == {"containers": [], "images": []}


def test_containers_made_over_the_socket_carry_their_labels_for_list_and_prune(proj: Project, tmp_path: Path):
    need_docker(SHELL_IMAGE)
    env = _project(proj, tmp_path / "docker-clients.log")
    # a real process: `prune` removes a baked image only once its maker is gone
    done = Project(proj.root).run("--attempts", "2", "--max-concurrency", "2", "--keep-sandbox", "all", env=env,
                                  timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    kept = sorted(json.loads(row["sandbox"])["kept"] for row in proj.sql("SELECT sandbox FROM attempts"))
    try:
        assert len(kept) == 2 and all(place.startswith("docker container niceeval-") for place in kept), kept
        scoped = {"NICEEVAL_DOCKER": docker_seeing_only(run_id, tmp_path), "NO_COLOR": "1"}
        listed = proj.cli("sandbox", "list", "--json", env=scoped)
        assert listed.returncode == 0, listed.stdout + listed.stderr
        rows = json.loads(listed.stdout)
        assert len(rows) == 2, rows
        stored = proj.sql("SELECT id, eval_id FROM attempts")
        assert {row["run"] for row in rows} == {run_id}, rows
        assert {row["attempt"] for row in rows} == {row["id"] for row in stored}, (rows, stored)
        assert {row["eval"] for row in rows} == {row["eval_id"] for row in stored}, (rows, stored)
        assert all(row["status"] == "kept" for row in rows), rows
        for place in kept:  # each kept container has its own files: the template and its own line
            container = place.split()[-1]
            text = subprocess.run(["docker", "cp", f"{container}:/workspace/README.md", "-"], capture_output=True,
                                  env=base_env(), timeout=60)
            assert text.returncode == 0 and text.stdout.count(b"changed") == 1, text
        pruned = proj.cli("sandbox", "prune", env=scoped)
        assert pruned.returncode == 0, pruned.stdout + pruned.stderr
        assert _left_by(run_id) == {"containers": [], "images": []}
    finally:
        for container in _left_by(run_id)["containers"]:
            _docker("rm", "-f", "-v", container)
        for image in _left_by(run_id)["images"]:
            _docker("rmi", image)


def test_each_attempt_asks_the_daemon_for_one_container_two_execs_and_its_removal(proj: Project, tmp_path: Path):
    need_docker(SHELL_IMAGE)
    env = _project(proj, tmp_path / "docker-clients.log")
    proj.write("evals/bench.py", PLAIN_EVAL)
    attempts, concurrency = 8, 2
    with DaemonProxy(tmp_path) as proxy:
        done = proj.run("--attempts", str(attempts), "--max-concurrency", str(concurrency),
                        env={**env, "DOCKER_HOST": f"unix://{proxy.path}"}, timeout=600)
        requests = list(proxy.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [row["state"] for row in proj.sql("SELECT state FROM attempts")] == ["passed"] * attempts

    def count(request: str) -> int:
        return requests.count(request)

    # the bake's helper is created through the CLI, which asks the same socket: one more create
    assert count("POST /containers/create") == attempts + 1, requests
    assert count("POST /containers/{}/start") == attempts, requests
    # per attempt its command and one exec carrying its write in and reading the workspace out;
    # the run's one baseline
    assert count("POST /exec/{}/start") == 2 * attempts + 1, requests
    assert count("DELETE /containers/{}") == attempts + 1, requests  # and the bake's helper
    # the template into the attempts started before the bake, and the bake's; never the test's write
    assert 1 <= count("PUT /containers/{}/archive") <= concurrency + 1 + 3, requests
    assert count("GET /containers/{}/archive") == 0, requests
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    assert _left_by(run_id) == {"containers": [], "images": []}
