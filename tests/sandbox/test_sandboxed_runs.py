"""Evals in a sandbox through `niceeval run` (sandbox.md), on both kinds: agents that add, modify and
delete files, leak a secret, hang past the timeout, fail `prepare`; isolation between attempts; the
stored `attempts.sandbox`; and nothing left behind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.docker import SHELL_IMAGE, niceeval_containers, processes_running, unique_seconds

AGENT_EDITS = "read task; echo fixed > a.txt; rm b.txt; echo new > c.txt; echo done"

EDIT_EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

@define_eval()
async def edits(t):
    turn = await t.send("edit the files")
    t.check(turn.message, includes("done")).label("replied")
    t.sandbox.file_changed("a.txt", status="modified").gate().label("a modified")
    t.sandbox.file_changed("b.txt", status="deleted").gate().label("b deleted")
    t.sandbox.file_changed("c.txt", status="added").gate().label("c added")
    t.sandbox.no_changes("keep").gate().label("keep untouched")
    assert t.sandbox.changed_paths() == [("a.txt", "modified"), ("b.txt", "deleted"), ("c.txt", "added")]
"""


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.slow)])  # a container takes seconds
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_image")
    return str(request.param)


def _toml(kind: str, argv: list[str], *, extra: str = "", sandbox: str = "") -> str:
    table = 'template = "repo"\n' + (f'kind = "docker"\nimage = "{SHELL_IMAGE}"\n' if kind == "docker" else "")
    return (f"[project]\n{extra}\n[experiments.agent]\nadapter = \"command\"\n"
            f"[experiments.agent.options]\nargv = {json.dumps(argv)}\n"
            f"[experiments.agent.sandbox]\n{table}{sandbox}")


def _repo(project) -> None:
    project.write("repo/a.txt", "original\n")
    project.write("repo/b.txt", "to delete\n")
    project.write("repo/keep/k.txt", "untouched\n")


def _nothing_left(own_tempdir: Path, project) -> None:
    """No workspace and no container of this test's runs is left (other runs' are not ours to judge)."""
    assert list(own_tempdir.glob("niceeval-sandbox-*")) == []
    if shutil.which("docker"):
        assert niceeval_containers(store=project.root / ".niceeval" / "results.db") == []


def test_an_agent_that_adds_modifies_and_deletes_files_is_seen_by_the_change_assertions(
        project, kind, own_tempdir):
    _repo(project)
    project.write("niceeval.toml", _toml(kind, ["sh", "-c", AGENT_EDITS]))
    project.write("evals/e.py", EDIT_EVAL)
    run = project.run()
    assert run.exit_code == 0, run.stdout + run.stderr
    [attempt] = project.attempts()
    assert attempt["state"] == "passed"
    stored = attempt["sandbox"] if isinstance(attempt["sandbox"], dict) else json.loads(attempt["sandbox"])
    assert stored["kind"] == kind and "kept" not in stored
    if kind == "docker":
        assert stored["image"] == SHELL_IMAGE and stored["image_id"].startswith("sha256:")
    evidence = {r["label"]: r["evidence"] for r in project.assertions()}
    assert "-original" in str(evidence["a modified"]) and "+fixed" in str(evidence["a modified"])
    _nothing_left(own_tempdir, project)


def test_each_attempt_gets_a_fresh_workspace(project, kind, own_tempdir):
    _repo(project)
    project.write("niceeval.toml", _toml(kind, ["sh", "-c", "read task; echo x >> log.txt; wc -l < log.txt"]))
    project.write("evals/e.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(attempts=3)
        async def fresh(t):
            turn = await t.send("append")
            t.check(turn.message.strip(), equals("1")).gate().label("one line only")
    """)
    run = project.run("--max-concurrency", "3")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert [a["state"] for a in project.attempts()] == ["passed"] * 3
    _nothing_left(own_tempdir, project)


def test_a_secret_written_into_a_file_fails_the_gate_and_is_never_stored(project, kind, own_tempdir):
    _repo(project)
    key = "sk-live-" + "a1b2c3d4" * 4
    project.write("niceeval.toml", _toml(kind, ["sh", "-c", f"read task; echo 'OPENAI_API_KEY={key}' > .env.local"]))
    project.write("evals/e.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import pattern

        @define_eval()
        async def no_secret(t):
            await t.send("work")
            t.sandbox.not_in_diff(pattern(r"(?i)api[_-]?key\\s*=")).gate().label("No secrets written")
    """)
    run = project.run()
    assert run.exit_code == 1, run.stdout + run.stderr
    [attempt] = project.attempts()
    [result] = project.assertions()
    assert (attempt["state"], result["state"]) == ("failed", "mismatched")
    assert ".env.local:1" in result["explanation"]
    assert key not in json.dumps(result) and key not in run.stdout
    assert "[redacted]" in str(result["evidence"])
    _nothing_left(own_tempdir, project)


def test_an_agent_that_hangs_past_the_timeout_is_killed_and_its_sandbox_removed(project, kind, own_tempdir):
    _repo(project)
    first, second = unique_seconds(), unique_seconds()
    project.write("niceeval.toml", _toml(kind, ["sh", "-c", f"read task; sleep {first} & sleep {second}"],
                                         extra="timeout_ms = 1500"))
    project.write("evals/e.py", """
        from niceeval_cli import define_eval

        @define_eval()
        async def hangs(t):
            await t.send("work")
    """)
    run = project.run()
    assert run.exit_code == 5, run.stdout + run.stderr
    [attempt] = project.attempts()
    assert (attempt["state"], attempt["reason"]) == ("errored", "timeout")
    assert attempt["duration_ms"] < 15_000
    _nothing_left(own_tempdir, project)
    assert processes_running("sleep", first) == [] and processes_running("sleep", second) == []


