"""The suite's two-node Ray clusters (tests/support/ray_cluster.py) run arbitrary code for whoever
reaches them, and on a machine with an outward address they listen beyond loopback (a second node
cannot take Ray's one-machine switch): every port they open there must refuse a caller without
the cluster's token. Seen in a network namespace where the machine has an outward address, as a
developer's laptop has (CI's own namespace has loopback alone)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.components import OUTWARD_ADDRESS, need_ray, outward_namespace
from tests.support.ray_cluster import REPO, is_loopback, ray_env

pytestmark = pytest.mark.slow

#: The processes of a test cluster that may listen beyond loopback, each refusing a caller
#: without the token: the GCS and the raylets (Ray's gRPC servers check it on every call), the
#: runtime-env agents (HTTP, checked below), the workers and the driver (Ray's gRPC servers too).
GUARDED = ("gcs_server", "raylet", "ray::RuntimeEnv", "ray::Held", "ray::IDLE", "python")


def test_a_test_cluster_answers_beyond_loopback_only_to_a_caller_with_its_token():
    need_ray()
    argv = outward_namespace([sys.executable, "-m", "tests.support.ray_exposure"])
    done = subprocess.run(argv, cwd=REPO, env=ray_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["ready"], "the driver with the token could not run its workers on the cluster"
    wide = [(name, address, port) for name, address, port in seen["listening"] if not is_loopback(address)]
    names = {name for name, _, _ in wide}
    # what makes this check able to fail: the cluster does listen beyond loopback here
    assert {"gcs_server", "raylet"} <= names, f"the cluster was not seen listening beyond loopback: {wide}"
    assert OUTWARD_ADDRESS in {address for _, address, _ in wide} or any(
        address in ("0.0.0.0", "::") for _, address, _ in wide)
    unknown = sorted(item for item in wide if not item[0].startswith(GUARDED))
    assert not unknown, f"a test cluster listens beyond loopback where no token is checked: {unknown}"
    agents = seen["agents_without_token"]
    assert agents and set(agents.values()) == {401}, agents
    stranger = seen["stranger"]
    assert stranger["returncode"] != 0 and "joined" not in stranger["stdout"], stranger
    assert "InvalidAuthToken" in stranger["stderr"], stranger["stderr"]
