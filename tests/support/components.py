"""The real components some tests need, checked in one place: a Docker daemon (with the locally
built test images), Chromium driven by Playwright, Ray, the npm agent CLIs (`claude`, `codex`),
the `openssl` / `sqlite3` / `jq` commands, and a network namespace with an outward address.

A test that needs one calls its `need_…` function (or a fixture that does). When the component is
absent the test is skipped with a reason naming it and how to get it — a fresh machine that ran
`pip install -e '.[test]'` passes the suite. Under CI (`CI=true`) the same call FAILS the test
instead: `.ci/run` installs and starts every component, so a skip there would hide a test that
never ran. This is the only place that rule lives.

`NICEEVAL_TEST_ABSENT=docker,ray,…` makes the named components count as absent (the acceptance
test of the rule uses it; so can a developer who wants the quick suite).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest

SHELL_IMAGE = os.environ.get("NICEEVAL_TEST_SHELL_IMAGE", "niceeval-test/busybox")
PYTHON_IMAGE = os.environ.get("NICEEVAL_TEST_PYTHON_IMAGE", "niceeval-test/python")

# npm CLI command → the npm package that provides it (`.ci/run`'s install_npm_clis installs these).
NPM_CLIS = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex"}


def in_ci() -> bool:
    """True when CI=true (or 1 / yes): a missing component then fails its tests."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _forced_absent(key: str) -> bool:
    absent = os.environ.get("NICEEVAL_TEST_ABSENT", "")
    return key in {part.strip().lower() for part in absent.split(",")}


def missing(component: str, problem: str, fix: str) -> NoReturn:
    """Skip the test (or, under CI, fail it) because `component` is not usable: `problem`, `fix`."""
    reason = f"needs {component}: {problem} ({fix})"
    if in_ci():
        pytest.fail(f"CI needs {component} (CI=true: a real-component test may not skip; .ci/run installs "
                    f"every component): {problem} ({fix})", pytrace=False)
    pytest.skip(reason)


# ── Docker ───────────────────────────────────────────────────────────────────────────────────


#: The images found usable by this process: the answer is kept, since asking (`docker version`
#: and `docker image inspect`, ~0.05 s of CPU with the daemon's share) was paid again by every
#: docker test, ~150 in the suite. A daemon that goes away mid-run fails the later tests instead.
_DOCKER_USABLE: set[tuple[str, str]] = set()


def docker_problem(image: str) -> str | None:
    """Why Docker with `image` is not usable here, or None when it is."""
    if _forced_absent("docker"):
        return "forced absent by NICEEVAL_TEST_ABSENT"
    # A test may point PATH at a bin without docker, or DOCKER_HOST elsewhere: asked again then.
    key = (image, "\0".join(os.environ.get(name, "") for name in ("PATH", "DOCKER_HOST", "DOCKER_CONTEXT")))
    if key in _DOCKER_USABLE:
        return None
    problem = _ask_docker(image)
    if problem is None:
        _DOCKER_USABLE.add(key)
    return problem


def _ask_docker(image: str) -> str | None:
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
        return f"the test image {image} is not built"
    return None


def need_sqlite(version: tuple[int, int, int]) -> None:
    """Skip (or, in CI, fail) unless Python's SQLite library is at least `version`."""
    if sqlite3.sqlite_version_info < version:
        missing("SQLite", f"Python's sqlite3 library is {sqlite3.sqlite_version}, older than "
                f"{'.'.join(map(str, version))}", "use a Python built against a newer SQLite")


def need_docker(image: str = SHELL_IMAGE) -> None:
    """Skip (or, in CI, fail) unless a Docker daemon answers and `image` is built."""
    problem = docker_problem(image)
    if problem is not None:
        missing("Docker", problem, "start a Docker daemon and run `bash .ci/docker.sh` to build the test images")


# ── Chromium through Playwright ──────────────────────────────────────────────────────────────


