import os
import subprocess
import sys

import pytest

from niceeval_cli.runner._shard import ShardSyntaxError, parse_shard, plan_digest, shard_of

SLOTS = [(f"exp{e}", f"suite/eval-{i}", o) for e in range(3) for i in range(200) for o in range(2)]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_shards_are_disjoint_and_their_union_is_the_plan(count):
    parts = {k: {s for s in SLOTS if shard_of(*s, count) == k} for k in range(1, count + 1)}
    assert set().union(*parts.values()) == set(SLOTS)
    assert sum(len(p) for p in parts.values()) == len(SLOTS)


def test_shards_are_roughly_balanced():
    sizes = [sum(shard_of(*s, 4) == k for s in SLOTS) for k in range(1, 5)]
    assert min(sizes) > len(SLOTS) / 4 * 0.8


def test_shard_assignment_is_independent_of_the_hash_seed():
    code = ("from niceeval_cli.runner._shard import shard_of;"
            "print([shard_of('e', f'x{i}', 0, 5) for i in range(50)])")
    outs = {
        subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed},
                       capture_output=True, text=True, check=True).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outs) == 1
    assert outs.pop().strip() == str([shard_of("e", f"x{i}", 0, 5) for i in range(50)])


def test_known_values_pin_the_documented_hash():
    # sha256('["e","x",0]') read big-endian, mod 4, plus 1 — documented in docs/scale.md.
    import hashlib
    import json

    h = int.from_bytes(hashlib.sha256(json.dumps(["e", "x", 0], separators=(",", ":")).encode()).digest(), "big")
    assert shard_of("e", "x", 0, 4) == 1 + h % 4


@pytest.mark.parametrize("eval_id", ["evals/a.py::x", 'q"uote\\back', "é\u2028\n\t\x00", "lone \udcff surrogate"])
def test_the_documented_hash_holds_for_any_text(eval_id):
    import hashlib
    import json

    key = json.dumps(["exp/é", eval_id, 3], ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    assert shard_of("exp/é", eval_id, 3, 7) == 1 + int.from_bytes(hashlib.sha256(key).digest(), "big") % 7
    assert plan_digest([("exp/é", eval_id, 3)]) == hashlib.sha256(key + b"\n").hexdigest()


def test_plan_digest_ignores_order_and_sees_any_change():
    assert plan_digest(SLOTS) == plan_digest(reversed(SLOTS))
    assert plan_digest(SLOTS) != plan_digest(SLOTS[:-1])


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "2", "1/-1", ""])
def test_bad_shard_text_is_a_usage_error_naming_the_flag(text):
    with pytest.raises(ShardSyntaxError, match="--shard"):
        parse_shard(text)


def test_shard_text_parses():
    spec = parse_shard("2/4")
    assert (spec.index, spec.count) == (2, 4)
