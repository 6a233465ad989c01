"""Fingerprints are stored and compared across NiceEval versions: one changed byte would silently
stop reuse for every user. These literal digests pin what the planner hashes (and the plan digest
shards of one group share), however planning computes it."""

from __future__ import annotations

import hashlib

import pytest

from niceeval_cli._fingerprint import PartsTemplate, canonical_json, digest, fingerprint, fingerprint_parts
from niceeval_cli._shards import plan_digest, shard_of
from niceeval_cli.config import load_config
from niceeval_cli.discovery import discover
from niceeval_cli.runner import RunRequest
from niceeval_cli.runner._plan import plan

SHARED = {
    "eval_kind": "pass", "sources": {"evals/refunds.py": "ab" * 32, "app/é 50%.py": "cd" * 32},
    "eval_options": {"tags": ["b", "a"], "judge": {"model": "m", "timeout_ms": 5}},
    "experiment_id": "默认", "adapter_identity": {"name": "http", "version": None}, "model": "gpt",
    "options": {"url": "http://x", "nested": [1, 2.5, None, True, "é", "50%"]},
    "judge": {"model": "m", "api_key_env": "K"}, "judge_version": "prompt-1/scale-1",
    "sut": {"sut": {"app/agent.py": "ef" * 32}, "inputs": {"prompts/a.md": "01" * 32}, "version": "v3",
            "version_command": {"command": "git rev-parse HEAD", "stdout_sha256": "23" * 32}},
}
PINNED = [  # (eval id, ordinal, case JSON) → the fingerprint stored for it
    ("refunds", 0, None, "f7c7e2027d5089284e3297c73d9bec711281cd561624af45a6331b3e5d10c28c"),
    ("refunds", 3, None, "ae2e558899240484dc91465cca75064a77c4ac4ac7d54af1481abda793439213"),
    ('退款["q" \\ 1]%s', 0, '{"q":"a"}', "c6dbe9e39489450d3d80ecdfd5c99d1090ca79010b0f3759acfa081794663c90"),
    ("a\nb\u2028", 1, '"é"', "28a296d325d236af1b9f5730cf8a68ec261717086bcf46309346b1a2de9c788a"),
]


@pytest.mark.parametrize(("eval_id", "ordinal", "case_json", "pinned"), PINNED)
def test_the_fingerprint_of_known_parts_is_pinned(eval_id, ordinal, case_json, pinned):
    parts = fingerprint_parts(eval_id=eval_id, ordinal=ordinal, case_json=case_json, **SHARED)  # type: ignore[arg-type]
    template = PartsTemplate(fingerprint_parts(eval_id="other", ordinal=0, **SHARED))  # type: ignore[arg-type]
    rendered = template.render(eval_id=eval_id, ordinal=ordinal, case_json=case_json)
    assert rendered == canonical_json(parts)
    assert digest(rendered) == fingerprint(parts) == hashlib.sha256(rendered.encode()).hexdigest() == pinned


def test_a_sandbox_part_is_pinned():
    shared = fingerprint_parts(eval_id="x", ordinal=0, **SHARED)  # type: ignore[arg-type]
    shared["sandbox"] = {"kind": "docker", "image": "python:3.12", "prepare": ["pip install x"]}
    rendered = PartsTemplate(shared).render(eval_id="sandboxed", ordinal=2)
    assert rendered == canonical_json({**shared, "eval_id": "sandboxed", "ordinal": 2})
    assert digest(rendered) == "eb5705ad90478949b0fbb361a2dba86645df2873dbf07baf59a00e448b8dee99"


EVALS = """
from niceeval_cli import define_adapter, define_eval
from niceeval_cli.expect import equals


async def echo(ctx, message, **options):
    return message

adapter = define_adapter(name="echo", send=echo)


@define_eval(tags=["smoke"])
def plain(t):
    t.check(1, equals(1))


@define_eval(attempts=2)
def twice(t):
    t.check(1, equals(1))


@define_eval(cases=[{"id": "r-1", "q": "é"}, {"id": "r-2", "q": 2}])
def cased(t, case):
    t.check(1, equals(1))


async def sends(t):
    turn = await t.send("hello")
    t.check(turn.message, equals("hello"))

echoed = adapter.define_eval(test=sends, name="echoed")
"""