def chromium_path() -> str | None:
    """Debian's chromium (or NICEEVAL_CHROMIUM), or None."""
    if _forced_absent("chromium"):
        return None
    for candidate in (os.environ.get("NICEEVAL_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def need_chromium() -> str:
    """The Chromium executable Playwright drives; skips (or fails in CI) without it or Playwright."""
    if _forced_absent("chromium") or importlib.util.find_spec("playwright") is None:
        missing("Chromium", "Playwright for Python is not installed", "pip install -e '.[test]'")
    executable = chromium_path()
    if executable is None:
        missing("Chromium", "no chromium executable found", "apt-get install chromium, or set NICEEVAL_CHROMIUM")
    return executable


# ── Ray ──────────────────────────────────────────────────────────────────────────────────────


#: The `[ray]` extra's floor (pyproject.toml `ray = ["ray>=2.9"]`).
RAY_FLOOR = "2.9"


def ray_problem() -> str | None:
    """Why Ray is not usable here, or None when it is. `import ray` costs ~0.3 s of CPU, paid by
    every pytest worker that asked, while no test runs Ray inside pytest's process (a cluster is
    `ray start` processes, a driver a `niceeval run` subprocess; the product's own check is a
    `find_spec` too): when the module found is the installed ray distribution's own, at least
    `RAY_FLOOR`, that is enough. Anything else (a `ray` found elsewhere on the path, no
    distribution metadata) is imported for real, and its import error is the reason."""
    if _forced_absent("ray"):
        return "forced absent by NICEEVAL_TEST_ABSENT"
    try:
        spec = importlib.util.find_spec("ray")
    except (ImportError, ValueError) as error:  # `sys.modules["ray"] = None`: a test hiding Ray
        return f"`import ray` failed ({error})"
    if spec is None:
        return "`import ray` failed (no module named 'ray')"
    try:
        dist = importlib.metadata.distribution("ray")
        own = spec.origin is not None and Path(spec.origin).resolve() == Path(
            str(dist.locate_file("ray/__init__.py"))).resolve()
    except importlib.metadata.PackageNotFoundError:
        own = False
    if not own:
        try:
            importlib.import_module("ray")
        except ImportError as error:
            return f"`import ray` failed ({error})"
        return None
    if _release(dist.version) < _release(RAY_FLOOR):
        return f"Ray {dist.version} is installed; the [ray] extra needs ray>={RAY_FLOOR}"
    return None


def _release(version: str) -> tuple[int, ...]:
    """The leading release numbers of a version ("2.60.0rc1" → (2, 60, 0)), enough to compare with a floor."""
    found = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(part) for part in found.group(0).split(".")) if found else ()


def need_ray() -> None:
    """Skip (or fail in CI) unless Ray is installed (`ray_problem`): `[test]` does not install it."""
    problem = ray_problem()
    if problem is not None:
        missing("Ray", problem, "pip install -e '.[ray]'")


# ── npm agent CLIs ───────────────────────────────────────────────────────────────────────────


def need_npm_cli(command: str) -> str:
    """The path of an npm agent CLI (`claude`, `codex`); skips (or fails in CI) without it."""
    found = None if _forced_absent(command) else shutil.which(command)
    if found is None:
        missing(f"the {command} CLI", f"`{command}` is not on PATH", f"npm install -g {NPM_CLIS[command]}")
    return found


# ── LiteLLM's proxy ──────────────────────────────────────────────────────────────────────────


def need_litellm() -> str:
    """The `litellm` proxy executable (NICEEVAL_LITELLM_BIN, set by `.ci/run`'s install_litellm, or
    on PATH); it lives in a venv of its own, never in the package's interpreter."""
    candidates = [os.environ.get("NICEEVAL_LITELLM_BIN"), "/tmp/litellm-venv/bin/litellm", shutil.which("litellm")]
    found = None if _forced_absent("litellm") else next(
        (c for c in candidates if c and Path(c).is_file() and os.access(c, os.X_OK)), None)
    if found is None:
        missing("LiteLLM's proxy", "no litellm executable (NICEEVAL_LITELLM_BIN unset)",
                "python -m venv /tmp/litellm-venv && /tmp/litellm-venv/bin/pip install 'litellm[proxy]', "
                "or run .ci/run")
    return found


# ── plain commands ───────────────────────────────────────────────────────────────────────────


def need_command(command: str, apt_package: str | None = None) -> str:
    """The path of a system command a test drives (openssl, sqlite3, jq); skips (or fails in CI) without it."""
    found = None if _forced_absent(command) else shutil.which(command)
    if found is None:
        missing(f"the {command} command", f"`{command}` is not on PATH", f"apt-get install {apt_package or command}")
    return found


# ── a network namespace with an outward address ──────────────────────────────────────────────

#: This machine's address inside `outward_namespace`: TEST-NET-1 (RFC 5737), routed back to the
#: namespace's own loopback, so nothing can leave it — yet to a program asking "which address
#: would I reach the world from" (Ray's node address) it is an outward, non-loopback one.
OUTWARD_ADDRESS = "192.0.2.77"
_OUTWARD_SETUP = (f"ip link set lo up && ip addr add {OUTWARD_ADDRESS}/32 dev lo && "
                  f"ip route add default dev lo src {OUTWARD_ADDRESS}")


def outward_namespace(argv: list[str]) -> list[str]:
    """`argv` run in a network namespace of its own whose machine has `OUTWARD_ADDRESS`: what a
    server binding "every interface" or "this machine's address" does on a laptop, seen even in
    CI's loopback-only namespace (root, `unshare` and `ip` needed: util-linux, iproute2)."""
    wrapped = ["unshare", "-n", "sh", "-c", _OUTWARD_SETUP + ' && exec "$@"', "sh"]
    if _forced_absent("netns") or shutil.which("unshare") is None or shutil.which("ip") is None:
        missing("a network namespace", "`unshare` or `ip` is not on PATH", "apt-get install util-linux iproute2")
    done = subprocess.run([*wrapped, "true"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        missing("a network namespace", f"`unshare -n` with an address on lo failed: {done.stderr.strip()[:200]}",
                "run the tests as root")
    return [*wrapped, *argv]
