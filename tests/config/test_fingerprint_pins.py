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
    "eval_kind": "pass", "source_sha256": "ab" * 32,
    "eval_options": {"tags": ["b", "a"], "judge": {"model": "m", "timeout_ms": 5}},
    "experiment_id": "默认", "adapter_identity": {"name": "http", "version": None}, "model": "gpt",
    "options": {"url": "http://x", "nested": [1, 2.5, None, True, "é", "50%"]},
    "judge": {"model": "m", "api_key_env": "K"}, "judge_version": "prompt-1/scale-1",
}
PINNED = [  # (eval id, ordinal, case JSON) → the fingerprint stored for it
    ("refunds", 0, None, "acf17cd6124a19051c5976ca07a52190e2a339223e19c1e7cebeb458f90dceaf"),
    ("refunds", 3, None, "d848724fbcb8b906a5af4e8ab49d9e76264bf64637aed142d1bcbac7e6d82aeb"),
    ('退款["q" \\ 1]%s', 0, '{"q":"a"}', "a231e16226719123b2f704c243944b90040458e51653570da22bc3f739b496b6"),
    ("a\nb\u2028", 1, '"é"', "5213047a20a2fbba5dab3b382352b86175e30e1353455f72ff68ae86b5bd7e31"),
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
    assert digest(rendered) == "a9326455da9b2e49d83935387a9d6b87fe39eb22f67a5294f05d4ecfaf5cad72"


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
    assert found == {  # the file's text is part of each (source_sha256): editing EVALS changes them all
        "pins/cased[r-1]#0": "3e957776a14b50a2e357dd1b3867fe0f3410868d885373a4bf1f946d07898b82",
        "pins/cased[r-2]#0": "3a13f4c02669c11ed918972db1f0b446bdcaa6b3a6900b8a9938de666780a3ff",
        "pins/echoed#0": "d2a09225b16b7870fe12c27559ab57b404043cb8db3e88322eb98ee2d9b84fca",
        "pins/plain#0": "11513bbcbf7abe65cd72e0d697bd41efc24d2d1046e72b3ebba4ed5c3490cf45",
        "pins/twice#0": "9807f3ae69fe65bf53ac4e84bb7686c3daae1efc09e7a9aed241cfe2c3a40884",
        "pins/twice#1": "6a6c3ded7964830fd0fa7d13a525d228e9247c5569e1da029fd2efae62d6b425",
    }
    for slot in slots:
        assert digest(slot.fingerprint_json) == slot.fingerprint


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
