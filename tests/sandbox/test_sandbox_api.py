"""`t.sandbox` (sandbox.md): files, commands and the change assertions, on both kinds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from niceeval_cli.authoring import AuthoringError
from niceeval_cli.authoring._sandbox_api import EVIDENCE_CHARS
from niceeval_cli.expect import includes, pattern
from niceeval_cli.sandbox import SandboxSpec, docker_sandbox, local_sandbox
from niceeval_cli.sandbox._workspace import FileState, TextBudget
from tests.support.docker import need_docker, unique_seconds

#: Command lines of the processes running `sleep N` for this test's own N (a local workspace sees
#: the whole machine's processes, another test run's sleeps included; the container idles on 3600).
LIVE_SLEEPS = "for p in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $p; echo; done | grep -E '^sleep ({}|{}) ' || true"


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.slow)])  # a container takes seconds
def spec(request: pytest.FixtureRequest, template: Path) -> SandboxSpec:
    if request.param == "local":
        return local_sandbox(template=str(template))
    image = request.getfixturevalue("docker_image")
    return docker_sandbox(image=image, template=str(template))


async def test_files_are_read_and_written_relative_to_the_workdir(make_harness, spec):
    h = await make_harness(spec)
    assert await h.sandbox.read_text("README.md") == "# demo\nline two\n"
    assert await h.sandbox.read_bytes("logo.bin") == b"\x89PNG\0\1\2"
    await h.sandbox.write_text("notes/NOTES.md", "hello\n")
    assert await h.sandbox.read_text("notes/NOTES.md") == "hello\n"
    assert h.sandbox.workdir == ("/workspace" if spec.kind == "docker" else h.workspace.workdir)


async def test_a_missing_file_raises_file_not_found_naming_it(make_harness, spec):
    h = await make_harness(spec)
    with pytest.raises(FileNotFoundError, match=r"NOTES\.md"):
        await h.sandbox.read_text("NOTES.md")


async def test_paths_that_leave_the_workspace_are_authoring_errors(make_harness, spec):
    h = await make_harness(spec)
    with pytest.raises(AuthoringError, match="stay inside"):
        await h.sandbox.read_text("../etc/passwd")
    with pytest.raises(AuthoringError, match="stay inside"):
        h.sandbox.file_exists("/etc/passwd")


async def test_run_returns_a_result_for_a_non_zero_exit(make_harness, spec):
    h = await make_harness(spec)
    ok = await h.sandbox.run("cat README.md; echo err >&2")
    assert (ok.exit_code, ok.stdout, ok.stderr.strip(), ok.timed_out) == (0, "# demo\nline two\n", "err", False)
    failed = await h.sandbox.run(["sh", "-c", "exit 3"])
    assert failed.exit_code == 3
    piped = await h.sandbox.run(["cat"], input="from stdin")
    assert piped.stdout == "from stdin"
    inside = await h.sandbox.run("pwd", cwd="src")
    assert inside.stdout.strip().endswith("/src")
    env = await h.sandbox.run("echo $GREETING", env={"GREETING": "hi"})
    assert env.stdout.strip() == "hi"


async def test_run_past_its_timeout_is_killed_and_says_so(make_harness, spec):
    h = await make_harness(spec)
    first, second = unique_seconds(), unique_seconds()
    slow = await h.sandbox.run(f"sleep {first} & sleep {second}", timeout_ms=300)
    assert slow.timed_out and slow.exit_code is None
    assert slow.duration_ms < 10_000
    left = await h.sandbox.run(LIVE_SLEEPS.format(first, second))
    assert left.stdout.split() == [], left


async def test_a_command_that_starts_only_after_its_timeout_never_runs(make_harness, spec):
    # a `sh` first on the command's PATH that takes a second to start, as a loaded daemon can take
    # longer than the timeout to start an exec: the kill came before the process, which must then
    # never run (it used to find nothing to kill, and the command ran on in the workspace)
    h = await make_harness(spec)
    await h.sandbox.write_text("slowbin/sh", '#!/bin/sh\nsleep 1\nexec /bin/sh "$@"\n')
    assert (await h.sandbox.run("chmod +x slowbin/sh")).exit_code == 0
    late = unique_seconds()
    slow = await h.sandbox.run(f"sleep {late}", timeout_ms=300,
                               env={"PATH": f"{h.sandbox.workdir}/slowbin:/usr/bin:/bin"})
    assert slow.timed_out
    await asyncio.sleep(2)  # past the slow start
    left = await h.sandbox.run(LIVE_SLEEPS.format(late, late))
    assert left.stdout.split() == [], left


async def test_hundreds_of_commands_in_one_attempt_keep_their_output_and_their_kill(make_harness, spec):
    # each command once left a file holding its pid in the container's 1 MiB tmpfs: from the 257th
    # on, every command's stderr said "No space left on device" and its timeout killed nothing
    h = await make_harness(spec)
    for start in range(0, 300, 20):
        done = await asyncio.gather(*(h.sandbox.run(f"echo {i}") for i in range(start, start + 20)))
        assert [(r.stdout, r.stderr) for r in done] == [(f"{i}\n", "") for i in range(start, start + 20)]
    first, second = unique_seconds(), unique_seconds()
    slow = await h.sandbox.run(f"sleep {first} & sleep {second}", timeout_ms=300)
    assert slow.timed_out and slow.stderr == ""
    left = await h.sandbox.run(LIVE_SLEEPS.format(first, second))
    assert left.stdout.split() == [], left


async def test_file_exists_matches_files_only(make_harness, spec):
    h = await make_harness(spec)
    h.sandbox.file_exists("README.md")
    assert (await h.result())[0].state == "matched"
    h.sandbox.file_exists("NOTES.md")
    result, evidence = (await h.result())
    assert result.state == "mismatched" and "does not exist" in result.explanation
    assert evidence == {"path": "NOTES.md", "exists": False}
    h.sandbox.file_exists("src")
    assert "directory" in (await h.result())[0].explanation


async def test_assertions_read_the_workspace_at_the_call(make_harness, spec):
    h = await make_harness(spec)
    h.sandbox._mark_started()
    missing = h.sandbox.file_exists("late.txt")
    await h.sandbox.write_text("late.txt", "now\n")
    assert missing._reg.result.state == "mismatched"
    h.sandbox.file_exists("late.txt")
    assert (await h.result())[0].state == "matched"


async def test_changes_are_added_modified_deleted_since_the_baseline(make_harness, spec):
    h = await make_harness(spec)
    await h.sandbox.run("echo new > added.txt; printf 'def add(a, b):\\n    return a + b\\n' > src/app.py;"
                        " rm README.md; printf '\\0\\1' > logo.bin")
    assert h.sandbox.changed_paths() == [
        ("README.md", "deleted"), ("added.txt", "added"), ("logo.bin", "modified"), ("src/app.py", "modified"),
    ]
    h.sandbox.file_changed("src/app.py", status="modified")
    result, evidence = (await h.result())
    assert result.state == "matched"
    assert "-    return a - b\n+    return a + b\n" in evidence
    h.sandbox.file_changed("README.md", status="added")
    assert (await h.result())[0].state == "mismatched" and "deleted" in (await h.result())[0].explanation
    h.sandbox.file_changed("src")
    assert (await h.result())[0].state == "matched"
    h.sandbox.no_changes()
    result, evidence = (await h.result())
    assert result.state == "mismatched" and "4 change(s)" in result.explanation
    assert "Binary file logo.bin modified" in evidence and "\0" not in evidence


async def test_no_changes_narrowed_to_paths(make_harness, spec):
    h = await make_harness(spec)
    await h.sandbox.run("echo x > scratch.txt")
    h.sandbox.no_changes(["src", "README.md"])
    assert (await h.result())[0].state == "matched"
    h.sandbox.no_changes("scratch.txt")
    assert (await h.result())[0].state == "mismatched"
    h.sandbox.file_changed("README.md")
    assert (await h.result())[0].state == "mismatched"


async def test_writes_before_the_first_send_are_part_of_the_start(make_harness, spec):
    h = await make_harness(spec)
    await h.sandbox.write_text("config.ini", "a=1\n")
    h.sandbox.no_changes()
    assert (await h.result())[0].state == "matched"
    h.sandbox._mark_started()
    await h.sandbox.write_text("config.ini", "a=2\n")
    assert h.sandbox.changed_paths() == [("config.ini", "modified")]


async def test_not_in_diff_checks_added_lines_only_and_names_them(make_harness, spec):
    h = await make_harness(spec)
    secret = pattern(r"(?i)api[_-]?key\s*=")
    h.sandbox.not_in_diff(secret)
    assert (await h.result())[0].state == "matched"
    await h.sandbox.run("printf 'install: pip install .\\nAPI_KEY=abc123\\n' > NOTES.md; rm README.md")
    h.sandbox.not_in_diff(secret)
    result, evidence = (await h.result())
    assert result.state == "mismatched"
    assert "NOTES.md:2: API_KEY=abc123" in result.explanation
    assert "+API_KEY=abc123" in evidence
    h.sandbox.not_in_diff(includes("line two"))  # only deleted, never added
    assert (await h.result())[0].state == "matched"


async def test_not_in_diff_needs_a_match(make_harness, spec):
    h = await make_harness(spec)
    with pytest.raises(AuthoringError, match="text match"):
        h.sandbox.not_in_diff("api_key")  # type: ignore[arg-type]


async def test_large_diff_evidence_is_trimmed_with_a_marker_but_checked_whole(make_harness, spec):
    h = await make_harness(spec)
    await h.sandbox.run("i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done > big.txt;"
                        " echo 'token: api_key=zzz' >> big.txt")
    h.sandbox.not_in_diff(pattern("api_key="))
    result, evidence = (await h.result())
    assert result.state == "mismatched" and "big.txt:3001" in result.explanation
    assert len(evidence) < EVIDENCE_CHARS + 200
    assert "diff trimmed" in evidence and "api_key=zzz" not in evidence


async def test_file_changed_rejects_an_unknown_status(make_harness, spec):
    h = await make_harness(spec)
    with pytest.raises(AuthoringError, match="added, modified, deleted"):
        h.sandbox.file_changed("README.md", status="renamed")


def test_a_docker_test_skips_outside_ci_and_fails_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="needs Docker"):
        need_docker("niceeval-test/no-such-image")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI needs Docker"):
        need_docker("niceeval-test/no-such-image")


async def test_a_large_text_file_is_diffed_and_searched_whole(make_harness, spec):
    h = await make_harness(spec)
    await h.sandbox.run("head -c 3000000 /dev/zero | tr '\\0' a > big.txt; echo >> big.txt;"
                        " echo 'api_key=1' >> big.txt")
    assert h.sandbox.changed_paths() == [("big.txt", "added")]
    h.sandbox.file_changed("big.txt", status="added")
    result, evidence = (await h.result())
    assert result.state == "matched" and evidence.startswith("--- /dev/null\n+++ b/big.txt\n")
    h.sandbox.not_in_diff(pattern("api_key="))
    result, _ = (await h.result())
    assert result.state == "mismatched" and "big.txt:2: api_key=1" in result.explanation


def test_binary_content_is_compared_by_digest_and_never_kept():
    state = FileState.of(b"\x89PNG\0" + b"x" * 1000)
    assert state.binary and state.data is None and state.unread is None
    assert FileState.of(b"\x89PNG\0" + b"x" * 1000).digest == state.digest


async def test_text_past_the_snapshot_budget_is_compared_but_its_diff_is_unavailable(make_harness, spec, monkeypatch):
    monkeypatch.setattr(TextBudget.__init__, "__defaults__", (2_000,))
    h = await make_harness(spec)
    await h.sandbox.run("i=0; while [ $i -lt 300 ]; do echo line $i; i=$((i+1)); done > a.txt; cp a.txt b.txt;"
                        " echo TOKEN_9 >> b.txt")
    h.sandbox.file_changed("b.txt", status="added")
    assert (await h.result())[0].state == "matched"
    h.sandbox.not_in_diff(pattern("TOKEN_9"))
    result, evidence = await h.result()
    assert result.state == "unavailable" and result.reason == "diff-unavailable"
    assert "of text a snapshot keeps" in result.explanation and "not diffed" in evidence


async def test_assertions_registered_together_share_one_read_and_a_later_one_reads_again(make_harness, local_spec):
    """Issue 28: one read of the workspace for the assertions registered before it began (one `docker
    cp` out instead of one each); an assertion registered once it has begun reads the workspace anew,
    so a change made meanwhile (an agent's process still writing) is seen."""
    h = await make_harness(local_spec)
    reads: list[int] = []
    real = h.workspace.snapshot

    def counted(cancel=None):
        reads.append(1)
        return real(cancel)

    h.workspace.snapshot = counted
    (Path(h.workspace.workdir) / "README.md").write_text("changed\n")
    h.sandbox.file_changed("README.md", status="modified")
    h.sandbox.not_in_diff(includes("secret"))
    h.sandbox.no_changes(["src"])
    assert [(await h.result(i))[0].state for i in range(3)] == ["matched"] * 3
    assert len(reads) == 1
    (Path(h.workspace.workdir) / "src" / "new.py").write_text("x = 1\n")  # not through t.sandbox
    h.sandbox.file_changed("src/new.py", status="added")
    h.sandbox.no_changes(["src"])
    assert [(await h.result(i))[0].state for i in (3, 4)] == ["matched", "mismatched"]
    assert len(reads) == 2
