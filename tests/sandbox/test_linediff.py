"""The sandbox's line diff: always a correct edit script, difflib's text where the diff is the
same, and linear time on the inputs that made difflib take minutes."""

from __future__ import annotations

import difflib
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from niceeval_cli.sandbox._linediff import opcodes, unified

lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "}\n", "\n", "x = 1\n", "last"]), max_size=60)


def _apply(a: list[str], b: list[str]) -> list[str]:
    out: list[str] = []
    i = j = 0
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        out += b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))
    return out


@settings(max_examples=400, deadline=None)
@given(lines, lines)
def test_opcodes_are_always_a_correct_edit_script(a, b):
    assert _apply(a, b) == b


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=50, unique=True), st.data())
def test_unique_lines_with_small_edits_read_exactly_as_difflib(numbers, data):
    a = [f"line {n}\n" for n in numbers]
    b = list(a)
    if b:
        del b[data.draw(st.integers(0, len(b) - 1))]
    b.insert(data.draw(st.integers(0, len(b))), "inserted\n")
    assert "".join(unified(a, b, "a", "b", opcodes(a, b))) == "".join(difflib.unified_diff(a, b, "a", "b"))


def test_repeated_lines_rewritten_stay_fast():
    # difflib: 1 800 such lines took 15 s, 4 500 over 275 s.
    a = [f"x = {i % 10}\n" for i in range(100_000)]
    b = [f"x = {i % 7}\n" for i in range(100_000)]
    started = time.monotonic()
    assert _apply(a, b) == b
    reversed_b = list(reversed([f"l{i}\n" for i in range(100_000)]))
    assert _apply([f"l{i}\n" for i in range(100_000)], reversed_b) == reversed_b
    assert time.monotonic() - started < 10


def test_a_one_line_edit_in_a_large_file_is_one_small_hunk():
    a = [f"line {i}\n" for i in range(100_001)]
    b = list(a)
    b[50_000] = "changed\n"
    text = "".join(unified(a, b, "a/f", "b/f", opcodes(a, b)))
    assert text.count("@@") == 2 and "-line 50000\n+changed\n" in text
