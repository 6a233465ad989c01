"""Issue 22, item 3: a fresh machine passes. The README's second command installs `[test]` and runs
the suite: what the tests import is declared there, a test whose real component is absent (a
Docker daemon, Chromium, Ray, the npm agent CLIs, openssl, sqlite3) skips naming it, and with
CI=true the same test fails instead (`.ci/run` installs every component). Tests that look at
Docker see only their own containers: another process's container on the same daemon and image
does not fail them.

The README's two commands themselves, in a new venv on a fresh clone, are checked by hand before
a release (docs/contributing.md); they take minutes."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import secrets
import socket
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path

import pytest

from tests.support.components import SHELL_IMAGE, need_docker
from tests.support.project import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TESTS = REPO / "tests"


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    """The distributions `pip install -e '.[test]'` installs by name: the dependencies and `[test]`."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return {_normalise(re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0]) for req in requirements}


@cache
def _test_nodes() -> tuple[tuple[Path, tuple[ast.AST, ...]], ...]:
    """Each file of tests/ with its import statements and its calls of a function named like a skip
    (the last part of its name `skip`, `importorskip`, `skipif` or `xfail`): tests/ parsed and
    walked once per process for both checks below (each parsing it again cost ~1 s of CPU)."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        nodes = tuple(node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                      if isinstance(node, (ast.Import, ast.ImportFrom))
                      or (isinstance(node, ast.Call) and _last_name(node.func) in _SKIP_NAMES))
        found.append((path, nodes))
    return tuple(found)


_SKIP_NAMES = {"skip", "importorskip", "skipif", "xfail"}


def _last_name(func: ast.expr) -> str | None:
    """`pytest.mark.skipif` → `skipif`, `skip` → `skip`; None for a call of anything else (`f()()`)."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _imported_top_level_names() -> dict[str, str]:
    """Every absolute import in tests/ (functions included) → one file that imports it."""
    found: dict[str, str] = {}
    for path, nodes in _test_nodes():
        for node in nodes:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    return found


#: Under `-n`, the two checks reading every test file share one worker (one parse of tests/).
_one_parse = pytest.mark.xdist_group("tests_ast")


@_one_parse
def test_every_module_the_tests_import_is_declared_in_the_test_extras() -> None:
    helpers = {"tests"} | {path.stem for path in TESTS.rglob("*.py")}  # tests.support…, the projects' own modules
    distributions = importlib.metadata.packages_distributions()
    declared = _declared()
    undeclared = {}
    for name, where in _imported_top_level_names().items():
        if name in sys.stdlib_module_names or name in helpers or name == "niceeval_cli":
            continue
        owners = {_normalise(dist) for dist in distributions.get(name, [name])}
        if not owners & declared:
            undeclared[name] = where
    assert undeclared == {}, f"imported by the tests but not declared in [test] or the dependencies: {undeclared}"


def test_the_test_extras_carry_the_runner_helpers_and_leave_ray_to_its_own_extra() -> None:
    declared = _declared()
    assert {"pytest", "pytest-asyncio", "pytest-xdist", "hypothesis", "playwright", "mypy", "ruff"} <= declared
    assert "ray" not in declared  # a Ray test skips without it (see below); CI installs [ray]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.split("```bash\n", 1)[1].startswith(
        "pip install -e . && niceeval run\npip install -e '.[test]' && python -m pytest -q")
    contributing = " ".join((REPO / "docs" / "contributing.md").read_text(encoding="utf-8").split())
    assert "[test]" in contributing and "pip install -e '.[ray]'" in contributing


_COMPONENT_WORDS = re.compile(r"(?i)docker|chromium|playwright|\bray\b|claude|codex|\bnpm\b|openssl|sqlite3")


@_one_parse
def test_only_tests_components_decides_that_a_real_component_is_missing() -> None:
    """A skip of its own (`pytest.skip`, `importorskip`, `mark.skipif`) about a real component would
    skip in CI too: every such decision goes through tests/support/components.py, which fails under CI."""
    offenders = []
    for path, nodes in _test_nodes():
        if path == TESTS / "support" / "components.py":
            continue
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            if name.endswith(("pytest.skip", "importorskip", "mark.skipif", "pytest.xfail")) or name == "skip":
                text = ast.unparse(node)
                if _COMPONENT_WORDS.search(text):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: {text[:120]}")
    assert offenders == []


