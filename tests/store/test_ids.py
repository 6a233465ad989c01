"""Ids sort by creation time; timestamps are ISO-8601 UTC."""

from __future__ import annotations

import re
import time
from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from niceeval_cli._ids import _encode, new_id, utc_now_iso

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _millis(ulid: str) -> int:
    value = 0
    for char in ulid[:10]:
        value = value * 32 + CROCKFORD.index(char)
    return value


def test_ids_are_26_crockford_base32_characters():
    ids = [new_id() for _ in range(100)]
    assert all(len(i) == 26 and set(i) <= set(CROCKFORD) for i in ids)
    assert len(set(ids)) == 100


def test_ids_made_one_after_another_sort_in_creation_order():
    ids = [new_id() for _ in range(5000)]  # many share a millisecond
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_the_id_starts_with_its_creation_millisecond():
    before = time.time_ns() // 1_000_000
    ulid = new_id()
    after = time.time_ns() // 1_000_000
    assert before <= _millis(ulid) <= after + 1  # +1: the same-millisecond counter may roll over


def test_utc_now_iso_is_sortable_utc_text():
    stamp = utc_now_iso()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    offset = parsed.utcoffset()
    assert offset is not None and offset.total_seconds() == 0
    assert utc_now_iso() >= stamp


@given(st.integers(min_value=0, max_value=(1 << 130) - 1))
def test_the_encoding_spells_each_five_bits_as_one_crockford_character(value: int) -> None:
    """`_encode` reads 10 bits per lookup; the id is still each 5 bits, most significant first."""
    spelled, rest = [], value
    for _ in range(26):
        spelled.append(CROCKFORD[rest & 31])
        rest >>= 5
    assert _encode(value) == "".join(reversed(spelled))
