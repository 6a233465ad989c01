"""`--executor ray` without an address: the driver starts a single-node Ray (`ray.init()`), runs
the attempts there with the same results as in-process, and leaves no Ray process behind; without
Ray installed it is a usage error naming the install command; `[run]` in niceeval.toml selects it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.components import need_ray
from tests.support.project import Project
from tests.support.ray_cluster import ray_env
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


def _rows(root: Path, env: dict[str, str], target: str, store: str) -> list[dict]:
    """The stored rows, read by `niceeval query` in process (reading a store is no Ray's business)."""
    return Project(root, in_process=True).query(target, "--store", store)


@pytest.mark.slow
def test_a_local_single_node_ray_gives_in_process_results_and_stops(tmp_path):
    need_ray()
    (tmp_path / "niceeval.toml").write_text(TOML + '\n[run]\nexecutor = "ray"\n')
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "many.py").write_text(eval_source())
    # Ray puts its session (and every process's --session_dir) under RAY_TMPDIR: a short folder
    # of this test's own (Ray's socket paths have a length limit).
    own = tempfile.mkdtemp(prefix="nrl", dir="/tmp")
    env = {**ray_env(), "RAY_TMPDIR": own}
    ray = subprocess.run([sys.executable, "-m", "niceeval_cli", "run", "--store", "ray.db"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    # the reference: an in-process run, nothing about its process compared (run in process)
    local = Project(tmp_path, in_process=True).run("--store", "local.db", "--executor", "inprocess")
    assert ray.returncode == local.returncode == 1, ray.stderr
    assert _rows(tmp_path, env, "runs", "ray.db")[0]["executor"] == "ray"
    for target in ("attempts", "assertions"):
        ray_rows, local_rows = (_rows(tmp_path, env, target, store) for store in ("ray.db", "local.db"))
        assert comparable(ray_rows) == comparable(local_rows)
    assert list(Path(own).glob("ray/session_*")), "Ray did not use RAY_TMPDIR: the check below would see nothing"
    deadline = time.monotonic() + 20
    while _raylets(own) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _raylets(own), "the local Ray the run started is still running"
    shutil.rmtree(own, ignore_errors=True)


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
