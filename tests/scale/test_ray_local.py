"""`--executor ray` without an address: the driver starts a single-node Ray (`ray.init()`), runs
the attempts there with the same results as in-process, listening on loopback only, and leaves no
Ray process behind; without Ray installed it is a usage error naming the install command; `[run]`
in niceeval.toml selects it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.components import OUTWARD_ADDRESS, need_ray, outward_namespace
from tests.support.project import Project
from tests.support.ray_cluster import is_loopback, listening_sockets, processes_naming, ray_env
from tests.support.scale_project import TOML, comparable, eval_source


def _raylets(marker: str) -> set[int]:
    """The raylets whose command line names `marker` (this test's own Ray temp dir): another test
    run, or a developer's Ray, may have raylets on this machine at the same time."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"raylet" in cmdline and marker.encode() in cmdline:
                found.add(int(entry.name))
    return found


@pytest.fixture
def ray_tmp() -> Iterator[str]:
    """A short folder of the test's own for RAY_TMPDIR, where Ray puts its session (and every
    process's --session_dir; Ray's socket paths have a length limit); removed after, pass or fail."""
    folder = tempfile.mkdtemp(prefix="nrl", dir="/tmp")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _rows(root: Path, env: dict[str, str], target: str, store: str) -> list[dict]:
    """The stored rows, read by `niceeval query` in process (reading a store is no Ray's business)."""
    return Project(root, in_process=True).query(target, "--store", store)


@pytest.mark.slow
def test_a_local_single_node_ray_gives_in_process_results_on_loopback_only_and_stops(tmp_path, ray_tmp):
    need_ray()
    (tmp_path / "niceeval.toml").write_text(TOML + '\n[run]\nexecutor = "ray"\n')
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "many.py").write_text(eval_source())
    own = ray_tmp
    env = {**ray_env(), "RAY_TMPDIR": own}
    errors = tmp_path / "stderr.txt"  # a file, not a pipe: nobody reads it while the run lasts
    # The run in a network namespace where this machine has an outward address (as a laptop has;
    # CI's namespace has loopback alone, where Ray binds loopback whatever it is told).
    argv = outward_namespace([sys.executable, "-m", "niceeval_cli", "run", "--store", "ray.db"])
    with errors.open("w") as sink:
        driver = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=sink)
    # Every socket the run's Ray processes listen on, looked at every 0.1 s while the run lasts:
    # on loopback only (0.0.0.0 or ::, every interface, is not; nor OUTWARD_ADDRESS).
    listening: set[tuple[str, str, int]] = set()
    deadline = time.monotonic() + 300
    while driver.poll() is None and time.monotonic() < deadline:
        listening |= listening_sockets(processes_naming(own, [driver.pid]), driver.pid)
        time.sleep(0.1)
    if driver.poll() is None:
        driver.kill()
    driver.wait()
    stderr = errors.read_text()
    # the reference: an in-process run, nothing about its process compared (run in process)
    local = Project(tmp_path, in_process=True).run("--store", "local.db", "--executor", "inprocess")
    assert driver.returncode == local.returncode == 1, stderr
    names = {name for name, _, _ in listening}
    assert {"gcs_server", "raylet"} <= names, f"the run's Ray was not seen listening: {sorted(listening)}"
    wide = sorted(item for item in listening if not is_loopback(item[1]))
    assert not wide, f"the local Ray the run started listens beyond loopback: {wide}"
    assert _rows(tmp_path, env, "runs", "ray.db")[0]["executor"] == "ray"
    for target in ("attempts", "assertions"):
        ray_rows, local_rows = (_rows(tmp_path, env, target, store) for store in ("ray.db", "local.db"))
        assert comparable(ray_rows) == comparable(local_rows)
    assert list(Path(own).glob("ray/session_*")), "Ray did not use RAY_TMPDIR: the check below would see nothing"
    deadline = time.monotonic() + 20
    while _raylets(own) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _raylets(own), "the local Ray the run started is still running"


def test_a_run_whose_evals_imported_ray_first_refuses_to_start_a_ray_listening_beyond_loopback(tmp_path, ray_tmp):
    """Ray reads its loopback switch when imported: an eval module importing Ray, discovered
    before the executor starts, makes it too late, and the run says so (exit 3) instead of
    starting a Ray open to the network (in a namespace where this machine has an outward address)."""
    need_ray()
    env = ray_env()
    asking = [sys.executable, "-c", "import ray; print(ray.util.get_node_ip_address())"]
    outward = subprocess.run(outward_namespace(asking), env=env, capture_output=True, text=True, timeout=120)
    assert outward.returncode == 0, outward.stderr
    assert outward.stdout.strip() == OUTWARD_ADDRESS
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "uses_ray.py").write_text(
        "import ray  # noqa: F401\nfrom niceeval_cli import define_eval\n\n@define_eval()\ndef one(t):\n    pass\n")
    run = subprocess.run(outward_namespace([sys.executable, "-m", "niceeval_cli", "run", "--executor", "ray"]),
                         cwd=tmp_path, env={**env, "RAY_TMPDIR": ray_tmp}, capture_output=True, text=True, timeout=120)
    assert run.returncode == 3, run.stderr
    assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0" in run.stderr and "--ray-address" in run.stderr
    assert outward.stdout.strip() in run.stderr
    assert not list(Path(ray_tmp).glob("ray/session_*")), "a Ray was started"


def test_without_ray_installed_executor_ray_exits_2_with_the_install_command(project, monkeypatch):
    project.write("evals/one.py", "from niceeval_cli import define_eval\n\n@define_eval()\ndef one(t):\n    pass\n")
    monkeypatch.setitem(sys.modules, "ray", None)
    result = project.run("--executor", "ray")
    assert result.exit_code == 2
    assert 'pip install "niceeval-cli[ray]"' in result.stderr
    assert not (project.root / ".niceeval").exists()


def test_an_unknown_executor_is_a_usage_error(project):
    project.write("evals/one.py", "from niceeval_cli import define_eval\n\n@define_eval()\ndef one(t):\n    pass\n")
    result = project.run("--executor", "kubernetes")
    assert result.exit_code == 2 and "kubernetes" in result.stderr and "inprocess" in result.stderr


def test_a_ray_address_in_the_config_must_be_text(project):
    project.write("niceeval.toml", "[run]\nray_address = 6379\n")
    result = project.run()
    assert result.exit_code == 2 and "ray_address" in result.stderr
