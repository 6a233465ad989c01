"""Fixtures of the outside-in acceptance checks (the driver is tests/support/project.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.project import Project
from tests.support.ray_cluster import Cluster, SharedCluster


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return Project(tmp_path / "proj")


#: The two-node Ray cluster of the acceptance checks on Ray (issue 22's lost workers, issue 23's
#: lost sandboxes, issue 24's eval import): one cluster for all of them, instead of one per module
#: (a start costs ~9 s of CPU), since their tests share one xdist group (below).
RAY = SharedCluster(nodes=2)
RAY_GROUP = "tests/acceptance::ray_cluster"


@pytest.fixture
def ray_cluster() -> Cluster:
    """A real two-node local Ray cluster (tests/support/ray_cluster.py), shared by the tests that
    ask for it: started by the first, stopped after the last of a row (`pytest_runtest_teardown`)."""
    return RAY.get()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the shared Ray cluster once the next test does not need it."""
    if nextitem is None or "ray_cluster" not in getattr(nextitem, "fixturenames", ()):
        RAY.stop()


def pytest_sessionfinish(session: pytest.Session) -> None:
    RAY.stop()


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that drives `proj` starts real `niceeval` processes: seconds each, so it is `slow`
    (still run by default; `-m 'not slow'` leaves it out). The tests on the shared Ray cluster
    are one xdist group (run on one worker, one after another: the cluster starts once)."""
    here = Path(__file__).parent
    for item in items:
        if here not in item.path.parents:
            continue
        names = getattr(item, "fixturenames", ())
        if "proj" in names or "ray_cluster" in names:
            item.add_marker(pytest.mark.slow)
        if "ray_cluster" in names:
            item.add_marker(pytest.mark.xdist_group(RAY_GROUP))
