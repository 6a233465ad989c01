"""Modes an agent leaves on its folders, as an ordinary user (the one most people run NiceEval as):
a folder it cannot list hid its files from the change assertions, and one it cannot write kept
the workspace after the run (Go's module cache makes its folders read-only). Root reads and
removes everything, so when the suite runs as root the scenario runs in a forked child that
became an ordinary user (nobody) — the same code, the real workspace, real `sh` commands."""

from __future__ import annotations

import asyncio
import concurrent.futures.thread  # noqa: F401  (imported before the child can no longer read the library)
import os
import pickle
import shutil
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from niceeval_cli.expect import includes
from niceeval_cli.sandbox import kind_for, local_sandbox
from tests.sandbox.conftest import Harness

NOBODY = 65534
AGENT = ("mkdir -p hide mod/pkg && echo api_key=1 > hide/s.txt && chmod 000 hide "
         "&& echo 'module x' > mod/pkg/go.mod && chmod 555 mod/pkg mod")


def _as_ordinary_user(scenario: Callable[[], Any]) -> Any:
    """`scenario()` in a forked child that is an ordinary user, its result sent back pickled."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            outcome: tuple[str, Any] = ("ok", scenario())
        except BaseException:
            outcome = ("error", traceback.format_exc())
        with os.fdopen(write, "wb") as out:
            pickle.dump(outcome, out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as source:
        data = source.read()
    os.waitpid(pid, 0)
    status, value = pickle.loads(data)
    assert status == "ok", value
    return value


def test_folders_an_agent_closed_are_neither_unchanged_nor_left_behind():
    base = tempfile.mkdtemp(prefix="niceeval-test-modes-", dir="/tmp")
    os.chmod(base, 0o777)  # the child, an ordinary user, makes its workspaces here

    def scenario() -> dict[str, Any]:
        tempfile.tempdir = base

        async def attempt() -> dict[str, Any]:
            spec = local_sandbox().resolved()
            workspace = await kind_for(spec).create(spec, label=f"modes-{os.getpid()}")
            h = Harness(workspace)
            done = await h.sandbox.run(AGENT)
            assert done.exit_code == 0, done
            h.sandbox.not_in_diff(includes("api_key"))
            secret, _ = await h.result()
            h.sandbox.no_changes()
            nothing, _ = await h.result()
            root = Path(workspace.workdir).parent
            await workspace.teardown(keep=False)
            return {"secret": secret.state.value, "nothing": nothing.state.value, "why": secret.explanation,
                    "left": os.path.lexists(root)}

        return asyncio.run(attempt())

    try:
        seen = _as_ordinary_user(scenario)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    # the secret sits in a folder the read could not list: unknown, never "no added line matches"
    assert seen["secret"] == "unavailable" and "hide" in seen["why"], seen
    assert seen["nothing"] == "mismatched", seen
    assert seen["left"] is False, seen  # the read-only folders went with the workspace


def test_files_in_a_folder_an_agent_closed_are_unknown_never_deleted(tmp_path: Path):
    """The template's `hide/old.txt` sits in a folder the agent then closed (`chmod 000`). The read
    could not list it, so whether `old.txt` is still there is unknown: `file_changed(..., "deleted")`
    matched, and `changed_paths()` said it was deleted."""
    base = tempfile.mkdtemp(prefix="niceeval-test-modes-", dir="/tmp")
    os.chmod(base, 0o777)
    template = Path(base) / "template"
    (template / "hide").mkdir(parents=True)
    (template / "hide" / "old.txt").write_text("kept\n")
    (template / "README.md").write_text("# demo\n")
    for path in (template, template / "hide"):
        os.chmod(path, 0o777)
    for path in (template / "hide" / "old.txt", template / "README.md"):
        os.chmod(path, 0o666)

    def scenario() -> dict[str, Any]:
        tempfile.tempdir = base

        async def attempt() -> dict[str, Any]:
            spec = local_sandbox(template=str(template)).resolved()
            workspace = await kind_for(spec).create(spec, label=f"closed-{os.getpid()}")
            h = Harness(workspace)
            assert (await h.sandbox.run("chmod 000 hide")).exit_code == 0
            seen: dict[str, Any] = {"paths": h.sandbox.changed_paths()}
            checks = {"deleted": lambda: h.sandbox.file_changed("hide/old.txt", status="deleted"),
                      "changed": lambda: h.sandbox.file_changed("hide/old.txt"),
                      "anything deleted": lambda: h.sandbox.file_changed(".", status="deleted"),
                      "folder": lambda: h.sandbox.file_changed("hide", status="modified"),
                      "readme": lambda: h.sandbox.no_changes("README.md")}
            for name, check in checks.items():
                check()
                result, _ = await h.result()
                seen[name] = (result.state.value, result.explanation)
            await h.sandbox.run("chmod 700 hide")
            await workspace.teardown(keep=False)
            return seen

        return asyncio.run(attempt())

    try:
        seen = _as_ordinary_user(scenario)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert seen["paths"] == [("hide", "modified")], seen
    for name in ("deleted", "changed", "anything deleted"):
        state, why = seen[name]
        assert state == "unavailable" and "hide" in why and "could not be listed" in why, (name, seen)
    assert seen["folder"][0] == "matched", seen  # the folder did change: it cannot be listed now
    assert seen["readme"][0] == "matched", seen  # elsewhere, what is known still decides
