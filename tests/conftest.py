"""Shared pytest fixtures. Each helper appends its own fixtures below; keep sections separate."""

from __future__ import annotations

import compileall
import gc
import os
import signal
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.loopback import JudgeServer
from tests.support.made_once import MadeOnce
from tests.support.project import Project, module_is_under

# Property tests check values, not speed: on a loaded machine (xdist workers beside real niceeval
# subprocesses, Docker and Ray) an example may take longer than hypothesis's 200 ms deadline, which
# failed a correct test now and then. No deadline, here and in CI.
settings.register_profile("niceeval", deadline=None)
settings.load_profile("niceeval")

# --- the cyclic garbage collector of a pytest process ---------------------------------------------
# A worker holds a large heap for its whole life (every test module collected, the package, scipy,
# the libraries the tests import), and each full collection walks all of it: in a run of ~2 000
# tests, 25 of them cost ~8 s of the worker's ~69 s of CPU (benchmarks/README.md, "Ray, Docker and
# per-worker costs"). Collections of the youngest generation every 7 000 allocations instead of 700
# (a tenth of them, each bigger) leave the objects a test makes time to die by reference count
# before any collection looks at them, so fewer reach the old generation and it is collected less
# often; `pytest_collection_finish` takes what collection made out of the collector's sight. Garbage
# is still collected (pytest's own end-of-session collections included); only the rhythm changes.
gc.set_threshold(7000, 10, 10)

# --- Ctrl-C in the processes the tests start ------------------------------------------------------
# A suite started with Ctrl-C ignored (a script's background job: `pytest … &` in a non-interactive
# shell) hands that to every `niceeval` it starts, and a `niceeval` keeps an inherited "ignore"
# (docs/cli.md): the tests that send it SIGINT would see nothing happen. The suite's processes start
# as from a terminal instead; the one check of the inherited "ignore" sets it up itself.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# --- bytecode: the package compiled once, before any test starts a `niceeval` ------------------


def pytest_configure(config: pytest.Config) -> None:
    """Write the package's bytecode once, as an installed wheel ships it. This machine (and so CI)
    sets PYTHONDONTWRITEBYTECODE, and every `niceeval` subprocess gets it too (tests/support/project.py
    keeps projects free of `__pycache__`), so a checkout without bytecode had each of the suite's
    thousands of subprocesses compile the whole package again: about 0.3 s of CPU apiece, a third
    of its start-up. Python still reads bytecode under that variable; stale files are rewritten here.
    Only the controller compiles (before xdist starts its workers); `__pycache__` is git-ignored."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "niceeval_cli"), quiet=1)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, None, None]:
    """Let pytest keep its assertion-rewritten test modules while it collects: under
    PYTHONDONTWRITEBYTECODE each worker rewrote and compiled all ~300 test files again on every
    run (about 15 s of CPU per worker). Tests themselves still run with bytecode writing off, so
    no project a test builds gains a `__pycache__`."""
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = before


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (the test modules, their functions and items: ~0.4 million objects in a
    worker) lives until the process ends: `gc.freeze` moves it out of the collector's generations, so
    no full collection walks it again (each one of a worker's dozens did)."""
    gc.freeze()


# --- judge: the loopback OpenAI-compatible server (tests/support/loopback.py) -------------------


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    """A running loopback judge endpoint (`.base_url`, `.default`, `.enqueue`, `.requests`)."""
    server = JudgeServer().start()
    try:
        yield server
    finally:
        server.stop()


# --- projects: a throwaway NiceEval project driven through the CLI in process (tests/support/project.py)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    """An empty project folder; write evals/niceeval.toml into it and call `.run()` / `.query()`.

    The CLI runs in-process, so afterwards the project's root leaves sys.path and the modules
    imported from it are forgotten: a later test's `app.py` is never served from this one's cache.
    """
    proj = Project(tmp_path / "proj", in_process=True)
    yield proj
    proj.forget()


# --- hermetic: a throwaway project's modules die with the test that imported them ---------------
@pytest.fixture(autouse=True)
def _forget_throwaway_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A test that imports a throwaway project's modules in this worker (discovery called directly,
    the in-process CLI) would leave them in `sys.modules` for the next test on the worker — whose own
    `helpers` module is then served from that cache (`No module named 'helpers.checks'`). After each
    test, the modules it imported from pytest's temporary folders (where every test's `tmp_path`
    lies — never this checkout, wherever it is cloned), and those folders it put on `sys.path`, are
    forgotten, as a new process would never have known them."""
    modules, path = set(sys.modules), list(sys.path)
    yield
    temporary = str(tmp_path_factory.getbasetemp().resolve())
    for name in [name for name in list(sys.modules) if name not in modules
                 and module_is_under(sys.modules[name], temporary)]:
        sys.modules.pop(name, None)
    sys.path[:] = [entry for entry in sys.path if entry in path or not entry.startswith(temporary)]


