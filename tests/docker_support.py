"""Docker for tests: the locally built test images, and skip-or-fail when Docker is missing.

Outside CI a test that needs Docker is skipped with the reason; with CI=true it fails instead
(sandbox.md, "Tests and CI"). The images are built by `.ci/docker.sh` (never pulled).
"""

from __future__ import annotations

import os
import subprocess

import pytest

SHELL_IMAGE = os.environ.get("NICEEVAL_TEST_SHELL_IMAGE", "niceeval-test/busybox")
PYTHON_IMAGE = os.environ.get("NICEEVAL_TEST_PYTHON_IMAGE", "niceeval-test/python")


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


def niceeval_containers() -> list[str]:
    """Every container NiceEval made (running or not), by its label."""
    done = subprocess.run(["docker", "ps", "-aq", "--filter", "label=niceeval.sandbox"],
                          capture_output=True, text=True, timeout=30, check=False)
    return done.stdout.split()


def processes_running(*argv: str) -> list[int]:
    """Pids (host-wide, containers included) whose command line is exactly `argv`."""
    from pathlib import Path

    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (entry / "cmdline").read_bytes() == wanted:
                found.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile
    return found
