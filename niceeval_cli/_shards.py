"""Shards of a plan (scale.md): a stable partition of slots, and the plan's digest (pure; the
store registers `shard_of` as an SQL function, the runner partitions with it).

The hash is sha256 over the UTF-8 canonical JSON of `[experiment_id, eval_id, ordinal]` (sorted
keys, no whitespace), read as a big-endian integer: independent of PYTHONHASHSEED, the machine
and the Python version. Slot `s` belongs to shard `1 + H(s) mod N`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ._errors import UsageError

__all__ = ["ShardSpec", "ShardSyntaxError", "parse_shard", "plan_digest", "shard_of", "slot_hash"]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class ShardSpec:
    index: int  # 1-based, as on the command line
    count: int


class ShardSyntaxError(UsageError):
    """`--shard` is not K/N with 1 ≤ K ≤ N (exit 2)."""


def parse_shard(text: str) -> ShardSpec:
    match = _SHARD.match(text)
    if not match:
        raise ShardSyntaxError(f"--shard {text!r}: expected K/N, e.g. --shard 2/4 (shard 2 of 4)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ShardSyntaxError(f"--shard {text!r}: K must be between 1 and N (N ≥ 1), e.g. --shard 1/{max(count, 1)}")
    return ShardSpec(index, count)


#: A slot's key as canonical JSON, `[experiment_id, eval_id, ordinal]`: no whitespace, not
#: ASCII-escaped (the encoder made once: `json.dumps` with options makes one a call).
_KEY_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _key(experiment_id: str, eval_id: str, ordinal: int) -> bytes:
    """The hashed key: its JSON as UTF-8 (lone surrogates kept, as json writes them)."""
    return _KEY_JSON([experiment_id, eval_id, ordinal]).encode("utf-8", "surrogatepass")


def slot_hash(experiment_id: str, eval_id: str, ordinal: int) -> int:
    return int.from_bytes(hashlib.sha256(_key(experiment_id, eval_id, ordinal)).digest(), "big")


def shard_of(experiment_id: str, eval_id: str, ordinal: int, count: int) -> int:
    """The 1-based shard a slot belongs to among `count` shards."""
    return 1 + slot_hash(experiment_id, eval_id, ordinal) % count


def plan_digest(slots: Iterable[tuple[str, str, int]]) -> str:
    """sha256 over the sorted full slot list, one key's JSON a line: shards of one group must share it."""
    digest = hashlib.sha256()
    for experiment_id, eval_id, ordinal in sorted(slots):
        digest.update(_key(experiment_id, eval_id, ordinal) + b"\n")
    return digest.hexdigest()


def sql_shard_of(experiment_id: object, eval_id: object, ordinal: object, count: object) -> int | None:
    """`niceeval_shard_of(experiment_id, eval_id, ordinal, shard_count)` as a SQLite function."""
    if not (isinstance(experiment_id, str) and isinstance(eval_id, str) and isinstance(ordinal, int)
            and isinstance(count, int) and count >= 1):
        return None
    return shard_of(experiment_id, eval_id, ordinal, count)
