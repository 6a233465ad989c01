"""The pairs `niceeval judge agreement` counts, counted in SQL (judge-trust.md §4).

Each judge assertion is grouped by its judge's identity: the model (from the attempt's frozen
judge settings in `fingerprint_parts`), the factory (`match_name`), the prompt / scale version
and the criterion text (from `match_config`). A pair is a reference decision against the judge's
— an effective human label (the latest per author, attempt and key), or with `--between` the
judge of another run — and the counting (tp, fp, fn, tn, exact matches) happens in one grouped
query, so 100 000 labelled results cost one pass over the rows, not 100 000 Python objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._judge_scale import CRITERION_FIELD
from .db import Db

#: The judge factories (`match_name`), in SQL.
_JUDGES = ", ".join(f"'{name}'" for name in CRITERION_FIELD)
#: The criterion text of a judge result, from its match_config.
_CRITERION = "CASE {r}.match_name " + " ".join(
    f"WHEN '{name}' THEN json_extract({{r}}.match_config, '$.{field}')" for name, field in CRITERION_FIELD.items()
) + " END"

# A label superseded by a later one of the same author on the same attempt and key does not count:
# one row per (attempt, key, author), the latest (SQLite takes a bare column's value from the row
# max() picks; `created_at` is fixed-width ISO text, so created_at || id orders by time, then id).
# It walks the labels_by_assertion index in order, with no sort and no per-row subquery.
_EFFECTIVE = """
SELECT attempt_id, assertion_key AS key, value, max(created_at || id) AS latest FROM labels
 WHERE assertion_key IS NOT NULL GROUP BY attempt_id, assertion_key, author
"""

def _identity(r: str, a: str, prefix: str = "") -> str:
    return (f"json_extract({a}.fingerprint_parts, '$.judge.model') AS {prefix}model, "
            f"{r}.match_name AS {prefix}factory, "
            f"json_extract({a}.fingerprint_parts, '$.judge_version') AS {prefix}version, "
            f"{_CRITERION.format(r=r)} AS {prefix}criterion")


# The pairs are a subquery SQLite must not flatten into the grouped query: flattened, each
# identity column is an expression over `fingerprint_parts` and `match_config`, which SQLite then
# carries whole through the GROUP BY sorter (to evaluate the identity once more per group), so
# 100 000 pairs sorted ~700 bytes each, not the ~150 of their identity and decision. A LIMIT keeps
# the subquery a co-routine: each pair's identity is extracted once and only it is sorted.
_UNFLATTENED = "LIMIT -1"

# Decisions: thresholded → value ≥ threshold; unthresholded → ≥ 0.5 on both sides.
_COUNTS = """
SUM(judged IS NOT NULL AND ref >= ref_cut AND judged >= cut) AS tp,
SUM(judged IS NOT NULL AND ref < ref_cut AND judged >= cut) AS fp,
SUM(judged IS NOT NULL AND ref >= ref_cut AND judged < cut) AS fn,
SUM(judged IS NOT NULL AND ref < ref_cut AND judged < cut) AS tn,
SUM(judged IS NULL) AS unmeasured,
SUM(judged IS NOT NULL AND exact_scale) AS exact_n,
SUM(judged IS NOT NULL AND exact_scale AND abs(judged - ref) < 1e-9) AS exact_equal
"""


@dataclass(frozen=True, slots=True)
class JudgeIdentity:
    """Who judged: model, factory, prompt / scale version and the criterion text."""

    model: str | None
    factory: str
    version: str | None
    criterion: str


@dataclass(frozen=True, slots=True)
class PairCounts:
    """The counted pairs of one identity (with `--between`, of one pair of identities)."""

    judge: JudgeIdentity
    reference: JudgeIdentity | None  # None: people (labels)
    tp: int
    fp: int
    fn: int
    tn: int
    unmeasured: int  # pairs whose judge (or reference judge) gave no measurement
    exact_n: int  # unthresholded pairs with a measurement
    exact_equal: int  # ... of which had the very same value on the scale


def _scope(alias: str, run_ids: Sequence[str] | None, params: list[Any], *, filter_only: bool = False) -> str:
    """Only attempts of `run_ids`; `filter_only`: a test on attempts found otherwise (the unary `+`
    keeps SQLite from walking the run's attempts through it, as it would the driving side's)."""
    if run_ids is None:
        return ""
    params.extend(run_ids)
    marks = ", ".join("?" * len(run_ids))
    column = f"+{alias}.id" if filter_only else f"{alias}.id"
    return f" AND {column} IN (SELECT attempt_id FROM run_slots WHERE run_id IN ({marks}) AND attempt_id IS NOT NULL)"


def label_pairs(db: Db, run_ids: Sequence[str] | None = None) -> list[PairCounts]:
    """Judge against effective human labels, per judge identity (only identities with a label).

    Each pair becomes one cell number, 2 × human decision + judge decision (NULL without a
    measurement), so the grouped sums read one small integer a row."""
    params: list[Any] = []
    sql = f"""
