"""examples/trust: run, regrade and label offline against the example's own fake judge.

The fake judge (`examples/trust/_fake_judge.py`) is started as the reader starts it, a real
process on a loopback port; the example is copied and its `base_url` pointed at that port; every
command is the one the example's README tells the reader to type, run through the CLI in process
(exit codes, output and the stored rows are what is checked; nothing here is about a process)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.loopback import free_port
from tests.support.project import Project

REPO = Path(__file__).resolve().parents[2]
ENV = {"FAKE_JUDGE_KEY": "any-key-will-do"}


@pytest.fixture
def trust(tmp_path: Path) -> Iterator[Project]:
    root = tmp_path / "trust"
    shutil.copytree(REPO / "examples" / "trust", root, ignore=shutil.ignore_patterns(".niceeval", "__pycache__"))
    port = free_port()
    toml = root / "niceeval.toml"
    toml.write_text(toml.read_text().replace("127.0.0.1:8765", f"127.0.0.1:{port}"))
    judge = subprocess.Popen([sys.executable, "_fake_judge.py", str(port)], cwd=root, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert judge.stdout is not None
        assert "fake judge on" in judge.stdout.readline()
        yield Project(root, in_process=True)
    finally:
        judge.terminate()
        judge.wait(timeout=10)


@pytest.mark.slow
def test_run_regrade_label_and_agreement_offline(trust: Project) -> None:
    done = trust.run(env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr  # the lenient judge passes every answer
    original = trust.sql("SELECT id FROM runs")[0]["id"]

    dry = trust.cli("regrade", "--judge-model", "strict-judge", "--dry", env=ENV)
    assert dry.returncode == 0 and "model lenient-judge → strict-judge" in dry.stdout, dry.stdout + dry.stderr

    done = trust.cli("regrade", "--judge-model", "strict-judge", env=ENV)
    assert done.returncode == 1, done.stdout + done.stderr  # the terse answers fail the stricter judge
    regrade = trust.sql("SELECT id FROM runs WHERE kind = 'regrade'")[0]["id"]
    states = {r["eval_id"]: r["state"] for r in trust.sql("SELECT eval_id, state FROM attempts WHERE run_id = ?",
                                                          [regrade])}
    assert states == {"answers/refund_window": "passed", "answers/opening_hours": "passed",
                      "answers/shipping_time": "failed", "answers/warranty": "failed"}

    compared = trust.cli("compare", original, regrade, env=ENV)
    assert compared.returncode == 0 and "2 regressed" in compared.stdout, compared.stdout

    for eval_id, value in (("answers/shipping_time", "0"), ("answers/warranty", "0"),
                           ("answers/refund_window", "1"), ("answers/opening_hours", "1")):
        (attempt,) = trust.sql("SELECT id FROM attempts WHERE run_id = ? AND eval_id = ?", [original, eval_id])
        labelled = trust.cli("label", f"@{attempt['id']}", "full answer", "--value", value, "--author", "ann",
                             env=ENV)
        assert labelled.returncode == 0, labelled.stdout + labelled.stderr

    agreement = json.loads(trust.cli("judge", "agreement", "--format", "json", env=ENV).stdout)
    (lenient,) = [row for row in agreement if row["model"] == "lenient-judge"]
    assert (lenient["labels"], lenient["accuracy"], lenient["fp"]) == (4, 0.5, 2)  # it passed two wrong answers

    between = json.loads(trust.cli("judge", "agreement", "--between", original, regrade, "--format", "json",
                                   env=ENV).stdout)
    assert [(r["model"], r["reference_model"], r["pairs"]) for r in between] == [("strict-judge", "lenient-judge", 4)]


def test_the_fake_judge_answers_by_model() -> None:
    spec = importlib.util.spec_from_file_location("trust_fake_judge", REPO / "examples" / "trust" / "_fake_judge.py")
    assert spec is not None and spec.loader is not None
    fake_judge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake_judge)  # loaded by path: no sys.path edit, no module cache entry
    decide = fake_judge.decide
    terse, full = "<output>\nYes.\n</output>", "<output>\nYes, one year on parts and labour from delivery.\n</output>"
    assert decide("lenient-judge", terse)[0] == decide("lenient-judge", full)[0] == "Y"
    assert (decide("strict-judge", terse)[0], decide("strict-judge", full)[0]) == ("N", "Y")