# ── absent components: skip with the reason, fail under CI ──────────────────────────────────

NEEDS = textwrap.dedent("""
    import sys
    from tests.support.components import need_chromium, need_command, need_docker, need_npm_cli, need_ray

    def test_docker():
        need_docker()

    def test_chromium():
        need_chromium()

    def test_ray():
        need_ray()

    def test_claude():
        need_npm_cli("claude")

    def test_codex():
        need_npm_cli("codex")

    def test_sqlite3():
        need_command("sqlite3")
""")

REASONS = {
    "test_docker": "needs Docker",
    "test_chromium": "needs Chromium",
    "test_ray": "needs Ray",
    "test_claude": "needs the claude CLI",
    "test_codex": "needs the codex CLI",
    "test_sqlite3": "needs the sqlite3 command",
}


def _pytest(args: list[str], cwd: Path, **env: str | None) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    environment["PYTHONPATH"] = str(REPO)  # tests.support.components
    environment["COLUMNS"] = "1000"  # whole reasons on the verbose lines
    for key, value in env.items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    # Only the plugins the suite's configuration needs (xdist for addopts' `--dist`, pytest-asyncio
    # for `asyncio_mode`): what skips or fails here is decided by tests/support/components.py, not
    # by a plugin, and the others installed (hypothesis's, anyio's with trio, pytest-benchmark,
    # langsmith's) cost each inner run ~0.5 s of CPU to import.
    environment["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-p", "pytest_asyncio.plugin",
                           "-p", "no:cacheprovider", "-rsf", "-v", *args],
                          cwd=cwd, env=environment, capture_output=True, text=True, timeout=600)


def _outcomes(output: str) -> dict[str, str]:
    """test name → its outcome and message: `SKIPPED (needs Ray: …)` from the verbose line, or
    `FAILED - Failed: CI needs Ray …` from the short summary (`-rf`)."""
    lines = {}
    for line in output.splitlines():
        verbose = re.match(r"\S*::(test_\w+) (SKIPPED|PASSED|ERROR)\b(.*)", line)
        summary = re.match(r"(FAILED|ERROR) \S*::(test_\w+)(.*)", line)
        if verbose and verbose.group(1) in REASONS:
            lines[verbose.group(1)] = f"{verbose.group(2)}{verbose.group(3)}"
        elif summary and summary.group(2) in REASONS:
            lines[summary.group(2)] = f"{summary.group(1)}{summary.group(3)}"
    return lines


def _summary(output: str) -> str:
    """The short test summary (`-rsf`) and the counts line."""
    return output.split("short test summary info", 1)[-1]


def _generated(tmp_path: Path) -> Path:
    (tmp_path / "test_needs.py").write_text(NEEDS, encoding="utf-8")
    return tmp_path


