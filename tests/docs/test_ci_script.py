"""`.ci/run` (the README's test command) runs lint, types and tests, and fails on any of them,
including pytest's "no tests collected" (exit 5); it runs the tests with CI=true. Driven with a
stand-in `python` on PATH that logs each call and exits as told, so the real script runs in a
fraction of a second."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/bin/sh
echo "$*" >> "$CI_LOG"
case "$*" in
  *"-m ruff"*) exit "${RUFF_EXIT:-0}" ;;
  *"-m mypy"*) exit "${MYPY_EXIT:-0}" ;;
  *"-m pytest"*) echo "CI=$CI" >> "$CI_LOG.env"
                 tail -n +3 /proc/self/net/dev | cut -d: -f1 | tr -d " " > "$CI_LOG.net"  # its interfaces
                 exit "${PYTEST_EXIT:-0}" ;;
esac
exit 0
"""


def _run_ci(tmp_path: Path, ci: str | None = None, **exits: int) -> tuple[int, list[str]]:
    tree, bin_dir = tmp_path / "repo", tmp_path / "bin"
    (tree / ".ci").mkdir(parents=True)
    shutil.copy(REPO / ".ci" / "run", tree / ".ci" / "run")
    bin_dir.mkdir()
    (bin_dir / "python").write_text(FAKE_PYTHON)
    (bin_dir / "python").chmod(0o755)
    log = tmp_path / "calls.log"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "CI_LOG": str(log),
           **{f"{k.upper()}_EXIT": str(v) for k, v in exits.items()}}
    env.pop("CI", None)
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(["bash", str(tree / ".ci" / "run")], env=env, capture_output=True, text=True,
                          timeout=60)
    calls = log.read_text().splitlines() if log.exists() else []
    return done.returncode, [c.split()[1] if c.startswith("-m ") else c for c in calls]


def test_ci_installs_then_lints_type_checks_and_tests(tmp_path: Path) -> None:
    code, calls = _run_ci(tmp_path)
    assert code == 0
    assert calls == ["pip", "ruff", "mypy", "pytest"]


@pytest.mark.parametrize(("given", "seen"), [(None, "true"), ("true", "true"), ("false", "false")])
def test_ci_runs_the_tests_with_ci_true_unless_told_otherwise(tmp_path: Path, given: str | None, seen: str) -> None:
    """CI=true makes a test whose real component is missing fail instead of skip (tests/support/components.py)."""
    code, _calls = _run_ci(tmp_path, ci=given)
    assert code == 0
    assert (tmp_path / "calls.log.env").read_text().split() == [f"CI={seen}"]


@pytest.mark.parametrize(("failing", "ran"), [
    ({"ruff": 1}, ["pip", "ruff"]),
    ({"mypy": 1}, ["pip", "ruff", "mypy"]),
    ({"pytest": 1}, ["pip", "ruff", "mypy", "pytest"]),
    ({"pytest": 5}, ["pip", "ruff", "mypy", "pytest"]),
], ids=["lint", "types", "tests", "no-tests-collected"])
def test_ci_fails_when_any_step_fails(tmp_path: Path, failing: dict[str, int], ran: list[str]) -> None:
    code, calls = _run_ci(tmp_path, **failing)
    assert code != 0
    assert calls == ran


def _namespace_possible() -> bool:
    done = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, check=False) \
        if shutil.which("unshare") and shutil.which("ip") else None
    return done is not None and done.returncode == 0


def test_ci_runs_the_tests_where_only_loopback_exists(tmp_path: Path) -> None:
    """Everything the tests start binds and talks to loopback only: CI runs them in a network
    namespace of their own (Ray's servers bind every interface they find)."""
    if not _namespace_possible():
        pytest.skip("no network namespace here: `unshare -n` needs root, and `ip` (iproute2)")
    code, _calls = _run_ci(tmp_path)
    assert code == 0
    assert (tmp_path / "calls.log.net").read_text().split() == ["lo"]
