"""Sandbox tests: local workspaces always; docker ones only where a daemon and the test images are.

Outside CI a test that needs Docker is skipped with the reason; with CI=true it fails instead
(sandbox.md, "Tests and CI"). The images are built by `.ci/docker.sh` (never pulled).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli._states import EvalKind
from niceeval_cli.authoring import AdapterContext, ExperimentInfo, TestContext, UsageMeter
from niceeval_cli.authoring._sandbox_api import SandboxAPI
from niceeval_cli.sandbox import SandboxSpec, Workspace, kind_for, local_sandbox

SHELL_IMAGE = os.environ.get("NICEEVAL_TEST_SHELL_IMAGE", "niceeval-test/busybox")
PYTHON_IMAGE = os.environ.get("NICEEVAL_TEST_PYTHON_IMAGE", "niceeval-test/python")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a slow test (still runs by default)")
    config.addinivalue_line("markers", "docker: needs a Docker daemon and the locally built test images")


def _docker_problem(image: str) -> str | None:
    try:
        version = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"],
                                 capture_output=True, text=True, timeout=20, check=False)
    except FileNotFoundError:
        return "the docker CLI is not installed"
    except subprocess.TimeoutExpired:
        return "the Docker daemon did not answer within 20 s"
    if version.returncode != 0:
        return f"no Docker daemon answers ({version.stderr.strip()[:200]})"
    found = subprocess.run(["docker", "image", "inspect", image], capture_output=True, timeout=20, check=False)
    if found.returncode != 0:
        return f"the test image {image} is not built (run `bash .ci/docker.sh`)"
    return None


def need_docker(image: str = SHELL_IMAGE) -> None:
    """Skip (or, in CI, fail) unless Docker and `image` are usable."""
    problem = _docker_problem(image)
    if problem is None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI needs Docker for this test: {problem}")
    pytest.skip(f"needs Docker: {problem}")


@pytest.fixture
def docker_image() -> str:
    need_docker(SHELL_IMAGE)
    return SHELL_IMAGE


@pytest.fixture
def python_image() -> str:
    need_docker(PYTHON_IMAGE)
    return PYTHON_IMAGE


def niceeval_containers() -> list[str]:
    done = subprocess.run(["docker", "ps", "-aq", "--filter", "label=niceeval.sandbox"],
                          capture_output=True, text=True, timeout=30, check=False)
    return done.stdout.split()


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

    def result(self, index: int = -1) -> Any:
        reg = self.ctx._registrations[index]
        return reg.result, reg.evidence


MakeHarness = Callable[[SandboxSpec], Awaitable[Harness]]


@pytest.fixture
def make_harness() -> Iterator[MakeHarness]:
    made: list[Workspace] = []

    async def make(spec: SandboxSpec) -> Harness:
        resolved = spec.resolved()
        workspace = await kind_for(resolved).create(resolved, label=f"test-{os.getpid()}-{len(made)}-{time.time_ns()}")
        made.append(workspace)
        return Harness(workspace)

    yield make
    import asyncio

    async def teardown() -> None:
        for workspace in made:
            await workspace.teardown(keep=False)

    asyncio.run(teardown())


@pytest.fixture
def local_spec(template: Path) -> SandboxSpec:
    return local_sandbox(template=str(template))