@pytest.mark.slow
def test_a_component_that_is_really_absent_skips_with_its_name(tmp_path: Path) -> None:
    """No docker, claude, codex or sqlite3 on PATH, `import ray` failing: each test skips saying what it needs."""
    folder = _generated(tmp_path)
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    (empty_bin / "python").symlink_to(sys.executable)
    done = _pytest(["test_needs.py", "-k", "not chromium"], folder, CI=None, PATH=str(empty_bin),
                   PYTHONPATH=_without_ray(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    outcomes = _outcomes(done.stdout)
    for name, reason in REASONS.items():
        if name == "test_chromium":
            continue
        assert name in outcomes and outcomes[name].startswith("SKIPPED") and reason in outcomes[name], done.stdout
    assert "the docker CLI is not installed" in outcomes["test_docker"]
    assert "npm install -g @anthropic-ai/claude-code" in outcomes["test_claude"]
    assert "ray is not installed on this machine" in outcomes["test_ray"]


@pytest.mark.slow
def test_every_absent_component_skips_outside_ci_and_fails_under_ci(tmp_path: Path) -> None:
    folder = _generated(tmp_path)
    absent = "docker,chromium,ray,claude,codex,sqlite3"
    outside = _pytest(["test_needs.py"], folder, CI=None, NICEEVAL_TEST_ABSENT=absent)
    assert outside.returncode == 0, outside.stdout + outside.stderr
    assert "6 skipped" in outside.stdout
    for name, line in _outcomes(outside.stdout).items():
        assert line.startswith("SKIPPED") and REASONS[name] in line, line
    inside = _pytest(["test_needs.py"], folder, CI="true", NICEEVAL_TEST_ABSENT=absent)
    assert inside.returncode == 1, inside.stdout + inside.stderr
    assert "6 failed" in inside.stdout and "skipped" not in inside.stdout
    failed = _outcomes(inside.stdout)
    assert set(failed) == set(REASONS)
    for name, line in failed.items():
        assert line.startswith("FAILED") and "CI needs " + REASONS[name].removeprefix("needs ") in line, line


def _without_ray(tmp_path: Path) -> str:
    """A PYTHONPATH on which `import ray` fails, as on a machine that ran only `pip install -e '.[test]'`."""
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('ray is not installed on this machine')\n")
    return os.pathsep.join([str(tmp_path / "shadow"), str(REPO)])


@pytest.mark.slow
def test_the_ray_tests_skip_without_ray_and_fail_under_ci(tmp_path: Path) -> None:
    """What a fresh machine hit: the Ray tests errored because `[test]` has no Ray. Now they skip."""
    ray_tests = ["tests/scale/test_ray.py", "tests/scale/test_ray_local.py"]
    outside = _pytest(ray_tests, REPO, CI=None, PYTHONPATH=_without_ray(tmp_path))
    assert outside.returncode == 0, outside.stdout[-3000:]
    summary = _summary(outside.stdout)
    skipped = [line for line in summary.splitlines() if line.startswith("SKIPPED")]
    assert skipped and all("needs Ray" in line and "pip install -e '.[ray]'" in line for line in skipped), summary
    counted = re.search(r"\b(\d+) skipped\b", summary)
    assert counted and int(counted.group(1)) >= 6, summary
    assert not re.search(r"\b\d+ (failed|errors?)\b", summary), summary
    inside = _pytest(ray_tests, REPO, CI="true", PYTHONPATH=_without_ray(tmp_path / "again"))
    assert inside.returncode == 1 and "CI needs Ray" in inside.stdout, inside.stdout[-3000:]
    assert not re.search(r"\b\d+ skipped\b", _summary(inside.stdout))


# ── shared state: only what a test made ─────────────────────────────────────────────────────


@pytest.mark.slow
def test_docker_tests_pass_beside_another_process_niceeval_container() -> None:
    """Another process's NiceEval container (same image, same labels, in use) on the daemon while
    the docker sandbox tests that read the daemon's containers run: they pass, and leave it alone.
    Those three cover every way a test looks (`sandbox list` and `prune`, containers by store and
    by owner); the other docker tests look through the same helpers."""
    need_docker(SHELL_IMAGE)
    name = f"niceeval-other-process-{secrets.token_hex(6)}"
    owner = subprocess.Popen(["sleep", "3600"])  # the "other process" that owns the container: alive
    label = "niceeval.sandbox"
    try:
        started = subprocess.run(
            ["docker", "run", "-d", "--name", name, f"--label={label}={name}", f"--label={label}.owner={owner.pid}",
             f"--label={label}.host={socket.gethostname()}", f"--label={label}.run=another-run",
             "--network", "none", "--entrypoint", "sh", SHELL_IMAGE, "-c", "sleep 3600"],
            capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        done = _pytest(["tests/sandbox/test_keep_and_interrupt.py", "-k", "docker"], REPO, CI="true")
        assert done.returncode == 0, done.stdout[-4000:]
        assert re.search(r"\b\d+ passed\b", done.stdout) and not re.search(r"\b\d+ skipped\b", done.stdout)
        still = subprocess.run(["docker", "ps", "-q", "--filter", f"name=^/{name}$"], capture_output=True, text=True)
        assert still.stdout.strip(), "a test removed another process's container"
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=120)
        owner.kill()
        owner.wait()