# --- hermetic: no test may reach a real judge with a developer's or CI's key ----------------------
@pytest.fixture(autouse=True)
def _no_real_judge_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LOCAL_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


# --- xdist: the tests that share a module- or package-scoped fixture run on one worker ----------
@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `-n` with `--dist loadgroup` (README, .ci/run), a test that uses a module- or
    package-scoped fixture of ours (a Ray cluster, a project with two sealed runs, a browser) joins
    the group named after where that fixture is defined, so the fixture is built once instead of
    once per worker; every other test is spread freely. Without xdist the marker means nothing."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)  # pytest's own record of the test's fixtures
        if info is None:
            continue
        for name in info.names_closure:
            defs = info.name2fixturedefs.get(name) or ()
            if defs and defs[-1].scope in ("module", "package") and defs[-1].baseid.startswith("tests"):
                item.add_marker(pytest.mark.xdist_group(defs[-1].baseid))
                break
    _slow_folders_first(items)


#: The groups that hold a worker longest, handed out first: their tests run one after another on
#: one worker (the acceptance checks sharing a Ray cluster ~150 s, tests/scale/test_ray.py's
#: cluster ~80 s, in CI's `--durations`).
LONGEST_GROUPS = ("tests/acceptance::ray_cluster", "tests/scale/test_ray.py")


def _slow_folders_first(items: list[pytest.Item]) -> None:
    """The longest groups first (`LONGEST_GROUPS`), then the folders holding `slow` tests, then
    everything else — each in its usual order, so a package- or module-scoped fixture is still
    built once. xdist hands out work (a group whole, any other test alone) in collection order as
    workers free up: the acceptance checks on Ray handed out midway kept their worker busy after
    the others had run out of work, and alphabetically the Docker and Ray folders (`sandbox`,
    `scale`) came near the end. The long ones first; the many quick ones (`expect`, `outcomes`,
    `store`, …) fill in at the end."""
    def folder(item: pytest.Item) -> str:
        parts = item.nodeid.split("/")
        return parts[1] if len(parts) > 2 else item.nodeid.split("::")[0]

    def rank(item: pytest.Item) -> int:
        marker = item.get_closest_marker("xdist_group")
        name = None if marker is None else (marker.args[0] if marker.args else marker.kwargs.get("name"))
        return LONGEST_GROUPS.index(name) if name in LONGEST_GROUPS else len(LONGEST_GROUPS)

    slow = {folder(item) for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: (rank(item), folder(item) not in slow))  # stable: the order within stays


# --- made once: a sealed run many tests start from, made once per worker and copied -----------
@pytest.fixture(scope="session")
def made_once(tmp_path_factory: pytest.TempPathFactory) -> MadeOnce:
    """`made_once.place(project, files, ("run",), ...)` (tests/support/made_once.py)."""
    return MadeOnce(tmp_path_factory)


# --- xdist: `-n auto` starts three workers on two cores ------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (README, .ci/run) starts one and a half workers per core (three on two cores, at
    least two). Part of the suite's wall time is waiting the CPU count does not see — Ray clusters
    starting, Docker creating containers, Chromium, sleeps that are the behaviour under test — and
    with one worker per core a core idles through it; but every worker also pays its own
    collection, session fixtures and imports, and the suite is CPU-bound: on the 2-core CI machine
    three workers finished sooner than four (benchmarks/README.md, session 7). The suite passes at
    any density (tests bind port 0, label what they make, work in their own folders: "Tests in
    parallel" in docs/contributing.md).
    `PYTEST_XDIST_AUTO_NUM_WORKERS` still decides when set (xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, (3 * cores + 1) // 2)