def test_a_failing_prepare_errors_the_attempt_with_the_output_tail(project, kind, own_tempdir):
    _repo(project)
    project.write("niceeval.toml", _toml(kind, ["sh", "-c", "read task; echo hi"],
                                         sandbox='prepare = ["echo preparing", "echo boom >&2; exit 4"]\n'))
    project.write("evals/e.py", """
        from niceeval_cli import define_eval

        @define_eval()
        async def prepared(t):
            await t.send("work")
    """)
    run = project.run()
    assert run.exit_code == 5, run.stdout + run.stderr
    [attempt] = project.attempts()
    assert (attempt["state"], attempt["reason"]) == ("errored", "sandbox-prepare-failed")
    assert "prepare[1]" in attempt["error"] and "exited with code 4" in attempt["error"]
    assert "boom" in attempt["error"]
    _nothing_left(own_tempdir, project)


def test_t_sandbox_without_a_declared_sandbox_is_an_authoring_error(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", """
        from niceeval_cli import define_eval

        @define_eval()
        async def no_box(t):
            t.sandbox.file_exists("x")
    """)
    run = project.run()
    [attempt] = project.attempts()
    assert (attempt["state"], attempt["reason"]) == ("errored", "authoring-error")
    assert "sandbox=" in attempt["error"] and "[experiments.<id>.sandbox]" in attempt["error"]
    assert run.exit_code == 5


def test_an_eval_sandbox_template_is_relative_to_the_eval_file(project, own_tempdir):
    project.write("evals/fixtures/repo/hello.txt", "hi\n")
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", """
        from niceeval_cli import define_eval, local_sandbox
        from niceeval_cli.expect import equals

        @define_eval(sandbox=local_sandbox(template="fixtures/repo", prepare=["echo made > made.txt"]))
        async def from_eval(t):
            t.check(await t.sandbox.read_text("hello.txt"), equals("hi\\n")).gate()
            t.check(await t.sandbox.read_text("made.txt"), equals("made\\n")).gate()
            t.sandbox.no_changes().gate()
    """)
    run = project.run()
    assert run.exit_code == 0, run.stdout + run.stderr
    _nothing_left(own_tempdir, project)


def test_the_python_adapter_passes_sandbox_to_a_callable_that_accepts_it(project, own_tempdir):
    project.write("repo/app.py", "x = 1\n")
    project.write("agent.py", """
        async def reply(message, sandbox):
            await sandbox.write_text("app.py", "x = 2\\n")
            done = await sandbox.run("cat app.py")
            return "now " + done.stdout.strip()
    """)
    project.write("niceeval.toml", """
        [project]
        [experiments.py]
        adapter = "python"
        [experiments.py.options]
        callable = "agent:reply"
        [experiments.py.sandbox]
        template = "repo"
    """)
    project.write("evals/e.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def edits(t):
            turn = await t.send("bump x")
            t.check(turn.message, equals("now x = 2")).gate()
            t.sandbox.file_changed("app.py", status="modified").gate()
    """)
    run = project.run()
    assert run.exit_code == 0, run.stdout + run.stderr
    _nothing_left(own_tempdir, project)


def test_a_missing_image_is_a_setup_error_before_dispatch(project, docker_image):
    _repo(project)
    project.write("niceeval.toml", _toml("local", ["sh", "-c", "read task"],
                                         sandbox='kind = "docker"\nimage = "niceeval-test/never-built"\n'))
    project.write("evals/e.py", """
        from niceeval_cli import define_eval

        @define_eval()
        async def any_eval(t):
            await t.send("work")
    """)
    run = project.run()
    assert run.exit_code == 3, run.stdout + run.stderr
    output = run.stdout + run.stderr
    assert "niceeval-test/never-built" in output and "never pulls" in output
    assert project.attempts() == []


def test_the_sandbox_is_part_of_the_fingerprint(project, kind):
    _repo(project)
    project.write("niceeval.toml", _toml(kind, ["sh", "-c", AGENT_EDITS]))
    project.write("evals/e.py", EDIT_EVAL)
    def sealed() -> int:
        return len(project.attempts("--run", "all"))

    assert project.run().exit_code == 0
    assert project.run().exit_code == 0
    assert sealed() == 1  # reused: nothing changed
    project.write("repo/keep/k.txt", "edited template\n")
    assert project.run().exit_code == 0
    assert sealed() == 2  # the template's content changed: run again
    project.write("niceeval.toml", _toml(kind, ["sh", "-c", AGENT_EDITS], sandbox='prepare = ["true"]\n'))
    assert project.run().exit_code == 0
    assert sealed() == 3
    parts = json.loads(project.attempts()[0]["fingerprint_parts"]) if isinstance(
        project.attempts()[0]["fingerprint_parts"], str) else project.attempts()[0]["fingerprint_parts"]
    assert parts["sandbox"]["prepare"] == ["true"] and parts["sandbox"]["kind"] == kind