def test_a_planned_run_hashes_what_earlier_versions_stored(project, monkeypatch):
    project.write("niceeval.toml", '[experiments.local]\nmodel = "gpt-4o-mini"\n[experiments.local.options]\n'
                                   'speed = 2\nnested = {b = 1, a = [1, 2]}\n')
    project.write("evals/pins.py", EVALS)
    monkeypatch.chdir(project.root)
    config = load_config(project.root / "niceeval.toml")
    slots = plan(RunRequest(project=config, evals=discover(config.eval_roots, config.root)), None)
    found = {f"{s.eval.id}#{s.ordinal}": s.fingerprint for s in slots}
    assert found == {  # the file's text is part of each (source): editing EVALS changes them all
        "pins/cased[r-1]#0": "f25d4fcc7a116ad23ebcdde1bce208a80110d5857870277be842fb4ae3d8d387",
        "pins/cased[r-2]#0": "c8fb73da5ba3912a5d2169c87c20e00b72a48daec8ad1611de360de4d3aae84b",
        "pins/echoed#0": "fe0130d59eb9340d6261baca0e7f4356abf6afdd5b31b77b7ec55ac6add8cc7a",
        "pins/plain#0": "f50e4b654dfc0097221ae6a9119284f4718f29249e1ca4ed3e9af123cb1749df",
        "pins/twice#0": "eef2cc9d03111da5afa09a978d438d1ebedc672539a7fa0c1027a0a70495ab29",
        "pins/twice#1": "735fa1950c4e96ff866b3510ccba5f2f894baf57b236ed637540072fdb89c990",
    }
    for slot in slots:
        assert digest(slot.fingerprint_json) == slot.fingerprint


SUT_CONFIG = """
[experiments.agent]
adapter = "python"
inputs = ["prompts/*.md"]
version = "v3"
version_command = "echo v1"
[experiments.agent.options]
callable = "app.agent:reply"
"""


def test_the_system_under_tests_identity_is_pinned(project, monkeypatch):
    """The agent's files (with the modules they import), `inputs`, `version` and the output of
    `version_command` are hashed as they were when this pin was written."""
    project.write("niceeval.toml", SUT_CONFIG)
    project.write("app/__init__.py", "")
    project.write("app/agent.py", "from app.words import HELLO\n\ndef reply(message):\n    return HELLO\n")
    project.write("app/words.py", 'HELLO = "hi"\n')
    project.write("prompts/a.md", "Be brief.\n")
    project.write("evals/one.py", "from niceeval_cli import define_eval\n\n@define_eval()\ndef one(t):\n    pass\n")
    monkeypatch.chdir(project.root)
    config = load_config(project.root / "niceeval.toml")
    [slot] = plan(RunRequest(project=config, evals=discover(config.eval_roots, config.root)), None)
    # eval_id is the eval's identity, "one/one" (<module id>/<name>, authoring.md), not its shown id "one"
    assert slot.fingerprint == "81d19c89e44d63759cae61a56536b416832c49e30674f5f1a53e333dac189fdf"


SLOTS = [("default", "cases/case_00000", 0), ("exp/é", 'q"uote\\back', 3), ("exp/é", "lone \udcff surrogate", 0),
         ("a", "é\u2028\n\t\x00", 1), ("a!", "x", 10), ("a", "x", 9)]


def test_the_plan_digest_and_the_shards_are_pinned():
    assert plan_digest(SLOTS) == "734e33b014da729278b975c9a4aa4bcb46e4fdb92e57df34f23e917863f7a941"
    assert [shard_of(*slot, 7) for slot in SLOTS] == [6, 2, 6, 5, 7, 7]


def test_a_plan_digest_over_many_batches_hashes_the_same_bytes_as_one_text():
    """The digest hashes its keys a batch at a time; the bytes are one JSON key per line, sorted."""
    import hashlib
    import json

    slots = [(f"exp-{i % 3}", f"evals/é{i}\udc80" if i % 7 == 0 else f"evals/{i}", i % 4) for i in range(5000)]
    text = "".join(json.dumps([e, v, o], separators=(",", ":"), ensure_ascii=False) + "\n" for e, v, o in sorted(slots))
    assert plan_digest(reversed(slots)) == hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
