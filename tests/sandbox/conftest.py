"""Sandbox tests: local workspaces always; docker ones only where a daemon and the test images are.

Docker helpers live in tests/support/docker.py (skip outside CI, fail inside).
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli._states import EvalKind
from niceeval_cli.authoring import AdapterContext, ExperimentInfo, TestContext, UsageMeter
from niceeval_cli.authoring._sandbox_api import SandboxAPI
from niceeval_cli.sandbox import SandboxSpec, Workspace, kind_for, local_sandbox
from tests.support.docker import PYTHON_IMAGE, SHELL_IMAGE, need_docker


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a slow test (still runs by default)")
    config.addinivalue_line("markers", "docker: needs a Docker daemon and the locally built test images")


@pytest.fixture(autouse=True)
def own_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Local workspaces are made (and listed, and pruned) in this test's own temporary folder."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def docker_image() -> str:
    need_docker(SHELL_IMAGE)
    return SHELL_IMAGE


@pytest.fixture
def python_image() -> str:
    need_docker(PYTHON_IMAGE)
    return PYTHON_IMAGE


@pytest.fixture
def template(tmp_path: Path) -> Path:
    """A tiny repository: a text file, a nested file, a binary file."""
    root = tmp_path / "template"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# demo\nline two\n")
    (root / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "logo.bin").write_bytes(b"\x89PNG\0\1\2")
    return root


class Harness:
    """A live workspace plus a real test context whose `t.sandbox` is wired to it."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        usage = UsageMeter()
        experiment = ExperimentInfo(id="default")
        self.ctx = TestContext(
            kind=EvalKind.PASS, eval_file=None, experiment=experiment, adapter=None,
            adapter_ctx=AdapterContext("e", 0, experiment, None, usage), facts=None, usage=usage,
            judge_declared=False, schedule_judge=None, started=time.monotonic(),
        )
        self.sandbox = SandboxAPI(workspace, workspace.snapshot(), self.ctx._register)

    async def result(self, index: int = -1) -> Any:
        """The entry's result and evidence once its workspace read (in a worker thread) settled."""
        reg = self.ctx._registrations[index]
        if reg.pending is not None:
            await reg.pending
        return reg.result, reg.evidence


MakeWorkspace = Callable[[SandboxSpec], Awaitable[Workspace]]
MakeHarness = Callable[[SandboxSpec], Awaitable[Harness]]


@pytest.fixture
def make_workspace() -> Iterator[MakeWorkspace]:
    """Workspaces of `spec` (created, the template in), each removed when the test ends."""
    made: list[Workspace] = []

    async def make(spec: SandboxSpec) -> Workspace:
        resolved = spec.resolved()
        workspace = await kind_for(resolved).create(resolved, label=f"test-{os.getpid()}-{len(made)}-{time.time_ns()}")
        made.append(workspace)
        return workspace

    yield make
    import asyncio

    async def teardown() -> None:
        for workspace in made:
            await workspace.teardown(keep=False)

    asyncio.run(teardown())


@pytest.fixture
def make_harness(make_workspace: MakeWorkspace) -> MakeHarness:
    async def make(spec: SandboxSpec) -> Harness:
        return Harness(await make_workspace(spec))

    return make


@pytest.fixture
def local_spec(template: Path) -> SandboxSpec:
    return local_sandbox(template=str(template))