WITH eff AS ({_EFFECTIVE})
SELECT model, factory, version, criterion,
       SUM(cell = 3) AS tp, SUM(cell = 1) AS fp, SUM(cell = 2) AS fn, SUM(cell = 0) AS tn,
       SUM(cell IS NULL) AS unmeasured, SUM(exact IS NOT NULL) AS exact_n, SUM(exact) AS exact_equal
  FROM (
  SELECT {_identity('r', 'a')},
         (eff.value >= COALESCE(r.threshold, 0.5)) * 2 + (r.measurement >= COALESCE(r.threshold, 0.5)) AS cell,
         CASE WHEN r.threshold IS NULL AND r.measurement IS NOT NULL
              THEN abs(r.measurement - eff.value) < 1e-9 END AS exact
    FROM eff JOIN assertion_results r ON r.attempt_id = eff.attempt_id AND r.key = eff.key
    JOIN attempts a ON a.id = r.attempt_id
   WHERE r.match_name IN ({_JUDGES}){_scope('a', run_ids, params)} {_UNFLATTENED})
 GROUP BY model, factory, version, criterion ORDER BY factory, model, version, criterion
"""
    return [PairCounts(JudgeIdentity(r["model"], r["factory"], r["version"], r["criterion"] or ""), None,
                       *_counts(r)) for r in db.rows("Counting judge agreement", sql, params)]


def between_pairs(db: Db, reference_runs: Sequence[str], judge_runs: Sequence[str]) -> list[PairCounts]:
    """Judge against judge: results of `judge_runs` paired with those of `reference_runs` by
    original attempt (`regraded_from` when the store has it, else the attempt itself) and key."""
    params: list[Any] = []
    if _has_column(db, "attempts", "regraded_from"):
        # An attempt's original is what it regraded, else itself. Equal originals, said as `ab`'s
        # regraded_from or id being `aa`'s original: each side an index lookup (attempts_by_regraded_from,
        # the primary key), not every attempt of RUN_B compared with every attempt of RUN_A.
        paired = ("(ab.regraded_from = COALESCE(aa.regraded_from, aa.id) OR ab.id = COALESCE(aa.regraded_from, aa.id)) "
                  "AND COALESCE(ab.regraded_from, ab.id) = COALESCE(aa.regraded_from, aa.id)")
    else:
        paired = "ab.id = aa.id"
    sql = f"""
WITH pairs AS (
  SELECT {_identity('rb', 'ab')}, {_identity('ra', 'aa', 'ref_')},
         rb.measurement AS judged, ra.measurement AS ref_measured, COALESCE(ra.measurement, -1) AS ref,
         COALESCE(rb.threshold, 0.5) AS cut, COALESCE(ra.threshold, 0.5) AS ref_cut,
         (ra.threshold IS NULL AND rb.threshold IS NULL) AS exact_scale
    FROM attempts aa JOIN assertion_results ra ON ra.attempt_id = aa.id
    JOIN attempts ab ON {paired}
    JOIN assertion_results rb ON rb.attempt_id = ab.id AND rb.key = ra.key
   WHERE ra.match_name IN ({_JUDGES}) AND rb.match_name IN ({_JUDGES}){_scope('aa', reference_runs, params)}
         {_scope('ab', judge_runs, params, filter_only=True)} {_UNFLATTENED}
)
SELECT model, factory, version, criterion, ref_model, ref_factory, ref_version, ref_criterion,
       {_COUNTS.replace('judged IS NOT NULL', '(judged IS NOT NULL AND ref_measured IS NOT NULL)')
                .replace('SUM(judged IS NULL)', 'SUM(judged IS NULL OR ref_measured IS NULL)')}
  FROM pairs GROUP BY model, factory, version, criterion, ref_model, ref_factory, ref_version, ref_criterion
 ORDER BY factory, model, version, criterion, ref_model, ref_version
"""
    return [PairCounts(JudgeIdentity(r["model"], r["factory"], r["version"], r["criterion"] or ""),
                       JudgeIdentity(r["ref_model"], r["ref_factory"], r["ref_version"], r["ref_criterion"] or ""),
                       *_counts(r)) for r in db.rows("Counting judge agreement between runs", sql, params)]


def _counts(row: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(row[k] or 0) for k in ("tp", "fp", "fn", "tn", "unmeasured", "exact_n", "exact_equal"))


def _has_column(db: Db, table: str, column: str) -> bool:
    return column in db.columns(table)


__all__ = ["JudgeIdentity", "PairCounts", "between_pairs", "label_pairs"]
