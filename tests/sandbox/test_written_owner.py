"""`t.sandbox.write_text` sets up a file for the agent (spec: "set up a file before sending"). In a
docker sandbox with `user=`, the agent runs as that user and the template is given to it; a file
the eval wrote — and the directories made for it — must be the agent's to edit too, whichever way
the write went in (with the next command, or with a change assertion's read). Real containers."""

from __future__ import annotations

from pathlib import Path

import pytest

from niceeval_cli.sandbox import docker_sandbox
from tests.sandbox.conftest import MakeWorkspace

pytestmark = pytest.mark.slow

EDIT = "echo fixed >> fixture/deep/bug.py && touch fixture/deep/new.txt && echo ok"


@pytest.mark.parametrize("carried_by", ["command", "snapshot"])
async def test_files_the_eval_writes_are_the_sandbox_users(
        docker_image: str, template: Path, make_workspace: MakeWorkspace, carried_by: str) -> None:
    workspace = await make_workspace(docker_sandbox(image=docker_image, template=str(template), user="1000"))
    await workspace.write_bytes("fixture/deep/bug.py", b"bug = 1\n")
    if carried_by == "snapshot":  # a change assertion's read carries the write in
        assert "fixture/deep/bug.py" in workspace.snapshot()
    edited = await workspace.run(["sh", "-c", EDIT])
    assert (edited.exit_code, edited.stdout.strip()) == (0, "ok"), edited
    owners = await workspace.run(["sh", "-c", "stat -c '%u %n' fixture fixture/deep fixture/deep/bug.py ."])
    assert owners.stdout.split("\n")[:3] == ["1000 fixture", "1000 fixture/deep", "1000 fixture/deep/bug.py"]
    assert await workspace.read_bytes("fixture/deep/bug.py") == b"bug = 1\nfixed\n"


async def test_without_user_written_files_stay_roots(
        docker_image: str, template: Path, make_workspace: MakeWorkspace) -> None:
    workspace = await make_workspace(docker_sandbox(image=docker_image, template=str(template)))
    await workspace.write_bytes("notes.txt", b"n\n")
    owner = await workspace.run(["stat", "-c", "%u", "notes.txt"])
    assert owner.stdout.strip() == "0"
