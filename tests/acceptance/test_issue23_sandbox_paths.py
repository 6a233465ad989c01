"""Issue 23, items 8 and 3: what a sandbox path may name.

Item 8: `"."` is the whole workspace for the change assertions (`no_changes(".")` after changes
fails, `file_changed(".")` passes) and is refused, naming it, where a file is needed
(`read_text(".")` no longer returns another file's content in docker).
Item 3: a symlink — from the template or planted by the agent — never takes `read_text`,
`write_text` or `run(cwd=)` out of the workspace (the host's, or in docker the container's
`/etc`): the attempt errors, naming the path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.project import Project
from tests.support.sandbox import KINDS, assertions, attempts, env_for, kind_of, sandbox_project

pytestmark = pytest.mark.slow


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process: these checks read the run's exit code, output and rows (its TMPDIR is the
    test's own, as in a new process); what is about a process is checked elsewhere."""
    return project

@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return kind_of(request)

DOT_EVALS = """
from niceeval_cli import define_eval

@define_eval()
async def dot_changes(t):
    await t.send("change something")
    t.sandbox.no_changes(".").label("nothing under .")
    t.sandbox.file_changed(".").label("something under .")
    t.sandbox.file_changed("./").label("something under ./")
    t.sandbox.no_changes(["docs", "."]).label("nothing under docs or .")

@define_eval()
async def dot_read(t):
    await t.send("change something")
    await t.sandbox.read_text(".")

@define_eval()
async def dot_cwd(t):
    await t.send("change something")
    done = await t.sandbox.run("ls", cwd=".")
    assert "notes.txt" in done.stdout
"""


def test_dot_is_the_whole_workspace_never_a_vacuous_pass(proj: Project, kind: str, tmp_path):
    sandbox_project(proj, kind, "echo hi > notes.txt && echo done", DOT_EVALS,
                    template={"a.txt": "a\n", "docs/b.txt": "b\n"})
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=120)
    assert run.returncode != 0, run.stdout + run.stderr
    rows = assertions(proj)
    assert rows["nothing under ."]["state"] == "mismatched"
    assert "notes.txt added" in rows["nothing under ."]["explanation"]
    assert rows["something under ."]["state"] == "matched"
    assert rows["something under ./"]["state"] == "matched"
    assert rows["nothing under docs or ."]["state"] == "mismatched"
    states = {a["eval_id"]: a for a in attempts(proj)}
    read = states["e/dot_read"]
    assert read["state"] == "errored"
    assert "'.' is the workspace itself, not a file" in read["error"], read
    assert "a\n" not in read["error"] and "b\n" not in read["error"]
    assert states["e/dot_cwd"]["state"] == "passed", states["e/dot_cwd"]


LINK_EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
async def read_template_link(t):
    await t.send("go")
    await t.sandbox.read_text("passwd")

@define_eval()
async def read_planted_link(t):
    await t.send("go")
    await t.sandbox.read_text("planted")

@define_eval()
async def read_inside_link(t):
    await t.send("go")
    t.check(await t.sandbox.read_text("alias.txt"), equals("real\\n")).label("alias")
"""

HOST_EVALS = """

@define_eval()
async def read_through_dir_link(t):
    await t.send("go")
    await t.sandbox.read_text("host/secret.txt")

@define_eval()
async def write_through_dir_link(t):
    await t.send("go")
    await t.sandbox.write_text("host/written.txt", "from the eval")

@define_eval()
async def run_in_dir_link(t):
    await t.send("go")
    await t.sandbox.run("touch made-here", cwd="host")
"""


def _link_project(proj: Project, kind: str, host: Path) -> None:
    # In a container the template's `host` link points nowhere: the agent points it at /etc there.
    agent = "ln -s /etc/hostname planted && " + ("ln -sfn /etc host && " if kind == "docker" else "") + "echo done"
    sandbox_project(proj, kind, agent, LINK_EVALS + HOST_EVALS, template={"real.txt": "real\n"})
    os.symlink("/etc/passwd", proj.root / "repo" / "passwd")
    os.symlink("real.txt", proj.root / "repo" / "alias.txt")
    os.symlink(host, proj.root / "repo" / "host")


def test_symlinks_never_lead_sandbox_paths_out_of_the_workspace(proj: Project, kind: str, tmp_path):
    host = tmp_path / "host-folder"
    host.mkdir()
    (host / "secret.txt").write_text("host secret\n")
    _link_project(proj, kind, host)
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=120)
    out = run.stdout + run.stderr
    assert "root:" not in out and "host secret" not in out
    states = {a["eval_id"].split("/")[-1]: a for a in attempts(proj)}
    refused = ["read_template_link", "read_planted_link", "read_through_dir_link", "write_through_dir_link",
               "run_in_dir_link"]
    for name, path in zip(refused, ["passwd", "planted", "host/secret.txt", "host/written.txt", "host"], strict=True):
        attempt = states[name]
        assert attempt["state"] == "errored", attempt
        assert f"{path!r} leads outside the workspace" in attempt["error"], attempt
        assert "root:" not in attempt["error"] and "host secret" not in attempt["error"]
    assert states["read_inside_link"]["state"] == "passed", states["read_inside_link"]
    assert sorted(p.name for p in host.iterdir()) == ["secret.txt"]  # nothing written or made there
