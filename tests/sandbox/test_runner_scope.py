"""The runner's sandbox scope (runner/_sandboxing.py): one attempt's sandbox opened inside the
attempt, closed after the verdict — kept per `--keep-sandbox` — and the fingerprint views."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from niceeval_cli._sandbox_spec import DOCKER_PIDS_LIMIT
from niceeval_cli.runner._sandboxing import AttemptScope, PrepareFailed, SandboxFingerprints
from niceeval_cli.sandbox import docker_sandbox, local_sandbox


async def test_no_sandbox_means_nothing_is_created_or_stored():
    scope = AttemptScope(None, keep="all", label="x", about={})
    assert await scope.open() is None
    assert await scope.close("failed") is None


@pytest.mark.parametrize(("keep", "state", "kept"), [
    (None, "failed", False), ("failed", "passed", False), ("failed", "failed", True),
    ("failed", "errored", True), ("all", "passed", True),
])
async def test_close_keeps_per_keep_sandbox_and_records_where(template, own_tempdir, keep, state, kept):
    scope = AttemptScope(local_sandbox(template=str(template)).resolved(), keep=keep, label="run/1 eval:x",
                         about={"eval": "e/x"})
    box = await scope.open()
    assert box is not None
    record = json.loads(await scope.close(state) or "{}")
    assert record["kind"] == "local"
    assert ("kept" in record) is kept
    assert Path(box.workspace.workdir).is_dir() is kept


async def test_a_failing_prepare_raises_and_close_still_removes_it(template, own_tempdir):
    scope = AttemptScope(local_sandbox(template=str(template), prepare=["exit 9"]).resolved(), keep=None,
                         label="p", about={})
    with pytest.raises(PrepareFailed, match="exited with code 9"):
        await scope.open()
    assert json.loads(await scope.close("errored") or "{}") == {"kind": "local"}
    assert list(own_tempdir.glob("niceeval-sandbox-*")) == []


def test_fingerprint_views_change_with_the_template_content_and_are_computed_once_per_spec(template):
    spec = local_sandbox(template=str(template)).resolved()
    views = SandboxFingerprints()
    first = views(spec)
    assert first is views(spec)
    (template / "README.md").write_text("changed\n")
    assert SandboxFingerprints()(spec) != first
    assert views(None) is None


def test_the_fingerprint_holds_the_image_id_not_only_its_name(docker_image):
    view = SandboxFingerprints()(docker_sandbox(image=docker_image, cpus=1).resolved())
    assert view is not None
    assert view["image"].startswith("sha256:") and view["cpus"] == 1 and view["network"] == "none"


def test_only_a_sandbox_with_a_user_changed_fingerprint_with_who_owns_the_evals_writes(docker_image):
    """Since the eval's writes are the sandbox user's (they were root's), a result sealed before
    with `user=` may have failed for it: those re-execute once; every other sandbox's results keep
    their fingerprint and stay reusable."""
    with_user = SandboxFingerprints()(docker_sandbox(image=docker_image, user="1000").resolved())
    without = SandboxFingerprints()(docker_sandbox(image=docker_image).resolved())
    assert with_user is not None and without is not None
    assert with_user["writes_owned_by"] == "user, written as the user"
    assert "writes_owned_by" not in without
    assert set(without) == {"kind", "image", "template", "prepare", "network", "cpus", "memory", "user", "workdir",
                            "pids_limit"}


def test_a_docker_sandboxs_process_limit_is_in_its_fingerprint(docker_image, template):
    """The containers' process limit is one the agent meets, as `cpus` and `memory` are: results
    sealed before it existed re-execute once; a local sandbox has no such limit."""
    view = SandboxFingerprints()(docker_sandbox(image=docker_image).resolved())
    assert view is not None and view["pids_limit"] == DOCKER_PIDS_LIMIT
    local = SandboxFingerprints()(local_sandbox(template=str(template)).resolved())
    assert local is not None and "pids_limit" not in local
