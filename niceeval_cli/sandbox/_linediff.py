"""A line diff whose cost stays linear in the size of the files (pure).

`difflib.SequenceMatcher` is quadratic (and worse with many repeated lines: a 1 800-line edit
took 15 s) — an agent's file must never be able to stall a run. This is a patience diff: lines
are interned to integers, the common head and tail are matched, then lines that occur exactly
once on both sides are anchors (their longest increasing run), and the gaps between anchors are
diffed the same way. The total work is bounded by a budget proportional to the input; a gap
left when the budget is spent (or one without any unique line) is matched at its ends only and
reported as replaced. The result is always a correct edit script — at worst a coarser one.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence

__all__ = ["Opcode", "opcodes", "unified"]

Opcode = tuple[str, int, int, int, int]  # (tag, i1, i2, j1, j2) as difflib spells them

_SMALL = 64  # a gap without anchors this small (on both sides) gets an exact LCS
_BUDGET_FACTOR = 16


def _intern(a: Sequence[str], b: Sequence[str]) -> tuple[list[int], list[int]]:
    ids: dict[str, int] = {}
    return [ids.setdefault(x, len(ids)) for x in a], [ids.setdefault(x, len(ids)) for x in b]


def _anchors(a: list[int], alo: int, ahi: int, b: list[int], blo: int, bhi: int) -> list[tuple[int, int]]:
    """The longest increasing run of lines unique on both sides of the gap: (i, j) pairs."""
    count: dict[int, int] = {}
    where: dict[int, int] = {}
    for i in range(alo, ahi):
        count[a[i]] = count.get(a[i], 0) + 1
        where[a[i]] = i
    seen_b: dict[int, int] = {}
    pairs: list[tuple[int, int]] = []
    for j in range(blo, bhi):
        x = b[j]
        if count.get(x) == 1:
            seen_b[x] = seen_b.get(x, 0) + 1
    for j in range(blo, bhi):
        x = b[j]
        if seen_b.get(x) == 1:
            pairs.append((where[x], j))  # in b order; keep the longest run increasing in a
    if not pairs:
        return []
    tails: list[int] = []  # a-index of the smallest tail of each run length
    tail_at: list[int] = []  # index into pairs of that tail
    back: list[int] = [-1] * len(pairs)
    for k, (i, _j) in enumerate(pairs):
        n = bisect.bisect_left(tails, i)
        if n == len(tails):
            tails.append(i)
            tail_at.append(k)
        else:
            tails[n] = i
            tail_at[n] = k
        back[k] = tail_at[n - 1] if n else -1
    run: list[tuple[int, int]] = []
    k = tail_at[-1]
    while k != -1:
        run.append(pairs[k])
        k = back[k]
    run.reverse()
    return run


def _lcs(a: list[int], alo: int, ahi: int, b: list[int], blo: int, bhi: int) -> list[tuple[int, int]]:
    """An exact longest common subsequence of a small gap (bounded by _SMALL on both sides)."""
    n, m = ahi - alo, bhi - blo
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = table[i], table[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[alo + i] == b[blo + j] else max(below[j], row[j + 1])
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if a[alo + i] == b[blo + j]:
            out.append((alo + i, blo + j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def _matches(a: list[int], b: list[int], check: Callable[[], None] | None) -> list[tuple[int, int]]:
    """Matched (i, j) line pairs, increasing on both sides."""
    budget = _BUDGET_FACTOR * (len(a) + len(b)) + 10_000
    found: list[tuple[int, int]] = []
    stack = [(0, len(a), 0, len(b))]
    steps = 0
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        steps += 1
        if check is not None and steps % 256 == 0:
            check()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            found.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            found.append((ahi, bhi))
        if alo == ahi or blo == bhi:
            continue
        size = (ahi - alo) + (bhi - blo)
        if ahi - alo <= _SMALL and bhi - blo <= _SMALL and budget >= (ahi - alo) * (bhi - blo):
            budget -= (ahi - alo) * (bhi - blo)
            found.extend(_lcs(a, alo, ahi, b, blo, bhi))
            continue
        if budget < size:
            continue  # spent: the gap is reported as replaced
        budget -= size
        anchors = _anchors(a, alo, ahi, b, blo, bhi)
        i0, j0 = alo, blo
        for i, j in anchors:
            stack.append((i0, i, j0, j))
            found.append((i, j))
            i0, j0 = i + 1, j + 1
        if anchors:
            stack.append((i0, ahi, j0, bhi))
    found.sort()
    return found


def opcodes(a: Sequence[str], b: Sequence[str], check: Callable[[], None] | None = None) -> list[Opcode]:
    """difflib-style opcodes turning `a` into `b`; `check` is called now and then (it may raise to
    cancel a diff that is no longer wanted)."""
    ia, ib = _intern(a, b)
    out: list[Opcode] = []
    i = j = 0
    for mi, mj in [*_matches(ia, ib, check), (len(a), len(b))]:
        if i < mi and j < mj:
            out.append(("replace", i, mi, j, mj))
        elif i < mi:
            out.append(("delete", i, mi, j, j))
        elif j < mj:
            out.append(("insert", i, i, j, mj))
        if mi < len(a):
            if out and out[-1][0] == "equal":
                tag, i1, _i2, j1, _j2 = out[-1]
                out[-1] = (tag, i1, mi + 1, j1, mj + 1)
            else:
                out.append(("equal", mi, mi + 1, mj, mj + 1))
        i, j = mi + 1, mj + 1
    return out


def _range(start: int, length: int) -> str:
    beginning = start + 1 if length else start  # difflib's convention for empty ranges
    return f"{beginning}" if length == 1 else f"{beginning},{length}"


def _hunks(codes: list[Opcode], context: int) -> Iterator[list[Opcode]]:
    """Opcodes grouped into hunks with `context` equal lines around each change (as difflib)."""
    if not codes or (len(codes) == 1 and codes[0][0] == "equal"):
        return
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def unified(a: Sequence[str], b: Sequence[str], old: str, new: str, codes: list[Opcode],
            context: int = 3) -> Iterator[str]:
    """The unified diff of `a` → `b` (lines keep their own endings) from precomputed opcodes."""
    started = False
    for group in _hunks(codes, context):
        if not started:
            yield f"--- {old}\n"
            yield f"+++ {new}\n"
            started = True
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2] - first[1])} +{_range(first[3], last[4] - first[3])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    yield " " + line
                continue
            for line in a[i1:i2]:
                yield "-" + line
            for line in b[j1:j2]:
                yield "+" + line
